"""The moves of `dicehall play`: how each is typed, the number it keeps, what it would do.

A number must name the move the player read. The legal actions change within a window (a
turn may roll, then hold, call or write) and between windows, so numbering them by their
place in the list of the moment would let `64` mean one move on one prompt and another on
the next. A game with a fixed set of actions numbers each by its place in that set instead
(its presentation's `number`, rules/NAME/text.py), so a move has one number for the whole
game; a game whose moves are countless has them numbered in the order first listed in a
window, each keeping its number until the window closes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dicehall.rules import presentation

Action = Mapping[str, Any]


def describe(game: str, action: Action) -> str:
    """An action as the player types it, in the words of the sheet: `enter red 3` (the box
    number under the row), `mark green 7` (as printed), `write free1 5` (column, row),
    `roll hold 0 2` (dice positions); a game's own (Qwirkle's tiles) as its presentation
    words them."""
    own = presentation(game).describe(action)
    if own is not None:
        return own
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
    return str(kind)


Numbered = tuple[int, dict[str, Any]]
"""A move on offer and its number."""


class Numbering:
    """The numbers of the moves on offer; one per game, told each window's id."""

    FIRST_UNLISTED = 1000
    """Numbers for actions a fixed numbering does not know (a newer server's), above it."""

    def __init__(self, game: str) -> None:
        self.game = game
        self.text = presentation(game)
        self.window: int | None = None
        self.memo: dict[str, int] = {}
        """Numbers given in this window to actions without a fixed number."""

    def number(self, action: Action) -> int:
        number = self.text.number(action)
        if number is not None:
            return number
        key = json.dumps(action, sort_keys=True)
        if key not in self.memo:
            base = self.FIRST_UNLISTED if self.text.numbered else 0
            self.memo[key] = base + len(self.memo) + 1
        return self.memo[key]

    def listing(self, window: int | None, actions: list[dict[str, Any]]) -> list[Numbered]:
        """The actions with their numbers, in the order of the numbers."""
        if window != self.window:
            self.window, self.memo = window, {}
        return sorted(((self.number(a), a) for a in actions), key=lambda item: item[0])


def parse(game: str, text: str, listed: list[Numbered]) -> dict[str, Any] | None:
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
        if describe(game, action) == text:
            return action
    short = [a for _, a in listed if describe(game, a).split(" ", 1)[-1] == text]
    return short[0] if len(short) == 1 and " " in describe(game, short[0]) else None


def hint(game: str, action: Action, view: Mapping[str, Any], seat: int | None) -> str:
    """What a move would do with the dice on the table, or "" where that says nothing new."""
    return presentation(game).hint(action, view, seat)
