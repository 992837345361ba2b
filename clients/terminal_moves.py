"""The moves of `dicehall play`: how each is typed, the number it keeps, what it would do.

A number must name the move the player read. The legal actions change within a window (a
Yamb turn rolls, then holds, calls or writes; the calls go after the second roll) and
between windows, so numbering them by their place in the list of the moment would let `64`
mean `write down 1` on one prompt and another move on the next. Games with a fixed set of
actions number each action by its place in that set instead, so a move has one number for
the whole game: Qwinto's boxes are 10 + box (red), 20 + box (yellow), 30 + box (blue), so
the last digit is the box number printed under the row. Qwirkle's placements are countless:
they are numbered in the order first listed in a window and keep that number until the
window closes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dicehall.rules.qwinto.sheet import COLOURS as QWINTO_ROWS
from dicehall.rules.qwirkle.board import COLOR_LETTERS, COLORS, SHAPE_LETTERS, SHAPES
from dicehall.rules.qwixx.sheet import BOX as QWIXX_BOX
from dicehall.rules.qwixx.sheet import COLOURS as QWIXX_ROWS
from dicehall.rules.yamb.table import COLUMNS as YAMB_COLUMNS
from dicehall.rules.yamb.table import ROWS as YAMB_ROWS
from dicehall.rules.yamb.table import cell_value

Action = Mapping[str, Any]

QWINTO_ROLLS: tuple[tuple[str, ...], ...] = (
    ("red",),
    ("yellow",),
    ("blue",),
    ("red", "yellow"),
    ("red", "blue"),
    ("yellow", "blue"),
    ("red", "yellow", "blue"),
)
"""Qwinto's dice choices, numbered 1..7 (the engine's order); reroll is 8, pass 9."""


def tile_text(tile: Mapping[str, Any]) -> str:
    """A Qwirkle tile as the sheet prints it (`Rt`), with its cell when it has one."""
    text = COLOR_LETTERS[COLORS.index(tile["color"])] + SHAPE_LETTERS[SHAPES.index(tile["shape"])]
    return text + (f"@{tile['x']},{tile['y']}" if "x" in tile else "")


def describe(action: Action) -> str:
    """An action as the player types it, in the words of the sheet: `enter red 3` (the box
    number under the row), `mark green 7` (as printed), `write free1 5` (column, row),
    `roll hold 0 2` (dice positions), `place Rt@3,0` (tile letters and cell)."""
    kind = action["type"]
    if kind == "roll" and "dice" in action:
        return "roll " + " ".join(action["dice"])
    if kind == "roll":
        hold = action.get("hold") or []
        return "roll hold " + " ".join(str(i) for i in hold) if hold else "roll"
    if kind == "enter":
        return f"enter {action['row']} {action['box']}"
    if kind == "mark":
        return f"mark {action['row']} {action['number']}"
    if kind == "call":
        return f"call {action['row']}"
    if kind == "write":
        return f"write {action['column']} {action['row']}"
    if kind in ("place", "swap") and "tiles" in action:
        return f"{kind} " + " ".join(tile_text(t) for t in action["tiles"])
    if kind == "swap" and "count" in action:
        return f"swap {action['count']} tiles"
    return str(kind)


def _index(options: tuple[str, ...], value: object) -> int | None:
    return options.index(value) if isinstance(value, str) and value in options else None


def _qwinto_number(action: Action) -> int | None:
    kind = action.get("type")
    if kind == "roll":
        dice = tuple(action.get("dice") or ())
        return QWINTO_ROLLS.index(dice) + 1 if dice in QWINTO_ROLLS else None
    if kind in ("reroll", "pass"):
        return 8 if kind == "reroll" else 9
    row, box = _index(QWINTO_ROWS, action.get("row")), action.get("box")
    if kind == "enter" and row is not None and isinstance(box, int) and 0 <= box <= 9:
        return 10 * (row + 1) + box
    return None


def _qwixx_number(action: Action) -> int | None:
    kind = action.get("type")
    if kind == "pass":
        return 45
    row, number = _index(QWIXX_ROWS, action.get("row")), action.get("number")
    if kind == "mark" and row is not None and isinstance(number, int) and 2 <= number <= 12:
        return 11 * row + QWIXX_BOX[row][number] + 1
    return None


def _yamb_number(action: Action) -> int | None:
    kind = action.get("type")
    row = _index(YAMB_ROWS, action.get("row"))
    if kind == "write" and row is not None:
        column = _index(YAMB_COLUMNS, action.get("column"))
        return None if column is None else 13 * column + row + 1
    if kind == "call" and row is not None:
        return 79 + row
    hold = action.get("hold")
    if kind == "roll" and isinstance(hold, list) and all(isinstance(i, int) for i in hold):
        mask: int = sum(1 << i for i in set(hold))
        return 92 + mask
    return None


CANONICAL = {"qwinto": _qwinto_number, "qwixx": _qwixx_number, "yamb": _yamb_number}
"""Writes 1..78 come first in Yamb (column by column), then calls 79..91, then the rolls
92..154 (92 + the bitmask of the held positions), so a turn's first page shows the writes."""


Numbered = tuple[int, dict[str, Any]]
"""A move on offer and its number."""


class Numbering:
    """The numbers of the moves on offer; one per game, told each window's id."""

    FIRST_UNLISTED = 1000
    """Numbers for actions a fixed numbering does not know (a newer server's), above it."""

    def __init__(self, game: str) -> None:
        self.game = game
        self.window: int | None = None
        self.memo: dict[str, int] = {}
        """Numbers given in this window to actions without a fixed number."""

    def number(self, action: Action) -> int:
        fixed = CANONICAL.get(self.game)
        number = fixed(action) if fixed is not None else None
        if number is not None:
            return number
        key = json.dumps(action, sort_keys=True)
        if key not in self.memo:
            base = 0 if fixed is None else self.FIRST_UNLISTED
            self.memo[key] = base + len(self.memo) + 1
        return self.memo[key]

    def listing(self, window: int | None, actions: list[dict[str, Any]]) -> list[Numbered]:
        """The actions with their numbers, in the order of the numbers."""
        if window != self.window:
            self.window, self.memo = window, {}
        return sorted(((self.number(a), a) for a in actions), key=lambda item: item[0])


def parse(text: str, listed: list[Numbered]) -> dict[str, Any] | None:
    """What the player typed: a listed number, a move as listed (or without its first
    word when that names one move: `red 3` for `enter red 3`), or a JSON action; None if
    none of these."""
    text = " ".join(text.split())
    if text.isdigit():
        return next((a for n, a in listed if n == int(text)), None)
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None
    for _, action in listed:
        if describe(action) == text:
            return action
    short = [a for _, a in listed if describe(a).split(" ", 1)[-1] == text]
    return short[0] if len(short) == 1 and " " in describe(short[0]) else None


def hint(game: str, action: Action, view: Mapping[str, Any], seat: int | None) -> str:
    """What a move would do with the dice on the table, or "" where that says nothing new."""
    kind = action.get("type")
    if game == "qwinto":
        if kind == "enter" and view.get("sum"):
            return f"writes {view['sum']}"
        if kind == "pass" and view.get("active") == seat and view.get("phase") != "choose":
            return "a failed throw, as the active seat"
        return "the same dice again" if kind == "reroll" else ""
    if game != "yamb" or seat is None:
        return ""
    dice = view["tables"][seat].get("dice") if "tables" in view else None
    if kind == "roll":
        hold = action.get("hold") or []
        if not dice or not hold:
            return "all six dice"
        return "keep " + " ".join(str(dice[i]) for i in hold)
    if kind == "write" and dice and action.get("row") in YAMB_ROWS:
        return f"scores {cell_value(dice, YAMB_ROWS.index(action['row']))}"
    if kind == "call":
        return f"only {action.get('row')} may be written this turn"
    return ""
