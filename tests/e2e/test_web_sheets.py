"""The web client shows the games as their paper sheets and rules do, in a real headless
Chromium: the Qwixx lock box is a padlock and the boxes a mark skipped are closed (on
screen and for screen readers), each time-out is logged once, the lobby offers the
publisher's rules (the `official` presets) in one click and the strong house bot as the
default opponent, and the demo rooms (`--demo-rooms`) seat the strong bots.

(The Yamb column labels are checked with the Yamb turn in test_web.py, and every test of
both modules checks that no log line speaks the protocol's words: webpage.WIRE_WORDS.)
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.servers import ServerProcess, running_server

from .webpage import Browser, Player, new_player

NUMBERS = {
    "red": list(range(2, 13)),
    "yellow": list(range(2, 13)),
    "green": list(range(12, 1, -1)),
    "blue": list(range(12, 1, -1)),
}


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with running_server() as s:
        yield s


def test_qwixx_lock_is_a_padlock_and_skipped_boxes_are_closed(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    bo = new_player(players, browser, server, "Bo")
    bo.create("qwixx", seats=2, bots=1, turn_window=600)
    page = bo.page
    mine = page.locator(".seat-panel.mine")
    assert bo.wait_move(-1)
    # the lock box after each row: a drawn padlock, labelled for screen readers
    locks = mine.locator(".lock")
    assert locks.count() == 4
    assert mine.locator(".lock svg.lock-icon").count() == 4
    labels = [locks.nth(i).get_attribute("aria-label") for i in range(4)]
    assert labels == [f"{row.title()} lock: open" for row in NUMBERS]
    assert all(locks.nth(i).get_attribute("role") == "img" for i in range(4))

    # mark a box with open boxes to its left (a white sum of 2 or 12 has none: pass on)
    seen = -1
    for _ in range(20):
        assert bo.wait_move(seen)
        seen = bo.legal_count()
        boxes = mine.locator("button.box.legal")
        choice = None
        for i in range(boxes.count()):
            row = boxes.nth(i).get_attribute("data-row") or ""
            number = int(boxes.nth(i).get_attribute("data-number") or 0)
            if NUMBERS[row].index(number) > 0:
                choice = (row, number)
                break
        if choice is None:
            page.click("button[data-action='pass']")
            continue
        row, number = choice
        page.click(f".seat-panel.mine button.box.legal[data-row='{row}'][data-number='{number}']")
        break
    else:
        pytest.fail("no mark with a box to its left in 20 windows")
    bo.wait_legal(seen)
    band = mine.locator(f".qwixx-row.c-{row}")
    band.locator(".box.marked").first.wait_for()
    skipped = NUMBERS[row][: NUMBERS[row].index(number)]
    closed = band.locator(".box.skipped")
    assert closed.count() == len(skipped)
    for i, n in enumerate(skipped):
        assert closed.nth(i).get_attribute("aria-label") == f"{row} {n}: closed (skipped)"
        # crossed out on screen: struck through, and not a button
        assert closed.nth(i).locator("s").inner_text() == str(n)
    assert band.locator("button.box.skipped").count() == 0
    assert bo.room("errors") == "0"


def test_each_time_out_is_logged_once(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    """A seat that lets its window run out: the server says so twice (a `timeout` event,
    then `window_closed` with `default: true`); the log says it once."""
    ada = new_player(players, browser, server, "Ada")
    ada.create("qwinto", seats=2, bots=1, turn_window=2)
    # seat 1 chooses the dice first; nothing is clicked, so the rules roll for it
    first = ada.page.wait_for_function(
        "() => { const t = window.dicehall.view.turn; return t ? {window: t.window} : null; }"
    ).json_value()
    # the next window is open: the page has taken in the first one's window_closed
    upto = ada.page.wait_for_function(
        """(w) => {
            const v = window.dicehall.view;
            return v.turn && v.turn.window > w ? {seq: v.lastSeq} : null;
        }""",
        arg=first["window"],
    ).json_value()["seq"]
    lines = ada.page.evaluate(
        """(upto) => [...document.querySelectorAll('.log-list li')]
            .filter((li) => Number(li.dataset.seq) <= upto)
            .map((li) => li.textContent)""",
        upto,
    )
    timed_out = [line for line in lines if "out of time" in line or "Time ran out" in line]
    assert timed_out == ["You ran out of time"], lines


def test_the_lobby_offers_the_publishers_rules_and_the_strong_bot(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    ann = new_player(players, browser, server, "Ann")
    page = ann.page
    # Qwinto: the official preset comes first, named as the publisher's rules, and chosen
    official = page.locator("#f-rules-official")
    first = page.locator("#f-rules .rule-choice").first.inner_text().strip()
    assert first == "Official rules (the publisher\u2019s) · reroll on"
    assert official.is_checked() and page.locator("#opt-reroll").is_checked()
    assert page.input_value("#f-bot-kind") == "strong"
    # one click to the defaults and one back; an option set by hand is "your own"
    page.click("#f-rules-default")
    assert not page.locator("#opt-reroll").is_checked()
    page.click("#f-rules-official")
    assert page.locator("#opt-reroll").is_checked()
    page.click("#opt-reroll")
    assert not official.is_checked() and page.locator("#f-rules-default").is_checked()
    page.click("#f-rules-official")
    # Qwixx too (lock_after 5); Yamb has no preset: no chooser
    page.select_option("#f-game", "qwixx")
    assert page.locator("#f-rules-official").is_checked()
    assert page.input_value("#opt-lock_after") == "5"
    page.select_option("#f-game", "yamb")
    assert page.locator("#f-rules").count() == 0
    # the games list names the presets the same way
    assert "Official rules (the publisher\u2019s): lock_after 5" in page.inner_text("dl.games")

    # a room made with the form as it comes: the publisher's rules, the strong bot
    page.select_option("#f-game", "qwixx")
    ann.create("qwixx", seats=2, bots=1)
    page.wait_for_selector("#room[data-status='playing']")
    assert page.evaluate("window.dicehall.view.info.options") == {"lock_after": 5}
    names = page.locator(".room-head .seat .name").all_inner_texts()
    assert names == ["Ann", "strong-bot-1"]


def test_demo_rooms_seat_the_strong_bots_and_play_now_joins_one(
    players: list[Player], browser: Browser
) -> None:
    with running_server("--demo-rooms") as demo:
        ben = Player(browser, demo, "Ben")
        players.append(ben)
        page = ben.page
        for game in ("Qwinto", "Qwixx", "Qwirkle", "Yamb"):
            row = page.locator("table.rooms tr", has_text=f"{game}: play the strong house bot")
            row.first.wait_for()
            assert "strong-bot" in row.first.inner_text()
        page.click("button[data-play-now='qwixx']")
        page.wait_for_selector("#room[data-game='qwixx'][data-status='playing']")
        assert ben.page.evaluate("window.dicehall.view.info.name") == (
            "Qwixx: play the strong house bot"
        )
        names = page.locator(".room-head .seat .name").all_inner_texts()
        assert "Ben" in names and any(n.startswith("strong-bot-") for n in names)
        ben.close()
        players.remove(ben)
