"""The pure parts of `dicehall play`: numbering, typing, drawing, and the prompt line."""

from __future__ import annotations

import io
import random
import re
from typing import Any

import pytest

from dicehall.clients.terminal_console import CLEAR_LINE, Console
from dicehall.clients.terminal_moves import Numbering, describe, hint, parse
from dicehall.clients.terminal_view import dice_line, event_text, legend, sheets, status_line
from dicehall.rules import get_game
from tests.rules.test_text import every_action


@pytest.mark.parametrize("game", ["qwinto", "qwixx", "yamb"])
def test_every_move_has_a_number_of_its_own_whatever_else_is_offered(game: str) -> None:
    actions = every_action(game)
    numbering = Numbering(game)
    numbers = {describe(game, a): numbering.number(a) for a in actions}
    assert len(set(numbers.values())) == len(actions)
    rng = random.Random(7)
    for window in range(20):
        offered = rng.sample(actions, rng.randint(1, len(actions)))
        listed = numbering.listing(window, offered)
        assert [n for n, _ in listed] == sorted(n for n, _ in listed)
        assert all(numbers[describe(game, a)] == n for n, a in listed)


def test_a_qwinto_box_number_ends_in_the_box_and_qwixx_pass_is_last() -> None:
    numbering = Numbering("qwinto")
    assert numbering.number({"type": "enter", "row": "yellow", "box": 3}) == 23
    assert numbering.number({"type": "roll", "dice": ["red", "yellow", "blue"]}) == 7
    assert Numbering("qwixx").number({"type": "pass"}) == 45
    assert Numbering("yamb").number({"type": "roll", "hold": []}) == 92


def test_qwirkle_moves_keep_the_number_first_given_until_the_window_closes() -> None:
    place = [
        {"type": "place", "tiles": [{"color": "red", "shape": s, "x": 0, "y": 0}]}
        for s in ("star", "cross")
    ]
    numbering = Numbering("qwirkle")
    first = numbering.listing(4, [place[0], place[1]])
    assert numbering.listing(4, [place[1]]) == [first[1]]
    assert numbering.listing(5, [place[1]]) == [(1, place[1])]


def test_a_move_is_typed_as_listed_by_number_without_its_verb_or_as_json() -> None:
    listed = Numbering("qwinto").listing(1, [
        {"type": "enter", "row": "red", "box": 3},
        {"type": "enter", "row": "blue", "box": 3},
        {"type": "pass"},
    ])  # fmt: skip
    red = {"type": "enter", "row": "red", "box": 3}
    assert parse("qwinto", "13", listed) == red
    assert parse("qwinto", "  enter   red 3 ", listed) == red
    assert parse("qwinto", "red 3", listed) == red
    assert parse("qwinto", "1", listed) is None, "a number not offered"
    assert parse("qwinto", "3", listed) is None
    assert parse("qwinto", "pass", listed) == {"type": "pass"}
    assert parse("qwinto", '{"type": "pass"}', listed) == {"type": "pass"}
    assert parse("qwinto", "{nope", listed) is None
    assert describe("yamb", {"type": "roll", "hold": []}) == "roll"
    assert describe("yamb", {"type": "roll", "hold": [0, 2]}) == "roll hold 0 2"
    tiles = [{"color": "red", "shape": "star", "x": 3, "y": 0}, {"color": "blue", "shape": "cross"}]
    assert describe("qwirkle", {"type": "place", "tiles": tiles[:1]}) == "place Rt@3,0"
    assert describe("qwirkle", {"type": "swap", "tiles": tiles[1:]}) == "swap Bx"


def qwinto_view() -> dict[str, Any]:
    state = get_game("qwinto").new_state(2, seed=b"\x01" * 32)
    return dict(state.view(0))


def test_the_dice_are_one_line_with_their_sum() -> None:
    assert dice_line("qwinto", {"roll": {"red": 3, "yellow": 5, "blue": 2}}, 0) == (
        "Dice: red 3 · yellow 5 · blue 2  (sum 10)"
    )
    qwixx = {"white1": 3, "white2": 5, "red": 2, "yellow": 6, "blue": 4}
    assert dice_line("qwixx", {"dice": qwixx}, 0) == (
        "Dice: white 3 · white 5 (white sum 8) · red 2 · yellow 6 · blue 4"
    )
    yamb = {"tables": [{"dice": [3, 3, 6, 1, 5, 3], "rolls": 2}]}
    assert dice_line("yamb", yamb, 0, held=[0, 2]) == (
        "Dice (roll 2 of 3): 0:3 held · 1:3 · 2:6 held · 3:1 · 4:5 · 5:3  (sum 21)"
    )
    assert dice_line("qwinto", {"roll": None}, 0) is None
    assert hint("yamb", {"type": "write", "column": "up", "row": "3"}, yamb, 0) == "scores 9"
    assert hint("yamb", {"type": "roll", "hold": [2, 4]}, yamb, 0) == "keep 6 5"


def test_the_status_says_whose_turn_who_acts_and_the_scores() -> None:
    view = {"window": 7, "active": 1, "scores": [12, 7]}
    line = status_line(7, [0, 1], view, ["Ann", "Bo"], 0)
    assert line == "* turn window 7: Bo's turn; to act: Ann (you), Bo · scores: Ann 12 · Bo 7"
    assert status_line(7, [0], {**view, "active": 0}, ["Ann", "Bo"], 0).startswith(
        "* turn window 7: your turn; to act: Ann (you) · "
    )
    assert "turn;" not in status_line(8, [1], view, ["Ann", "Bo"], 0), "a view of another window"


def test_the_signs_of_the_sheets_have_a_legend() -> None:
    assert "%" in (legend("qwinto") or "") and "bonus" in (legend("qwinto") or "")
    assert re.search(r"lock: U open, L locked", legend("qwixx") or "")
    view = qwinto_view()
    drawn = sheets("qwinto", view, ["Ann", "Bo"], 0)
    assert "box" in drawn[0] and "box" not in drawn[1], "numbers under the player's rows only"


def test_events_read_as_sentences() -> None:
    def name(seat: int) -> str:
        return ["Ann", "Bo"][seat]

    write = {"type": "applied", "seat": 1, "action": {"type": "write", "column": "up", "row": "3"}}
    assert event_text("yamb", {**write, "value": 9}, name) == "Bo: write up 3 = 9"
    assert event_text(
        "yamb", {"type": "rolled", "seat": 0, "dice": [1, 2, 3, 4, 5, 6], "roll": 1}, name
    ) == ("Ann rolled 1 2 3 4 5 6  (sum 21; roll 1 of 3)")
    assert event_text("qwinto", {"type": "rolled", "dice": {"red": 4, "blue": 6}}, name) == (
        "rolled red 4 · blue 6  (sum 10)"
    )
    assert event_text("qwinto", {"type": "timeout", "seat": 0}, name) is None
    assert (
        event_text("qwixx", {"type": "locked", "seat": 0, "row": "red"}, name) == "Ann locked red"
    )


def live_console() -> tuple[Console, io.StringIO, list[str | None]]:
    out = io.StringIO()
    console = Console(out)
    console.live = True  # (a terminal's behaviour, drawn into a string)
    lines: list[str | None] = []
    console.start(lines.append)  # (no keyboard: keys come from the test)
    return console, out, lines


def test_an_event_prints_above_the_prompt_and_the_typed_text_is_kept() -> None:
    console, out, lines = live_console()
    left = ["[9s] "]
    console.prompt(lambda: f"{left[0]}your move: ")
    for key in "enter red 33\x7f\x1b[D\x1bOA\x1b[3~":
        console.key(key)
    console.say("* Bo: pass")
    assert out.getvalue().endswith(CLEAR_LINE + "* Bo: pass\n[9s] your move: enter red 3")
    mark = len(out.getvalue())
    console.tick()
    assert len(out.getvalue()) == mark, "nothing changed: nothing redrawn"
    left[0] = "[8s] "
    console.tick()
    assert out.getvalue()[mark:] == CLEAR_LINE + "[8s] your move: enter red 3"
    console.key("\n")
    assert lines == ["enter red 3"] and console.typed == ""
    console.say("* Bo answered")
    assert out.getvalue().endswith("enter red 3\n* Bo answered\n"), "no prompt after Enter"
    console.key("\x04")
    assert lines == ["enter red 3", None]


def test_a_prompt_whose_window_closed_goes_with_what_was_typed() -> None:
    console, out, _ = live_console()
    console.prompt(lambda: "your move: ")
    for key in "12\x15pass":
        console.key(key)
    assert console.typed == "pass"
    console.drop_prompt()
    assert console.typed == "" and out.getvalue().endswith(CLEAR_LINE)


def test_without_a_terminal_lines_are_plain_and_the_prompt_shown_again() -> None:
    out = io.StringIO()
    console = Console(out)
    console.say("* game on")
    console.prompt(lambda: "your move: ")
    console.say("* Bo: pass")
    assert out.getvalue() == "* game on\nyour move: \n* Bo: pass\nyour move: "
