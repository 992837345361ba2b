"""The web client shows the games as their paper sheets and rules do, in a real headless
Chromium: the Qwixx lock box is a padlock and the boxes a mark skipped are closed (on
screen and for screen readers), a Qwixx cross stays inside its box with its number
readable over it, each time-out is logged once, the lobby offers the publisher's rules
(the `official` presets) in one click and the strong house bot as the default opponent,
its form keeps what is typed in it whatever the lobby redraws, and the demo rooms
(`--demo-rooms`) seat the strong bots.

(The Yamb column labels are checked with the Yamb turn in test_web.py, and every test of
both modules checks that no log line speaks the protocol's words: webpage.WIRE_WORDS.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize

from tests.support.servers import ServerProcess, running_server

from .webpage import Browser, Page, Player, new_player

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


def next_lobby_refresh(page: Page) -> None:
    """Wait for the lobby's next periodic refresh (every 3 s), which draws the rooms anew."""
    page.evaluate("() => { document.querySelector('.lobby-side h2').dataset.seen = '1'; }")
    page.wait_for_function("() => !document.querySelector('.lobby-side h2[data-seen]')")


FOCUS = "() => [document.activeElement.id, document.activeElement.selectionStart]"


def test_the_lobby_form_keeps_what_is_typed_across_its_redraws(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    """Issue 33: a changed Seats redrew the form, so Tab to House bots left the focus on
    the page and the 2 typed there went nowhere; the refresh of the rooms every 3 s redrew
    it too (the caret, and a number not yet committed, lost). What is typed stays where it
    is typed, and the limits that hang on it follow."""
    eve = new_player(players, browser, server, "Eve")
    page, keys = eve.page, eve.page.keyboard

    def type_over(text: str) -> None:
        keys.press("Control+a")
        keys.type(text)

    page.click("#f-seats")
    type_over("3")
    keys.press("Tab")
    assert page.evaluate(FOCUS)[0] == "f-bots"
    type_over("2")
    assert page.input_value("#f-bots") == "2"
    assert page.get_attribute("#f-bots", "max") == "2"  # 3 seats leave room for 2 bots
    keys.press("Tab")
    assert page.input_value("#f-bots") == "2"
    # fewer seats: the house bots follow them down
    page.click("#f-seats")
    type_over("2")
    keys.press("Tab")
    assert page.evaluate(FOCUS)[0] == "f-bots"
    assert page.input_value("#f-bots") == "1" and page.get_attribute("#f-bots", "max") == "1"

    # the room's name, the caret moved back into it: a refresh, and the typing goes on there
    page.click("#f-name")
    keys.type("Friday dice")
    keys.press("Home")
    for _ in range(6):
        keys.press("ArrowRight")
    next_lobby_refresh(page)
    assert page.evaluate(FOCUS) == ["f-name", 6]
    keys.type(" night")
    assert page.input_value("#f-name") == "Friday night dice"
    # a number typed and not yet committed (no `change` yet) outlives a refresh too
    page.click("#f-window")
    type_over("45")
    next_lobby_refresh(page)
    assert page.evaluate(FOCUS)[0] == "f-window"
    assert page.input_value("#f-window") == "45"
    keys.press("Tab")

    page.click("#create-room")
    page.wait_for_selector("#room[data-seat='0']")
    info = page.evaluate("window.dicehall.view.info")
    assert (info["name"], len(info["seats"]), info["turn_window"]) == ("Friday night dice", 2, 45)


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


CROSSES = """() => {
    const lum = (colour) => {
        const [r, g, b] = colour.match(/[\\d.]+/g).slice(0, 3).map((v) => {
            const c = Number(v) / 255;
            return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const textRects = (root, keep) => {
        const out = [];
        const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let t = walk.nextNode(); t; t = walk.nextNode()) {
            if (!keep(t)) continue;
            const range = document.createRange();
            range.selectNodeContents(t);
            out.push({node: t, rect: range.getBoundingClientRect()});
        }
        return out;
    };
    return [...document.querySelectorAll('.qwixx-sheet .box.marked')].map((box) => {
        box.scrollIntoView({block: 'center', inline: 'nearest'}); // (hit testing: on screen)
        const b = box.getBoundingClientRect();
        const inside = (r) => r.left >= b.left - 0.5 && r.right <= b.right + 0.5
            && r.top >= b.top - 0.5 && r.bottom <= b.bottom + 0.5;
        const cross = box.querySelector('.cross');
        // the cross as drawn: its box, its parts' and its glyphs' (a text's line box)
        const drawn = [cross, ...cross.querySelectorAll('*')].map((e) => e.getBoundingClientRect())
            .concat(textRects(cross, () => true).map((t) => t.rect));
        const [number] = textRects(box, (t) => !cross.contains(t) && /\\d/.test(t.data));
        const g = number.rect;
        const shown = number.node.parentElement;
        // hit testing stands in for the order of painting: what is on top at the
        // number's centre (the cross takes hits, so it would be found there if on top)
        const top = document.elementFromPoint((g.left + g.right) / 2, (g.top + g.bottom) / 2);
        const fg = lum(getComputedStyle(shown).color);
        const bg = lum(getComputedStyle(box).backgroundColor);
        return {
            box: box.getAttribute('aria-label'),
            crossInside: drawn.every(inside),
            crossTakesHits: getComputedStyle(cross).pointerEvents !== 'none',
            numberInside: inside(g),
            numberOnTop: top === shown,
            contrast: Math.round(((Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05)) * 10) / 10,
        };
    });
}"""
GOOD_CROSS = {
    "crossInside": True,
    "crossTakesHits": True,
    "numberInside": True,
    "numberOnTop": True,
}
SIZES: list[ViewportSize] = [
    {"width": 360, "height": 800},
    {"width": 390, "height": 844},
    {"width": 414, "height": 896},
    {"width": 1280, "height": 720},
]


def test_a_qwixx_cross_stays_in_its_box_and_leaves_its_number_readable(
    players: list[Player], browser: Browser, server: ServerProcess
) -> None:
    """Issue 33: the cross on a marked number covered it (the number grey under it) and
    spilled out of its box (a phone's boxes, the other seats' smaller ones). On every box
    marked, the player's and the others', at phone and laptop sizes: the cross is inside
    its box and the number is on top of it, inside it, dark on the box (4.5:1 at least)."""
    fay = new_player(players, browser, server, "Fay")
    fay.create("qwixx", seats=2, bots=1, turn_window=600)
    page = fay.page
    # marks until both sheets have one (the bot's: in a smaller box, beside the player's)
    seen = -1
    for _ in range(30):
        if page.locator(".seat-panel:not(.mine) .box.marked").count():
            break
        assert fay.wait_move(seen)
        seen = fay.legal_count()
        legal = page.locator(".seat-panel.mine button.box.legal")
        if legal.count():
            legal.first.click()
        else:
            page.click("button[data-action='pass']")
        fay.wait_legal(seen)
    else:
        pytest.fail("the bot marked nothing in 30 windows")
    page.locator(".seat-panel.mine .box.marked").first.wait_for()
    found = []
    for size in SIZES:
        page.set_viewport_size(size)
        for box in page.evaluate(CROSSES):
            wrong = {k: v for k, v in box.items() if k in GOOD_CROSS and v != GOOD_CROSS[k]}
            if wrong or box["contrast"] < 4.5:
                found.append(f"{size['width']} px, {box['box']}: {wrong}, {box['contrast']}:1")
    assert found == [], "\n".join(found)
