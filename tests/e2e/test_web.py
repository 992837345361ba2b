"""The web client in a real headless Chromium (Debian's `chromium`, driven by Playwright).

Everything is done by clicking, as a person would: create rooms with house bots, play a
whole Qwinto game (with a reload and a dropped connection in the middle), one turn of each
other game, join a room through its shared link. The final scores on the page are checked
against a replay of the downloaded game record. Screenshots go to docs/screenshots/.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.request
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from dicehall.clients.client import Client
from dicehall.rules.records import replay
from tests.support.redis import RedisServer
from tests.support.servers import ServerProcess, running_server

from .helpers import metrics
from .webpage import Browser, Page, Player, new_player

T = TypeVar("T")


def record_scores(server: ServerProcess, room: str) -> dict[str, int]:
    status, body = server.get(f"/api/rooms/{room}/record")
    assert status == 200, body
    result = replay(json.loads(body)).to_json()
    assert result["over"] is True
    assert result["seed_verified"] is True
    scores: dict[str, int] = result["scores"]
    return scores


# --- Qwinto: a whole game by clicking ------------------------------------------------------


def qwinto_move(page: Page) -> str:
    """Click what a (simple) person would: roll all dice, else a middle legal box, else pass."""
    roll = page.locator("button[data-action='roll']")
    if roll.count():
        roll.click()
        return "roll"
    boxes = page.locator(".seat-panel.mine button.box.legal")
    if boxes.count():
        boxes.nth(boxes.count() // 2).click()
        return "enter"
    page.locator("button[data-action='pass']").click()
    return "pass"


def test_qwinto_whole_game_with_reload_and_drop(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    ada = new_player(players, browser, server, "Ada")
    room = ada.create("qwinto", seats=2, bots=1)
    page = ada.page
    moves = 0
    seen = -1
    entered = 0
    shot = False
    while ada.wait_move(seen):
        seen = ada.legal_count()
        if not shot and moves >= 5 and page.locator("button.box.legal").count():
            shot = True  # mid-game, with the legal boxes of an answer highlighted
            # every box is a legal button (one per legal `enter`), a disabled box, a number
            # or blocked; never both
            mine = page.locator(".seat-panel.mine")
            legal = mine.locator("button.box.legal").count()
            enters = page.evaluate(
                "window.dicehall.view.actions.filter((a) => a.type === 'enter').length"
            )
            assert legal == enters
            others = [".box[aria-disabled='true']", ".box.filled", ".box.blocked", ".box.held"]
            assert legal + sum(mine.locator(sel).count() for sel in others) == 30
            ada.shot("qwinto.png")
        entered += qwinto_move(page) == "enter"
        moves += 1
        if moves == 7:
            # reload in the middle: the seat, the sheet and the log come back
            ada.wait_move(seen)
            sheet = page.inner_text(".seat-panel.mine .sheet")
            log = ada.log()
            page.reload()
            page.wait_for_selector("#room[data-mode='seat']")
            assert ada.wait_move(-1)
            seen = ada.legal_count() - 1
            assert page.inner_text(".seat-panel.mine .sheet") == sheet
            assert ada.log()[: len(log)] == log
        if moves == 9:
            # a dropped connection: the client reconnects, takes the seat back and resumes
            ada.wait_move(seen)
            before = ada.log()
            page.evaluate("window.dicehall.conn.drop()")
            page.wait_for_selector("#conn-status[data-status='closed']")
            page.wait_for_selector("#conn-status[data-status='open']")
            assert ada.wait_move(-1)
            seen = ada.legal_count() - 1
            assert ada.log()[: len(before)] == before
        assert moves < 200, "the game should have ended"
    assert moves >= 9 and entered > 0 and shot
    assert ada.room("errors") == "0", "a click sent an action the server refused"

    page.wait_for_selector(".game-over")
    shown = {
        int(cell.get_attribute("data-final-seat") or -1): int(cell.inner_text())
        for cell in page.locator("[data-final-seat]").all()
    }
    names = ["Ada", "strong-bot-1"]  # the default opponent: the strong house bot
    assert record_scores(server, room) == {names[s]: v for s, v in shown.items()}
    # the final sheets show the finished game, and the log ends with it
    assert any(line.startswith("Game over") for line in ada.log())
    ada.shot("qwinto-over.png")

    # the record downloads from the page and replays to the same scores
    with page.expect_download() as download:
        page.click("#download-record")
    data = json.loads(Path(download.value.path()).read_text())
    assert data["game"] == "qwinto"
    assert replay(data).to_json()["scores"] == {names[s]: v for s, v in shown.items()}

    # a reload after the end shows the same result
    page.reload()
    page.wait_for_selector(".game-over")
    again = [int(t) for t in page.locator("[data-final-seat]").all_inner_texts()]
    assert again == [shown[0], shown[1]]


# --- one turn of each other game ------------------------------------------------------------


def test_qwixx_turn_by_keyboard(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    bo = new_player(players, browser, server, "Bo")
    bo.create("qwixx", seats=2, bots=1)
    page = bo.page
    assert bo.wait_move(-1)
    # white window: the legal boxes are buttons; mark one with the keyboard
    legal = page.locator(".seat-panel.mine button.box.legal")
    assert legal.count() >= 1
    assert page.locator(".seat-panel.mine .box[aria-disabled='true']").count() > legal.count()
    target = legal.first
    row, number = target.get_attribute("data-row"), target.get_attribute("data-number")
    seen = bo.legal_count()
    target.focus()
    page.keyboard.press("Enter")
    bo.wait_legal(seen)
    page.wait_for_selector(f".seat-panel.mine .qwixx-row.c-{row} .box.marked")
    assert any(line == f"You mark {row} {number}" for line in bo.log())
    # the colour window opens for the active seat when it has a colour mark: pass there
    assert bo.wait_move(seen)
    if page.locator(".controls", has_text="Colour window").count():
        bo.shot("qwixx.png")
        seen = bo.legal_count()
        page.click("button[data-action='pass']")
        bo.wait_legal(seen)
        bo.wait_log("You pass")
    else:
        bo.shot("qwixx.png")
    assert bo.room("errors") == "0"


def qwirkle_swap_two(cy: Player) -> int:
    """Swap the first two hand tiles; the legal list seen before the swap went out."""
    page = cy.page
    page.click("button[data-action='swap-mode']")
    page.locator(".hand-tile").nth(0).click()
    page.locator(".hand-tile").nth(1).click()
    seen = cy.legal_count()
    page.click("button[data-action='swap']")
    cy.wait_legal(seen)
    cy.wait_log("You swap")
    return seen


def test_qwirkle_place_then_swap(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    cy = new_player(players, browser, server, "Cy")
    cy.create("qwirkle", seats=2, bots=1)
    page = cy.page
    playable = ".hand-tile:not([disabled])"
    assert cy.wait_move(-1)
    # a hand may have no tile that fits the board (a few per cent of deals): swap until one does
    while not page.locator(playable).count():
        assert cy.wait_move(qwirkle_swap_two(cy))
    before = page.locator(".board .cell.filled").count()
    # place: choose a hand tile, then a highlighted cell, until the placement is complete
    placed = 0
    while page.locator("button[data-action='place']").is_disabled():
        page.locator(playable).first.click()
        page.locator("button.cell.target").first.click()
        placed += 1
        assert placed <= 6
    seen = cy.legal_count()
    page.click("button[data-action='place']")
    cy.wait_legal(seen)
    page.wait_for_function(
        "(n) => document.querySelectorAll('.board .cell.filled').length >= n", arg=before + placed
    )
    assert any(line.startswith("You place") for line in cy.log())
    my_score = page.locator(".qwirkle-scores [data-score-seat='0']").inner_text()
    assert int(my_score.split()[0]) >= 1
    # next turn: a chosen tile lights its cells (when one fits), then swap two tiles
    assert cy.wait_move(seen)
    if page.locator(playable).count():
        page.locator(playable).first.click()
        assert page.locator("button.cell.target").count() >= 1
    cy.shot("qwirkle.png")
    qwirkle_swap_two(cy)
    assert cy.room("errors") == "0"


def test_yamb_hold_roll_write(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    di = new_player(players, browser, server, "Di")
    di.create("yamb", seats=2, bots=1)
    page = di.page
    assert di.wait_move(-1)

    def act(selector: str) -> None:
        seen = di.legal_count()
        page.click(selector)
        assert di.wait_move(seen)

    act("button[data-action='roll']")
    dice = [int(t) for t in page.locator(".dice-line .yamb-die .die-value").all_inner_texts()]
    assert len(dice) == 6 and all(1 <= d <= 6 for d in dice)
    page.click("button.yamb-die[data-die='0']")
    page.click("button.yamb-die[data-die='1']")
    assert page.get_attribute("button.yamb-die[data-die='0']", "aria-pressed") == "true"
    act("button[data-action='roll']")
    again = [int(t) for t in page.locator(".dice-line .yamb-die .die-value").all_inner_texts()]
    assert again[:2] == dice[:2], "held dice keep their values"
    # the log says which dice were kept by their values, and where they are (issue 33)
    kept = f"You roll again, keeping {dice[0]} and {dice[1]} (dice 1 and 2)"
    assert kept in di.log(), di.log()
    di.shot("yamb.png")
    # the columns carry the rules' labels, and their names for screen readers
    head = page.locator(".seat-panel.mine table.yamb thead th[data-column]")
    shown = head.locator("span[aria-hidden='true']").all_inner_texts()
    assert shown == ["↓", "↑", "free 1", "free 2", "call", "hand"]
    spoken = [t.strip() for t in head.locator(".sr").all_text_contents()]
    assert spoken == [f"{n} column" for n in ("down", "up", "free 1", "free 2", "call", "hand")]
    cell = page.locator(".seat-panel.mine button.cell-btn.write").first
    column, row, preview = (
        cell.get_attribute("data-column"),
        cell.get_attribute("data-row"),
        cell.inner_text(),
    )
    seen = di.legal_count()
    cell.click()
    di.wait_legal(seen)
    di.wait_log("You write")
    # the log names the column as the sheet labels it, in words
    name = {"down": "down", "up": "up", "free1": "free 1", "free2": "free 2", "hand": "hand"}
    assert f"You write {preview} in {name[column or '']}, row {row}" in di.log()
    assert page.locator(".seat-panel.mine td.written").count() == 1
    assert di.room("errors") == "0"


# --- the lobby, and a second person joining through the shared link --------------------------


def test_lobby_and_shared_link(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    host = new_player(players, browser, server, "Host")
    room = host.create("qwinto", seats=3, bots=0)
    host.page.wait_for_selector("#room[data-status='open']")
    assert host.page.locator("[data-join-seat]").count() == 0  # seated already
    link = host.page.input_value("#share-link")
    assert link.endswith(f"#/room/{room}")

    guest = new_player(players, browser, server, "Guest")
    guest.page.wait_for_selector(f"tr[data-room='{room}']")
    guest.shot("lobby.png")
    guest.page.goto(link)
    guest.page.click("[data-join-seat='2']")
    guest.page.wait_for_selector("#room[data-seat='2'] .seat-table >> text=Host (host)")
    assert guest.page.locator("[data-key='fill-bots']").count() == 0  # only the host may
    host.page.wait_for_selector(".seat-table >> text=Guest")
    host.page.click("[data-key='fill-bots']")
    for player in (host, guest):
        player.page.wait_for_selector("#room[data-status='playing']")
    assert guest.room("seat") == "2"
    assert host.wait_move(-1)  # seat 0 chooses the dice first
    names = host.page.locator(".room-head .seat .name").all_inner_texts()
    assert names == ["Host", "strong-bot-1", "Guest"]  # the host fills with the default bot

    # a third person watches through the same link and sees the game go on
    watcher = new_player(players, browser, server, "Watcher")
    watcher.page.goto(link)
    watcher.page.wait_for_selector("#room[data-mode='watch'] .qwinto-sheet")
    assert watcher.log()[0] == "You are watching the room."
    assert watcher.page.locator("button.box.legal, [data-join-seat]").count() == 0
    host.page.click("button[data-action='roll']")
    watcher.wait_log("Host rolls red + yellow + blue")
    watcher.page.wait_for_selector(".controls .dice-line .die")


# --- quick match ----------------------------------------------------------------------------


def play_now(player: Player, game: str) -> str:
    """Click the lobby's "Play now" for `game`; the room the page sits down in."""
    player.page.goto(player.server.http + "/")
    player.page.click(f"button[data-play-now='{game}']")
    player.page.wait_for_selector(f"#room[data-game='{game}'][data-seat]:not([data-seat=''])")
    return player.room("room")


def open_rooms(player: Player, game: str) -> list[str]:
    rooms = player.request("rooms", {"game": game})["rooms"]
    return [r["room"] for r in rooms if r["status"] == "open"]


def test_play_now_joins_a_waiting_room_or_starts_one_against_the_strong_bot(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    # somebody waits in a public Qwirkle room: "Play now" sits down there and the game starts
    host = new_player(players, browser, server, "Host")
    waiting = host.create("qwirkle", seats=2, bots=0)
    host.page.wait_for_selector("#room[data-status='open']")
    guest = new_player(players, browser, server, "Guest")
    assert play_now(guest, "qwirkle") == waiting
    assert guest.room("seat") == "1"
    for player in (host, guest):
        player.page.wait_for_selector("#room[data-status='playing']")
    names = guest.page.locator(".room-head .seat .name").all_inner_texts()
    assert names == ["Host", "Guest"]

    # nobody waits for Yamb: the first click starts a game against the strong bot at once,
    # which leaves nothing open, so the second click (another person) starts another one
    ann = new_player(players, browser, server, "Ann")
    assert open_rooms(ann, "yamb") == []
    first = play_now(ann, "yamb")
    ann.page.wait_for_selector("#room[data-status='playing']")
    assert ann.room("seat") == "0"
    assert ann.page.locator(".room-head .seat .name").all_inner_texts() == ["Ann", "strong-bot-1"]
    assert ann.wait_move(-1)
    bob = new_player(players, browser, server, "Bob")
    second = play_now(bob, "yamb")
    assert second != first
    bob.page.wait_for_selector("#room[data-status='playing']")
    assert bob.page.locator(".room-head .seat .name").all_inner_texts() == ["Bob", "strong-bot-1"]

    # a room of its own is listed, named for what it is, with the publisher's rules when the
    # game has them (Qwixx: lock_after 5)
    cy = new_player(players, browser, server, "Cy")
    assert open_rooms(cy, "qwixx") == []
    mine = play_now(cy, "qwixx")
    info = cy.page.evaluate("window.dicehall.view.info")
    assert info["room"] == mine and info["name"] == "Qwixx: quick match"
    assert info["options"] == {"lock_after": 5} and info["public"] is True


def test_play_now_never_seats_anyone_beside_a_player_who_is_gone(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    """Issue 33: a Qwixx room made with the form (3 seats, 1 house bot) whose creator closed
    the tab is not where quick match seats you (each roll would wait out the window for
    the absent player), and the lobby does not offer to join it."""
    ghost = new_player(players, browser, server, "Ghost")
    left = ghost.create("qwixx", seats=3, bots=1)
    ghost.page.wait_for_selector("#room[data-status='open']")
    ghost.context.close()  # the tab is gone (not `close()`: it would close it again)
    players.remove(ghost)
    dee = new_player(players, browser, server, "Dee")
    # the lobby entry says the creator's seat is no longer connected
    dee.page.wait_for_function(
        """(room) => window.dicehall.conn.request('rooms', {game: 'qwixx'}).then(({rooms}) =>
            rooms.some((r) => r.room === room &&
                !r.seats.some((s) => s.kind === 'human' && s.connected)))""",
        arg=left,
        polling=250,
    )
    # the list (refreshed every 3 s) shows the room, without a Join button
    dee.page.wait_for_function(
        """(room) => document.querySelector(`tr[data-room='${room}']`) !== null &&
            document.querySelector(`[data-key='join-${room}']`) === null""",
        arg=left,
        polling=250,
        timeout=15000,
    )
    assert play_now(dee, "qwixx") != left


# --- following a room to the process that runs it --------------------------------------------


def test_the_page_follows_its_room_to_the_process_that_runs_it(
    browser: Browser, redis_server: RedisServer
) -> None:
    """The page is served by A; its room is run by B (both advertise their addresses). The
    page's connection moves to B as soon as it watches, then sits down and plays there,
    and A carries nothing more of the game: no connection, no forwarded request."""
    url = redis_server.url_db(redis_server.fresh_db())
    with (
        running_server("--redis", url, advertise=True) as a,
        running_server("--redis", url, advertise=True) as b,
    ):

        async def open_room() -> str:
            async with Client(b.ws, name="host") as host:
                info = await host.create("qwinto", 2, turn_window=120, autostart=True)
                assert info.url == b.ws
                assert await host.add_bots(info.room, count=1) == [0]
                return info.room

        with ThreadPoolExecutor(1) as pool:  # (Playwright's loop runs in this thread)
            room = pool.submit(asyncio.run, open_room()).result()
        guest = Player(browser, a, "Guest")
        try:
            guest.page.goto(f"{a.http}/#/room/{room}")
            guest.page.wait_for_selector("#room[data-mode='watch']")
            guest.page.wait_for_function("(u) => window.dicehall.conn.url === u", arg=b.ws)
            guest.page.wait_for_selector("#room[data-mode='watch'] [data-join-seat='1']")
            before = metrics(a)["dicehall_commands_forwarded_total"]  # (asking where: 1 hop)
            guest.page.click("[data-join-seat='1']")
            guest.page.wait_for_selector("#room[data-seat='1'][data-status='playing']")
            assert guest.wait_move(-1) or guest.room("over") == "1"
            assert guest.page.evaluate("window.dicehall.conn.url") == b.ws
            served = metrics(a)
            assert served["dicehall_connections"] == 0
            assert served["dicehall_commands_forwarded_total"] == before
        finally:
            guest.close()


def test_the_page_shows_who_it_waits_for_as_each_answer_comes_in(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    """The page asks for `progress`: in Qwixx's white window, whose answer is in shows at
    once (the answers themselves only when the window resolves)."""
    bo = new_player(players, browser, server, "Bo")
    room = bo.create("qwixx", seats=3, bots=0, turn_window=600)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def run(job: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(job, loop).result(30)

    others = [Client(server.ws, name=name) for name in ("Cy", "Di")]
    try:
        for client in others:
            run(client.connect())
            run(client.join(room))
        assert bo.wait_move(-1)
        turnbar = bo.page.locator(".turnbar .turn-who")
        seen = bo.legal_count()
        bo.page.click("button[data-action='pass']")
        bo.wait_legal(seen)
        turnbar.filter(has_text="Waiting for Cy, Di").wait_for()
        turn = others[0].turn(room)
        assert turn is not None
        run(others[0].act(room, {"type": "pass"}, window=turn.window))
        turnbar.filter(has_text="Waiting for Di").wait_for()
        assert not any("answered" in line for line in bo.log())
        run(others[1].act(room, {"type": "pass"}, window=turn.window))
        bo.page.wait_for_function(
            "() => !document.querySelector('.turnbar').textContent.includes('Waiting for Di')"
        )
    finally:
        for client in others:
            run(client.close())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


# --- the player this browser is ----------------------------------------------------------------

PLAYER = "() => window.dicehall.conn.isReady && window.dicehall.conn.player"
KEPT = "() => JSON.parse(localStorage.getItem('dicehall.v1.player-key'))"


def player_after_load(page: Page) -> dict[str, str]:
    page.wait_for_function(PLAYER)
    player: dict[str, str] = page.evaluate(PLAYER)
    return player


def test_the_browser_is_one_player_across_reloads_and_tabs(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    """The first visit is given a player key (docs/protocol.md, "identity"), kept in
    localStorage and said in every `hello`: a reload, or a second tab, is the same player.
    A kept key the server does not know makes way for a new player, kept from then on."""
    ada = new_player(players, browser, server, "Ada")
    page = ada.page
    first = player_after_load(page)
    assert set(first) == {"id", "key"} and page.evaluate(KEPT) == first["key"]
    page.reload()
    assert player_after_load(page) == first
    tab = ada.context.new_page()  # (the same browser: the same storage)
    try:
        tab.goto(server.http + "/")
        assert player_after_load(tab) == first
    finally:
        tab.close()
    page.evaluate("() => localStorage.setItem('dicehall.v1.player-key', '\"pk1.x.forged\"')")
    page.reload()
    fresh = player_after_load(page)
    assert fresh["id"] != first["id"] and page.evaluate(KEPT) == fresh["key"]
    other = new_player(players, browser, server, "Bo")  # another browser: another player
    assert player_after_load(other.page)["id"] not in {first["id"], fresh["id"]}


def test_the_page_has_a_content_security_policy_and_no_page_may_frame_it(
    browser: Browser, server: ServerProcess
) -> None:
    """Its own scripts and styles only (no inline ones), and no framing by another page
    (clickjacking): the policy comes with every file of the page, and Chromium refuses to
    show the page in a frame. The other tests of the page fail on any console error, a
    refusal by the policy included."""
    for path in ("/", "/index.html", "/style.css", "/js/main.js", "/js/dicehall.js"):
        with urllib.request.urlopen(server.http + path, timeout=10) as response:
            policy = response.headers["Content-Security-Policy"] or ""
        directives = {d.split()[0]: d.split()[1:] for d in policy.split(";") if d.strip()}
        assert directives.get("frame-ancestors") == ["'none'"], (path, policy)
        assert directives["script-src"] == directives["style-src"] == ["'self'"]
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_content(f'<iframe src="{server.http}/"></iframe>')
        frame = page.frames[1]
        deadline = time.monotonic() + 10
        while not frame.url.startswith("chrome-error:") and not frame.query_selector("#app"):
            assert time.monotonic() < deadline, f"the frame neither loaded nor failed: {frame.url}"
            page.wait_for_timeout(20)  # (a poll: the frame's fate has no event to await)
        assert frame.url.startswith("chrome-error:"), "the page showed in another page's frame"
    finally:
        context.close()
