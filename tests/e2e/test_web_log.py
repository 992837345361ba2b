"""The room log of the web page says the same whether the page saw the events live or came
in the middle of them: after a reload (the seat taken back, the rest of the window caught
up from the room's log) and as a watcher who arrived with a snapshot (issue 33)."""

from __future__ import annotations

import re

from tests.support.servers import ServerProcess

from .webpage import Browser, Player, new_player


def test_a_qwinto_number_written_is_logged_after_a_reload_and_to_a_late_watcher(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    ada = new_player(players, browser, server, "Ada")
    room = ada.create("qwinto", seats=2, bots=1)
    page = ada.page
    assert ada.wait_move(-1)  # seat 0 chooses the dice first
    seen = ada.legal_count()
    page.click("button[data-action='roll']")
    assert ada.wait_move(seen)  # the answer window: where to write the sum
    rolled = next(line for line in ada.log() if line.startswith("Dice:"))
    total = re.fullmatch(r"Dice: .* = (\d+)", rolled)
    assert total is not None, rolled

    # the page goes away and comes back in the middle of the window; a watcher comes in
    page.reload()
    page.wait_for_selector("#room[data-mode='seat']")
    watcher = new_player(players, browser, server, "Watcher")
    watcher.go(room)
    watcher.page.wait_for_selector("#room[data-mode='watch'] .qwinto-sheet")
    assert watcher.log()[0] == "You are watching the room."

    assert ada.wait_move(-1)
    page.locator(".seat-panel.mine button.box.legal").first.click()
    ada.wait_log("You write")
    watcher.wait_log("Ada writes")
    written = re.compile(rf"(You write|Ada writes) {total[1]} in (red|yellow|blue) box \d+")
    assert any(written.fullmatch(line) for line in ada.log()), ada.log()
    assert any(written.fullmatch(line) for line in watcher.log()), watcher.log()
    # the bot answered the same window: its line has the number too (or it passed)
    bot = re.compile(rf"strong-bot-1 (writes {total[1]} in \w+ box \d+|passes)")
    for log in (ada.log(), watcher.log()):
        assert any(bot.fullmatch(line) for line in log), log
