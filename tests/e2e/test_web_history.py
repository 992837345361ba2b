"""The web client's history pages in a real headless Chromium, on a real `dicehall serve`
that keeps its games (a SQLite database in the server's own XDG_DATA_HOME): "My games",
the replay viewer and the leaderboards, and what they say when the server keeps no
history (`--db none`).

The history is the browser's own: the page's player key (from its hello) is said by a
RawClient that plays Qwixx games against a house bot, so the stored games are this
browser's player's. A few games of house bots alone give the other games a replay to
draw. Every page is also measured at phone and laptop widths: none scrolls sideways.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.cli import dicehall
from tests.support.postgres import running_postgres
from tests.support.servers import ServerProcess, running_server
from tests.support.wait import eventually

from .helpers import bot_game, games_against_a_house_bot, metrics
from .test_web_layout import SIZES, overflows
from .webpage import LAPTOP, Browser, Page, Player

GAMES = 2
"""Qwixx games the browser's player plays (two: "More" has a second page to load)."""
BOT_GAMES = ["qwinto", "qwirkle", "yamb"]
"""Games of house bots alone: every game's replay is drawn and measured."""
STORED = "dicehall_history_saved_total"


@dataclass
class Seeded:
    """The browser tab whose player played the stored games, and what was stored."""

    ada: Player
    player: str
    rooms: list[str]
    """The player's Qwixx games, oldest first."""
    bot_rooms: dict[str, str]
    """game -> a stored game of house bots alone."""


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with running_server() as s:  # (its own XDG_DATA_HOME: history in a fresh SQLite file)
        yield s


def get(server: ServerProcess, path: str) -> Any:
    status, body = server.get(path)
    assert status == 200, (path, status, body)
    return json.loads(body)


async def play_as(server: ServerProcess, key: str) -> tuple[str, list[str], dict[str, str]]:
    """GAMES games of Qwixx as the player of `key` against a house bot, and a game of
    house bots of each of BOT_GAMES; once all are stored: the player, the rooms."""
    player, rooms = await games_against_a_house_bot(server, GAMES, key)
    bots = {game: await bot_game(server, game) for game in BOT_GAMES}
    total = GAMES + len(BOT_GAMES)
    await eventually(lambda: metrics(server)[STORED] == total, "stored", timeout=60)
    return player, rooms, bots


@pytest.fixture(scope="module")
def seeded(browser: Browser, server: ServerProcess) -> Iterator[Seeded]:
    ada = Player(browser, server, "Ada", viewport=LAPTOP)
    page = ada.page
    page.wait_for_function("() => window.dicehall.conn.player !== null")
    key: str = page.evaluate("window.dicehall.conn.player.key")
    kept = page.evaluate("JSON.parse(localStorage.getItem('dicehall.v1.player-key'))")
    assert kept == key  # the key the page keeps (store.js) is the one its hello got
    with ThreadPoolExecutor(1) as pool:  # (Playwright's loop runs in this thread)
        player, rooms, bots = pool.submit(asyncio.run, play_as(server, key)).result()
    assert page.evaluate("window.dicehall.conn.player.id") == player
    try:
        yield Seeded(ada, player, rooms, bots)
    finally:
        ada.close()


def go(page: Page, hash_: str) -> None:
    """Follow a link to `hash_`: back once the app has routed it (its new page is up)."""
    page.evaluate(
        """(h) => new Promise((routed) => {
            if (location.hash === h) return routed();
            window.addEventListener('hashchange', () => routed(), {once: true});
            location.hash = h;
        })""",
        hash_,
    )


def ordinal(n: int) -> str:
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n if n < 20 else n % 10, 'th') }"


def test_my_games_lists_the_players_games_newest_first(seeded: Seeded) -> None:
    page = seeded.ada.page
    page.click(".nav a[data-nav='games']")  # reachable from every page's navigation
    page.wait_for_selector("#my-games[data-loaded='1']")
    assert page.get_attribute(".nav a[data-nav='games']", "aria-current") == "page"
    rows = page.locator("#my-games-table tbody tr")
    assert [r.get_attribute("data-game-id") for r in rows.all()] == seeded.rooms[::-1]
    for room in seeded.rooms:
        stored = get(seeded.ada.server, f"/api/games/{room}")
        (mine,) = [s for s in stored["seats"] if s["player"] == seeded.player]
        row = page.locator(f"#my-games-table tr[data-game-id='{room}']")
        assert row.locator("td.game").inner_text() == "Qwixx"
        assert row.locator("td.score").inner_text() == str(mine["score"])
        assert row.locator("td.place").inner_text() == f"{ordinal(mine['place'])} of 2"
        before, after = mine["rating_before"], mine["rating_after"]
        assert f"{before:.1f} → {after:.1f}" in row.locator("td.rating").inner_text()
        assert row.locator("td.when").inner_text().strip()
        assert row.locator("a", has_text="Replay").get_attribute("href") == (
            f"#/games/{room}/replay"
        )
    assert page.locator("#more-games").count() == 0  # one page holds them all

    # a page at a time: "More" loads the next one (the API's cursor), then there is none
    go(page, "#/games?limit=1")
    page.wait_for_selector("#my-games[data-loaded='1'] #more-games")
    assert rows.count() == 1
    page.click("#more-games")
    page.wait_for_selector("#my-games .list-end")
    assert [r.get_attribute("data-game-id") for r in rows.all()] == seeded.rooms[::-1]
    assert page.locator("#more-games").count() == 0


def describe(entry: dict[str, Any], names: list[str]) -> str:
    """What the replay says of a Qwixx log entry (the live log's words)."""
    if "chance" in entry:
        return "Dice: white "
    name = names[entry["seat"]]
    if entry.get("timeout"):
        return f"{name} ran out of time"
    action = entry["action"]
    if action["type"] == "pass":
        return f"{name} passes"
    return f"{name} marks {action['row']} {action['number']}"


def test_the_replay_steps_through_a_game(seeded: Seeded) -> None:
    page = seeded.ada.page
    room = seeded.rooms[0]
    stored = get(seeded.ada.server, f"/api/games/{room}")
    record = stored["record"]
    names, log = record["seats"], record["log"]
    go(page, "#/games")
    page.click(f"#my-games-table tr[data-game-id='{room}'] a:has-text('Replay')")

    # the start: empty sheets, nothing to go back to
    page.wait_for_selector("#replay[data-step='0'] .seat-panel")
    assert page.evaluate("location.hash") == f"#/games/{room}/replay?step=0"
    assert page.get_attribute("#replay", "data-steps") == str(len(log))
    assert page.locator(".qwixx-sheet .box.marked").count() == 0
    assert page.locator(".seat-panel .seat-score").all_inner_texts() == ["0 pts", "0 pts"]
    assert page.inner_text("#replay-entry").startswith("The start")
    assert page.is_disabled("#replay-start") and page.is_disabled("#replay-prev")
    assert page.inner_text("#replay-counter") == f"Step 0 of {len(log)}"
    page.evaluate(
        """() => {
            window.blank = 0;  // frames where the sheets are gone: there must be none
            new MutationObserver(() => {
                if (!document.querySelector('#replay .seat-panel')) window.blank += 1;
            }).observe(document.getElementById('replay'), {childList: true, subtree: true});
        }"""
    )

    # Next, then the right arrow key, until a sheet has a mark: each step says its entry
    page.click("#replay-next")
    page.wait_for_selector("#replay[data-step='1']")
    assert page.inner_text("#replay-entry").startswith(describe(log[0], names))
    step = 1
    while page.locator(".qwixx-sheet .box.marked").count() == 0:
        page.keyboard.press("ArrowRight")
        step += 1
        page.wait_for_selector(f"#replay[data-step='{step}']")
        assert page.inner_text("#replay-entry").startswith(describe(log[step - 1], names))
    assert 1 < step < len(log)
    assert page.inner_text("#replay-counter") == f"Step {step} of {len(log)}"
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector(f"#replay[data-step='{step - 1}']")
    assert page.locator(".qwixx-sheet .box.marked").count() == 0

    # the slider goes anywhere
    middle = len(log) // 2
    page.evaluate(
        """(n) => {
            const slider = document.getElementById('replay-step');
            slider.value = String(n);
            slider.dispatchEvent(new Event('input', {bubbles: true}));
        }""",
        middle,
    )
    page.wait_for_selector(f"#replay[data-step='{middle}']")
    assert page.inner_text("#replay-entry").startswith(describe(log[middle - 1], names))

    # the end: the stored game's scores, on the sheets and in the results
    page.click("#replay-end")
    page.wait_for_selector(f"#replay[data-step='{len(log)}'][data-over='1']")
    assert page.is_disabled("#replay-next") and page.is_disabled("#replay-end")
    for seat in stored["seats"]:
        s, score = seat["seat"], str(seat["score"])
        assert page.inner_text(f".seat-panel [data-score-seat='{s}']") == f"{score} pts"
        assert page.inner_text(f".game-over [data-final-seat='{s}']") == score
    winners = [names[s["seat"]] for s in stored["seats"] if s["place"] == 1]
    assert f"Winner{'s' if len(winners) > 1 else ''}: {', '.join(winners)}" in page.inner_text(
        "#replay-now"
    )
    assert page.evaluate("window.blank") == 0

    # the record: its seed revealed (and checked against the commitment), downloadable
    assert page.inner_text("#replay-seed") == record["seed"]
    page.wait_for_selector(".seed-check.ok")
    assert page.get_attribute("#replay-record", "href") == f"/api/games/{room}"
    with page.expect_download() as download:
        page.click("#replay-record")
    path = download.value.path()
    assert json.loads(path.read_text())["record"] == record
    # and what it downloads replays, as the page says (issue 33: it did not)
    replayed = dicehall("replay", str(path), "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["seed_verified"] is True

    # the address keeps the step: a reload opens it there
    assert page.evaluate("location.hash") == f"#/games/{room}/replay?step={len(log)}"
    go(page, f"#/games/{room}/replay?step={step}")
    page.reload()
    page.wait_for_selector(f"#replay[data-step='{step}'] .qwixx-sheet .box.marked")


NO_SUCH = re.compile(r"Failed to load resource: the server responded with a status of (404|503)")
"""What the browser reports of each 404 or 503 a page reads (a console error)."""


def test_every_game_is_replayed_with_its_own_drawing(seeded: Seeded) -> None:
    page = seeded.ada.page
    sheets = {"qwinto": ".qwinto-sheet", "qwirkle": ".board-viewport", "yamb": "table.yamb"}
    for game, room in seeded.bot_rooms.items():
        go(page, f"#/games/{room}/replay?step=9")
        page.wait_for_selector(f"#replay[data-game-id='{room}'][data-step='9']")
        assert page.locator(sheets[game]).count() >= 1, game
        assert page.locator("#replay-entry").inner_text().strip()
        assert "{" not in page.inner_text("#replay-now")  # words, never the record's JSON
        if game == "qwirkle":  # every seat's hand, revealed
            assert page.locator(".replay-hand").count() == 2
    go(page, "#/games/nothing/replay")
    notice = page.locator("#replay .history-problem")
    assert "no stored game with that id" in notice.inner_text()
    seeded.ada.problems = [p for p in seeded.ada.problems if not NO_SUCH.search(p)]


def test_the_leaderboard_ranks_the_player_and_the_house_bot(seeded: Seeded) -> None:
    page = seeded.ada.page
    server = seeded.ada.server
    page.click(".nav a[data-nav='leaderboards']")
    page.wait_for_selector("#leaderboard[data-loaded='1']")
    ladders = [entry["ladder"] for entry in get(server, "/api/leaderboards")["ladders"]]
    picker = page.locator("#lb-ladder option")
    assert sorted(o.get_attribute("value") or "" for o in picker.all()) == sorted(ladders)
    official = page.locator("#lb-ladder option[value='qwixx:official']").inner_text()
    assert official.startswith("Qwixx: Official rules")

    page.select_option("#lb-ladder", "qwixx")
    page.wait_for_selector("#leaderboard[data-ladder='qwixx'][data-loaded='1']")
    assert page.evaluate("location.hash") == "#/leaderboards/qwixx"
    board = get(server, "/api/leaderboards/qwixx")["standings"]
    assert {s["player"] for s in board} == {seeded.player, "house:random"}
    rows = page.locator("#lb-table tbody tr")
    assert [r.get_attribute("data-player") for r in rows.all()] == [s["player"] for s in board]
    for s in board:
        row = page.locator(f"#lb-table tr[data-player='{s['player']}']")
        assert row.locator("td.rank").inner_text() == str(s["rank"])
        assert row.locator("td.rating").inner_text() == f"{s['rating']:.1f}"
        assert row.locator("td.games").inner_text() == str(GAMES)
    mine = page.locator("#lb-table tr.me")
    assert mine.get_attribute("data-player") == seeded.player
    assert mine.get_attribute("aria-current") == "true"
    (rank,) = [s["rank"] for s in board if s["player"] == seeded.player]
    assert page.get_attribute("#lb-me", "data-rank") == str(rank)
    assert page.is_disabled("#lb-prev") and page.is_disabled("#lb-next")

    # a page of one: Next while the API has a next_offset, Previous back to the first
    go(page, "#/leaderboards/qwixx?limit=1")
    page.wait_for_selector("#leaderboard[data-loaded='1'][data-loading='0']")
    assert rows.count() == 1 and page.inner_text("#lb-where") == "Ranks 1\u20131"
    assert page.is_disabled("#lb-prev") and page.is_enabled("#lb-next")
    page.click("#lb-next")
    page.wait_for_selector("#leaderboard[data-offset='1'][data-loading='0']")
    assert rows.count() == 1 and rows.first.get_attribute("data-rank") == "2"
    assert page.is_enabled("#lb-prev") and page.is_disabled("#lb-next")
    assert page.evaluate("location.hash") == "#/leaderboards/qwixx?offset=1&limit=1"
    # the player's own rank shows on either page; "Show my place" goes to theirs
    assert page.get_attribute("#lb-me", "data-rank") == str(rank)
    if rank == 2:
        page.click("#lb-prev")
        page.wait_for_selector("#leaderboard[data-offset='0'][data-loading='0']")
    page.click("#lb-mine")
    page.wait_for_selector(f"#leaderboard[data-offset='{rank - 1}'][data-loading='0']")
    assert page.locator("#lb-table tr.me").count() == 1
    assert page.locator("#lb-mine").count() == 0


def test_no_history_page_scrolls_sideways(seeded: Seeded) -> None:
    player = seeded.ada
    page = player.page
    room = seeded.rooms[0]
    pages = {
        "my games": ("#/games", "#my-games[data-loaded='1']"),
        "the leaderboard": ("#/leaderboards/qwixx", "#leaderboard[data-loaded='1']"),
        "a replay's start": (f"#/games/{room}/replay?step=0", "#replay[data-step='0']"),
    }
    steps = len(get(player.server, f"/api/games/{room}")["record"]["log"])
    pages["a replay's end"] = (f"#/games/{room}/replay?step={steps}", "#replay[data-over='1']")
    for game, bots in seeded.bot_rooms.items():
        pages[f"a replay of {game}"] = (
            f"#/games/{bots}/replay?step=40",
            f"#replay[data-game-id='{bots}'][data-step='40']",
        )
    found = []
    for what, (hash_, ready) in pages.items():
        go(page, hash_)
        # (a replay's first step waits for the replays' worker process to start: seconds,
        # and over the 15 s default on a CI machine whose other jobs hold both cores)
        page.wait_for_selector(ready, timeout=60_000)
        found += overflows(player, what)
    assert found == [], f"measured at {SIZES}"


def test_a_server_without_history_says_so(browser: Browser) -> None:
    with running_server("--db", "none") as bare:
        cy = Player(browser, bare, "Cy")
        try:
            page = cy.page
            page.click(".nav a[data-nav='games']")
            notice = page.locator("#my-games .history-problem")
            notice.wait_for()
            assert "This server keeps no game history." in notice.inner_text()
            assert notice.get_attribute("data-problem") == "404"
            page.click(".nav a[data-nav='leaderboards']")
            notice = page.locator("#leaderboard .history-problem")
            notice.wait_for()
            assert "This server keeps no game history." in notice.inner_text()
            go(page, "#/games/nothing/replay")
            notice = page.locator("#replay .history-problem")
            notice.wait_for()
            assert "This server keeps no game history." in notice.inner_text()
            assert page.locator("#replay-step").count() == 0
        finally:
            # the browser reports each 404 the pages read as a console error: only those
            cy.problems = [p for p in cy.problems if not NO_SUCH.search(p)]
            cy.close()


def test_a_database_out_of_reach_says_try_again_later(browser: Browser) -> None:
    with running_postgres() as pg, running_server("--db", pg.fresh_database()) as served:
        di = Player(browser, served, "Di")
        try:
            page = di.page
            page.wait_for_function("() => window.dicehall.conn.player !== null")
            pg.stop()
            page.click(".nav a[data-nav='games']")
            notice = page.locator("#my-games .history-problem[data-problem='503']")
            notice.wait_for()
            assert "try again later" in notice.inner_text()
            # "Try again" asks again: once the server reaches its database, the (empty) list
            pg.start()
            deadline = time.monotonic() + 60
            while page.locator("#my-games[data-loaded='1']").count() == 0:
                assert time.monotonic() < deadline, "the history never came back"
                page.click("#my-games [data-key='retry']")
                page.wait_for_selector("#my-games[data-loading='0']")
            assert "No finished games yet" in page.inner_text("#my-games .notice.empty")
        finally:
            di.problems = [p for p in di.problems if not NO_SUCH.search(p)]
            di.close()
