"""Qwixx at a terminal: the legend of the lock column, the dice, one number per move.

A move keeps its number for the whole game: 11 x row + the box's place in it + 1 for a
mark (as printed: red counts up, blue down), 45 for pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..text import Action, Presentation, Tally, View, index
from .sheet import BOX, COLOURS, ROW_OF, score


def dice_text(dice: Mapping[str, int]) -> str:
    whites = [dice[w] for w in ("white1", "white2") if w in dice]
    white = " · ".join(f"white {v}" for v in whites) + f" (white sum {sum(whites)})"
    return " · ".join([white, *(f"{c} {dice[c]}" for c in COLOURS if c in dice)])


class QwixxTally(Tally):
    """Each seat's marks (a bitmask of boxes per row) and locks (a bit per row)."""

    def __init__(self, seats: int, options: Mapping[str, Any]) -> None:
        super().__init__(seats, options)
        self.marks = [[0] * len(COLOURS) for _ in range(seats)]
        self.locks = [0] * seats

    def feed(self, event: Mapping[str, Any]) -> None:
        seat, row = event.get("seat"), event.get("row")
        locked = event.get("type") == "locked" and row in ROW_OF
        if locked and isinstance(seat, int) and 0 <= seat < self.seats:
            self.locks[seat] |= 1 << ROW_OF[event["row"]]
        super().feed(event)

    def applied(self, seat: int, action: Mapping[str, Any], event: Mapping[str, Any]) -> None:
        row = action.get("row")
        if action.get("type") == "mark" and row in ROW_OF:
            self.marks[seat][ROW_OF[row]] |= 1 << BOX[ROW_OF[row]][action["number"]]

    def scores(self) -> list[int]:
        return [score(self.marks[s], self.locks[s], self.failed[s]) for s in range(self.seats)]


class QwixxText(Presentation):
    numbered = True
    legend = (
        "Legend: XX is a marked box. The last column is the lock: U open, L locked (that\n"
        "player marked the row's last box; a row anyone locks closes for everyone). Type\n"
        "a row and a number as printed (`mark red 7`)."
    )

    def dice_line(self, view: View, seat: int | None, held: Sequence[int] = ()) -> str | None:
        return "Dice: " + dice_text(view["dice"]) if view.get("dice") else None

    def rolled_text(self, dice: object, roll: object = None) -> str:
        return dice_text(dice) if isinstance(dice, Mapping) else super().rolled_text(dice, roll)

    def event_text(self, event: Mapping[str, Any], who: str) -> str | None:
        if event.get("type") == "locked":
            return f"{who} locked {event.get('row')}"
        if event.get("type") == "row_closed":
            return f"the {event.get('row')} row is closed for everyone; its die leaves the game"
        return None

    def number(self, action: Action) -> int | None:
        kind = action.get("type")
        if kind == "pass":
            return 45
        row, number = index(COLOURS, action.get("row")), action.get("number")
        if kind == "mark" and row is not None and isinstance(number, int) and 2 <= number <= 12:
            return 11 * row + BOX[row][number] + 1
        return None

    def tally(self, seats: int, options: Mapping[str, Any]) -> Tally:
        return QwixxTally(seats, options)


TEXT = QwixxText()
