"""The web client's layout in a real headless Chromium: no page scrolls sideways on a phone
(360, 390 and 414 px wide) nor on a laptop (1280 x 720), whatever it shows (the lobby, each
game seated, a spectator of each game, game over; inner frames such as the Qwirkle board
or the Yamb table scroll inside themselves), the Qwirkle board, prompt and hand are usable
together on a laptop, and a spectator's Qwirkle board is centred on its tiles.

One server and one browser for the module; rooms get their house bots through the lobby's
form, or, for games of bots only, through the protocol on the page's own connection. With
DICEHALL_SCREENSHOTS=1 (`make screenshots`) the phone and laptop screenshots of each game
go to docs/screenshots/.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize

from tests.support.servers import ServerProcess, running_server

from .webpage import LAPTOP, Browser, Player, new_player, save_shot

GAMES = ["qwinto", "qwixx", "qwirkle", "yamb"]
PHONES: list[ViewportSize] = [
    {"width": 360, "height": 800},
    {"width": 390, "height": 844},
    {"width": 414, "height": 896},
]
SIZES = [*PHONES, LAPTOP]
SIDEWAYS = """() => ({
    scroll: document.documentElement.scrollWidth,
    width: window.innerWidth,
    widest: [...document.querySelectorAll('body *')]
        .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5
            && !el.closest('.board-viewport, .yamb-sheet, .table-wrap, .sheet'))
        .slice(0, 3)
        .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}`),
})"""


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with running_server() as s:
        yield s


def overflows(player: Player, what: str) -> list[str]:
    """The sizes at which the page scrolls sideways (each with what sticks out)."""
    found = []
    for size in SIZES:
        player.page.set_viewport_size(size)
        m = player.page.evaluate(SIDEWAYS)
        if m["scroll"] > m["width"]:
            found.append(f"{what} at {size['width']}x{size['height']}: {m}")
    player.page.set_viewport_size(LAPTOP)
    return found


def bots_game(player: Player, game: str) -> str:
    """A public room of two strong house bots that this tab watches from before the start
    (it created the room, so it hosts it and starts it): its game is over at once."""
    room: str = player.request(
        "create", {"game": game, "seats": 2, "turn_window": 600, "public": False}
    )["room"]["room"]
    player.request("add_bots", {"room": room, "kind": "strong"})
    player.go(room)
    player.page.wait_for_selector(f"#room[data-room='{room}'][data-mode='watch']")
    player.request("start", {"room": room})
    # (a whole game of two strong bots: seconds alone, more than the page's default 15 s
    # on a loaded machine: a `make test` here hit that once)
    player.page.wait_for_selector(f"#room[data-room='{room}'] .game-over", timeout=60_000)
    return room


def test_no_page_scrolls_sideways_on_a_phone_or_a_laptop(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    seated = new_player(players, browser, server, "Ada", LAPTOP)
    watcher = new_player(players, browser, server, "Bo", LAPTOP)
    found = overflows(seated, "the lobby")
    for game in GAMES:
        seated.page.goto(server.http + "/")
        room = seated.create(game, seats=2, bots=1, turn_window=600)
        assert seated.wait_move(-1)
        found += overflows(seated, f"{game}, seated")
        for size, name in ((PHONES[0], "phone"), (LAPTOP, "laptop")):
            seated.page.set_viewport_size(size)
            save_shot(seated.page.screenshot(), f"{game}-{name}.png")
        seated.page.set_viewport_size(LAPTOP)
        watcher.go(room)
        watcher.page.wait_for_selector(f"#room[data-room='{room}'][data-mode='watch'] .room-body")
        found += overflows(watcher, f"{game}, watching")
        bots_game(watcher, game)
        found += overflows(watcher, f"{game}, game over (watching)")

    # game over in a seat: alone at Qwinto, four failed throws end it
    seated.page.goto(server.http + "/")
    seated.create("qwinto", seats=1, bots=0, turn_window=600)
    seen = -1
    while seated.wait_move(seen):
        seen = seated.legal_count()
        page = seated.page
        page.click("button[data-action='roll'], button[data-action='pass']")
    seated.page.wait_for_selector(".game-over")
    found += overflows(seated, "qwinto, game over (seated)")
    assert found == []


def hit(player: Player, selector: str) -> None:
    """The element is on screen, inside the viewport, and a click at its centre reaches it
    (nothing sticky lies over it)."""
    page = player.page
    target = page.locator(selector)
    assert target.is_visible(), selector
    box = target.bounding_box()
    assert box is not None
    size = page.viewport_size
    assert size is not None
    assert box["x"] >= 0 and box["x"] + box["width"] <= size["width"], (selector, box)
    assert box["y"] >= 0 and box["y"] + box["height"] <= size["height"], (selector, box)
    reached = page.evaluate(
        """([sel, x, y]) => {
            const el = document.elementFromPoint(x, y);
            return Boolean(el && el.closest(sel));
        }""",
        [selector, box["x"] + box["width"] / 2, box["y"] + box["height"] / 2],
    )
    assert reached, f"{selector} is covered at its centre"


def test_qwirkle_board_prompt_and_hand_work_together_on_a_laptop(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    cy = new_player(players, browser, server, "Cy", LAPTOP)
    cy.create("qwirkle", seats=2, bots=1, turn_window=600)
    assert cy.wait_move(-1)
    page = cy.page
    place = "button[data-action='place']"
    undo = "button[data-key='undo']"
    # scrolled down to the hand, then up to the board: prompt, Place and Take back stay
    # on screen and clickable, not under the sticky turn bar
    for where in ("document.body.scrollHeight", "0"):
        page.evaluate(f"window.scrollTo(0, {where})")
        page.locator(".hand").scroll_into_view_if_needed()
        for selector in (".hand-tile[data-hand='0']", ".play .prompt", place, undo):
            hit(cy, selector)
        hit(cy, ".board-viewport")
    # and they work from there: a tile to a highlighted cell, Take back, again, Place
    playable = ".hand-tile:not([disabled])"
    if page.locator(playable).count():
        page.locator(playable).first.click()
        page.locator("button.cell.target").first.click()
        hit(cy, undo)
        page.click(undo)
        assert page.locator(".board .cell.staged").count() == 0
        while page.locator(place).is_disabled():
            page.locator(playable).first.click()
            page.locator("button.cell.target").first.click()
        hit(cy, place)
        seen = cy.legal_count()
        page.click(place)
        cy.wait_legal(seen)
        cy.wait_log("You place")


CENTRED = """() => {
    const frame = document.querySelector('.board-viewport');
    const tiles = [...frame.querySelectorAll('.cell.laid')].map((t) => t.getBoundingClientRect());
    if (!tiles.length) return false;
    const f = frame.getBoundingClientRect();
    const pitch = tiles[0].width + 2;
    const dx = (Math.min(...tiles.map((r) => r.left)) + Math.max(...tiles.map((r) => r.right))) / 2
        - (f.left + frame.clientLeft + frame.clientWidth / 2);
    const dy = (Math.min(...tiles.map((r) => r.top)) + Math.max(...tiles.map((r) => r.bottom))) / 2
        - (f.top + frame.clientTop + frame.clientHeight / 2);
    return Math.abs(dx) <= pitch / 2 + 1 && Math.abs(dy) <= pitch / 2 + 1;
}"""


def test_a_spectator_sees_the_qwirkle_board_centred_on_its_tiles(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    di = new_player(players, browser, server, "Di", LAPTOP)
    bots_game(di, "qwirkle")  # watched from the start to the end: many tiles on the board
    page = di.page
    assert page.locator(".board .cell.laid").count() >= 12
    for size in (LAPTOP, PHONES[0]):
        page.set_viewport_size(size)
        page.wait_for_function(CENTRED)
    page.set_viewport_size(LAPTOP)


ACTIONS = """() => {
    const bad = [];
    for (const row of document.querySelectorAll('table.rooms tr[data-room]')) {
        for (const el of row.querySelectorAll('[data-key^="join-"], [data-key^="watch-"]')) {
            // scrolled to by the page only (scrollIntoView would scroll the table's frame too)
            const before = el.getBoundingClientRect();
            window.scrollTo(0, window.scrollY + before.top - window.innerHeight / 2);
            const r = el.getBoundingClientRect();
            const top = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
            if (r.left < 0 || r.right > window.innerWidth || !(top && el.contains(top)))
                bad.push(`${el.textContent} of ${row.dataset.room}: x ${r.left}..${r.right}`);
        }
    }
    const frame = document.querySelector('.table-wrap');
    if (frame.scrollWidth > frame.clientWidth + 1)
        bad.push(`the rooms scroll sideways: ${frame.scrollWidth} in ${frame.clientWidth}`);
    return bad;
}"""
BROKEN_NAMES = """(names) => {
    const bad = [];
    const texts = document.createTreeWalker(
        document.querySelector('table.rooms tbody'), NodeFilter.SHOW_TEXT);
    for (let t = texts.nextNode(); t; t = texts.nextNode()) {
        for (const name of names) {
            for (let i = t.data.indexOf(name); i >= 0; i = t.data.indexOf(name, i + 1)) {
                const range = document.createRange();
                range.setStart(t, i);
                range.setEnd(t, i + name.length);
                const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
                if (lines.size > 1) bad.push(`${name}: ${lines.size} lines`);
            }
        }
    }
    return bad;
}"""


def test_a_phone_shows_each_rooms_join_and_watch_and_whole_seat_names(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    """Issue 33: at 390 px the rooms' table was 566 px wide in a 340 px frame, its Join and
    Watch out of sight, and "strong-bot-1" broke at its hyphens. On a phone each room shows
    its actions on screen, with no sideways scrolling, and every seat's name on one line."""
    anne = "Anne-Marie Lefebvre-Dupont"
    host = new_player(players, browser, server, anne, PHONES[1])
    room: str = host.request(
        "create",
        {
            "game": "qwixx",
            "seats": 4,
            "turn_window": 600,
            "public": True,
            "name": "Friday evening dice with the neighbours",
        },
    )["room"]["room"]
    host.request("join", {"room": room, "seat": 0, "name": anne})
    host.request("add_bots", {"room": room, "kind": "strong", "count": 2})
    bo = new_player(players, browser, server, "Bo", PHONES[1])
    page = bo.page
    page.wait_for_selector(f"tr[data-room='{room}'] [data-key='join-{room}']")
    listed = bo.request("rooms", {})["rooms"]
    names = sorted({s["name"] for r in listed for s in r["seats"] if s["kind"] != "open"})
    assert anne in names and "strong-bot-1" in names
    found = []
    for size in PHONES:
        page.set_viewport_size(size)
        found += [f"{size['width']} px: {p}" for p in page.evaluate(ACTIONS)]
        found += [f"{size['width']} px: {p}" for p in page.evaluate(BROKEN_NAMES, names)]
    assert found == [], "\n".join(found)


MAIN_COLUMN = """() => {
    const play = document.querySelector('.play').getBoundingClientRect();
    const side = document.querySelector('.side').getBoundingClientRect();
    return {
        play: [play.left, play.right],
        side: [side.left, side.right],
        sheets: [...document.querySelectorAll('.seat-panel[data-seat]')].map((p) => {
            const r = p.getBoundingClientRect();
            const sheet = p.querySelector('.sheet');
            return {
                seat: p.dataset.seat,
                x: [r.left, r.right],
                scrolls: sheet.scrollWidth > sheet.clientWidth + 1,
            };
        }),
    };
}"""


@pytest.mark.parametrize("game", ["qwinto", "qwixx", "yamb"])
def test_a_spectator_sees_the_sheets_in_the_main_column_on_a_laptop(
    players: list[Player], browser: Browser, server: ServerProcess, game: str
) -> None:
    """Issue 33: a spectator at 1280 x 720 had every sheet in the narrow side column and
    only the dice in the wide one. The sheets are in the main column, as a seated player's
    own is, each whole (not scrolled inside itself) and at least a third of its width."""
    ed = new_player(players, browser, server, "Ed", LAPTOP)
    bots_game(ed, game)
    m = ed.page.evaluate(MAIN_COLUMN)
    (left, right), side = m["play"], m["side"]
    assert right - left > side[1] - side[0]  # the main column is the wide one
    assert [s["seat"] for s in m["sheets"]] == ["0", "1"]
    for s in m["sheets"]:
        x0, x1 = s["x"]
        assert left - 0.5 <= x0 and x1 <= right + 0.5, (s, m["play"])
        assert x1 - x0 >= (right - left) / 3, (s, m["play"])
        assert not s["scrolls"], s
