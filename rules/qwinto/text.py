"""Qwinto at a terminal: box numbers under the player's rows, the legend, dice, numbers.

The sheet itself has no box numbers, and `enter red 3` names box 3, so the player's own
rows get a ruler while the game runs. Moves have one number for the whole game: the dice
choices 1..7, reroll 8, pass 9, then 10 + box (red), 20 + box (yellow), 30 + box (blue),
so the last digit is the box number printed under the row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..text import Action, Presentation, Render, Tally, View, index
from .sheet import BLOCKED, BOXES, COLOUR_INDEX, COLOURS, OFFSET, empty_sheet, score

ROLLS: tuple[tuple[str, ...], ...] = (
    ("red",),
    ("yellow",),
    ("blue",),
    ("red", "yellow"),
    ("red", "blue"),
    ("yellow", "blue"),
    ("red", "yellow", "blue"),
)
"""The dice choices, numbered 1..7 (the engine's order); reroll is 8, pass 9."""


def ruler(row: int) -> str:
    """The box numbers of a row, each under its box (global column c starts at character
    7 + 3c: a delimiter, then the box's two characters)."""
    start = 7 + 3 * OFFSET[row]
    boxes = "".join("   " if b == BLOCKED[row] else f" {b:2d}" for b in range(BOXES))
    return f"{'box':>{start - 1}} {boxes}".rstrip()


def with_box_numbers(sheet: str) -> str:
    """A canonical sheet with a line of box numbers under each of its three rows."""
    rows = {2: 0, 4: 1, 6: 2}  # the red, yellow and blue lines of the canonical text
    out: list[str] = []
    for i, line in enumerate(sheet.split("\n")):
        out.append(line)
        if i in rows:
            out.append(ruler(rows[i]))
    return "\n".join(out)


def dice_text(roll: Mapping[str, int]) -> str:
    parts = [f"{c} {roll[c]}" for c in COLOURS if c in roll]
    return " · ".join(parts) + f"  (sum {sum(roll.values())})"


class QwintoTally(Tally):
    """Each seat's sheet as its `enter`s wrote it: the sum of the last roll in the box."""

    def __init__(self, seats: int, options: Mapping[str, Any]) -> None:
        super().__init__(seats, options)
        self.sheets = [empty_sheet() for _ in range(seats)]
        self.sum = 0

    def feed(self, event: Mapping[str, Any]) -> None:
        if event.get("type") == "rolled" and isinstance(event.get("dice"), Mapping):
            self.sum = sum(event["dice"].values())
        super().feed(event)

    def applied(self, seat: int, action: Mapping[str, Any], event: Mapping[str, Any]) -> None:
        row = action.get("row")
        if action.get("type") == "enter" and row in COLOUR_INDEX:
            self.sheets[seat][COLOUR_INDEX[row]][int(action["box"])] = self.sum

    def scores(self) -> list[int]:
        return [score(self.sheets[s], self.failed[s]) for s in range(self.seats)]


class QwintoText(Presentation):
    numbered = True
    legend = (
        "Legend: % edges a bonus box (when the three boxes of its column are filled it\n"
        "scores again); XX is blocked. The numbers under your rows are the boxes to type\n"
        "(`enter red 3`, or its number from the list: 13)."
    )

    def sheets(
        self, view: View, names: Sequence[str], seat: int | None, render: Render
    ) -> list[str]:
        drawn = super().sheets(view, names, seat, render)
        if seat is not None and seat < len(drawn) and not view.get("over"):
            drawn[seat] = with_box_numbers(drawn[seat])
        return drawn

    def dice_line(self, view: View, seat: int | None, held: Sequence[int] = ()) -> str | None:
        return "Dice: " + dice_text(view["roll"]) if view.get("roll") else None

    def rolled_text(self, dice: object, roll: object = None) -> str:
        return dice_text(dice) if isinstance(dice, Mapping) else super().rolled_text(dice, roll)

    def number(self, action: Action) -> int | None:
        kind = action.get("type")
        if kind == "roll":
            dice = tuple(action.get("dice") or ())
            return ROLLS.index(dice) + 1 if dice in ROLLS else None
        if kind in ("reroll", "pass"):
            return 8 if kind == "reroll" else 9
        row, box = index(COLOURS, action.get("row")), action.get("box")
        if kind == "enter" and row is not None and isinstance(box, int) and 0 <= box <= 9:
            return 10 * (row + 1) + box
        return None

    def hint(self, action: Action, view: View, seat: int | None) -> str:
        kind = action.get("type")
        if kind == "enter" and view.get("sum"):
            return f"writes {view['sum']}"
        if kind == "pass" and view.get("active") == seat and view.get("phase") != "choose":
            return "a failed throw, as the active seat"
        return "the same dice again" if kind == "reroll" else ""

    def tally(self, seats: int, options: Mapping[str, Any]) -> Tally:
        return QwintoTally(seats, options)


TEXT = QwintoText()
