"""Each game's presentation (rules/NAME/text.py): move numbers, box numbers, tiles."""

from __future__ import annotations

from typing import Any

import pytest

from dicehall.rules import Presentation, game_names, get_game, presentation
from dicehall.rules.qwinto.sheet import BLOCKED, render
from dicehall.rules.qwinto.text import with_box_numbers
from dicehall.rules.qwirkle.text import tile_text
from dicehall.rules.qwixx.sheet import COLOURS as QWIXX_ROWS
from dicehall.rules.yamb.table import COLUMNS, ROWS

QWINTO_ROWS = ("red", "yellow", "blue")


def every_action(game: str) -> list[dict[str, Any]]:
    """Every action of a game with a fixed set of them."""
    if game == "qwinto":
        rolls = [["red"], ["yellow"], ["blue"], ["red", "yellow"], ["red", "blue"]]
        rolls += [["yellow", "blue"], ["red", "yellow", "blue"]]
        enters = [{"type": "enter", "row": r, "box": b} for r in QWINTO_ROWS for b in range(10)]
        others = [{"type": "reroll"}, {"type": "pass"}]
        return [*({"type": "roll", "dice": d} for d in rolls), *enters, *others]
    if game == "qwixx":
        marks = [{"type": "mark", "row": r, "number": n} for r in QWIXX_ROWS for n in range(2, 13)]
        return [*marks, {"type": "pass"}]
    holds = [[i for i in range(6) if mask >> i & 1] for mask in range(63)]
    return [
        *({"type": "write", "column": c, "row": r} for c in COLUMNS for r in ROWS),
        *({"type": "call", "row": r} for r in ROWS),
        *({"type": "roll", "hold": h} for h in holds),
    ]


@pytest.mark.parametrize("game", game_names())
def test_every_game_carries_its_presentation(game: str) -> None:
    assert presentation(game) is get_game(game).text
    assert isinstance(presentation(game), Presentation)


def test_an_unknown_game_reads_with_the_shared_words() -> None:
    text = presentation("no such game")
    assert text.legend is None and text.number({"type": "pass"}) is None
    assert text.rolled_text([1, 2], roll=2) == "1 2  (sum 3; roll 2 of 3)"


@pytest.mark.parametrize("game", ["qwinto", "qwixx", "yamb"])
def test_a_fixed_numbering_gives_every_action_its_own_number(game: str) -> None:
    text = presentation(game)
    numbers = [text.number(a) for a in every_action(game)]
    assert text.numbered and None not in numbers
    assert len(set(numbers)) == len(numbers)


def test_a_qwinto_box_number_ends_in_the_box_and_qwixx_pass_is_last() -> None:
    assert presentation("qwinto").number({"type": "enter", "row": "yellow", "box": 3}) == 23
    assert presentation("qwinto").number({"type": "roll", "dice": ["red", "yellow", "blue"]}) == 7
    assert presentation("qwixx").number({"type": "pass"}) == 45
    assert presentation("yamb").number({"type": "roll", "hold": []}) == 92
    assert presentation("qwinto").number({"type": "enter", "row": ["red"], "box": 3}) is None


def test_each_qwinto_box_number_sits_under_its_box() -> None:
    rows = [[0] * 10 for _ in range(3)]
    for r in range(3):
        for b in range(10):
            rows[r][b] = 0 if b == BLOCKED[r] else r * 6 + b - (b > BLOCKED[r]) + 1
    lines = with_box_numbers(render(rows, 0, "Ann")).split("\n")
    assert len(lines) == 12
    for r, at in enumerate((2, 5, 8)):
        row, ruler = lines[at], lines[at + 1]
        assert row.startswith(("Red", "Yellow", "Blue")[r]) and "box" in ruler
        walls = [i for i, c in enumerate(row) if c in "|%"]
        for b in range(10):
            under = ruler[walls[b] + 1 : walls[b] + 3]
            assert under == ("  " if b == BLOCKED[r] else f"{b:2d}"), (row, ruler)


def test_a_qwirkle_tile_is_two_letters_and_its_cell() -> None:
    assert tile_text({"color": "purple", "shape": "clover", "x": -1, "y": 2}) == "Pl@-1,2"
    assert presentation("qwirkle").describe({"type": "swap", "count": 2}) == "swap 2 tiles"
    assert presentation("qwirkle").describe({"type": "pass"}) is None
