"""Yamb at a terminal: the legend of the table, the dice by position, one number per move.

The legal moves change within a turn (roll, then hold, call or write), so each has a
number for the whole game: the writes 1..78 first (column by column, so a turn's first
page shows them), then the calls 79..91, then the rolls 92..154 (92 + the bitmask of the
held positions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..text import Action, Presentation, Tally, View, index
from .table import (
    COLUMN_INDEX,
    COLUMNS,
    EMPTY,
    NCELLS,
    NROWS,
    ROW_INDEX,
    ROWS,
    cell_value,
    table_total,
)


def dice_text(dice: Sequence[int], held: Sequence[int] = ()) -> str:
    """Each die after its position (what `roll hold` takes), `held` the ones kept."""
    marks = [f"{i}:{v}" + (" held" if i in held else "") for i, v in enumerate(dice)]
    return " · ".join(marks) + f"  (sum {sum(dice)})"


class YambTally(Tally):
    """Each seat's table, column-major, as its `write`s filled it."""

    def __init__(self, seats: int, options: Mapping[str, Any]) -> None:
        super().__init__(seats, options)
        self.cells = [[EMPTY] * NCELLS for _ in range(seats)]

    def applied(self, seat: int, action: Mapping[str, Any], event: Mapping[str, Any]) -> None:
        row, column = action.get("row"), action.get("column")
        if action.get("type") == "write" and row in ROW_INDEX and column in COLUMN_INDEX:
            self.cells[seat][COLUMN_INDEX[column] * NROWS + ROW_INDEX[row]] = int(event["value"])

    def scores(self) -> list[int]:
        return [table_total(self.cells[s]) for s in range(self.seats)]


class YambText(Presentation):
    numbered = True
    legend = (
        "Legend: type a column and a row as labelled (`write free1 5`, `call full`); hold\n"
        "dice by position (`roll hold 0 2`). S1: rows 1..6, +30 from 60; S2: (max - min)\n"
        "x row 1; S3: kenta..royal."
    )

    def dice_line(self, view: View, seat: int | None, held: Sequence[int] = ()) -> str | None:
        if seat is None or "tables" not in view:
            return None
        table = view["tables"][seat]
        if not table.get("dice"):
            return None
        return f"Dice (roll {table.get('rolls')} of 3): " + dice_text(table["dice"], held)

    def number(self, action: Action) -> int | None:
        kind = action.get("type")
        row = index(ROWS, action.get("row"))
        if kind == "write" and row is not None:
            column = index(COLUMNS, action.get("column"))
            return None if column is None else 13 * column + row + 1
        if kind == "call" and row is not None:
            return 79 + row
        hold = action.get("hold")
        if kind == "roll" and isinstance(hold, list) and all(isinstance(i, int) for i in hold):
            mask: int = sum(1 << i for i in set(hold))
            return 92 + mask
        return None

    def hint(self, action: Action, view: View, seat: int | None) -> str:
        if seat is None:
            return ""
        kind = action.get("type")
        dice = view["tables"][seat].get("dice") if "tables" in view else None
        if kind == "roll":
            hold = action.get("hold") or []
            if not dice or not hold:
                return "all six dice"
            return "keep " + " ".join(str(dice[i]) for i in hold)
        if kind == "write" and dice and action.get("row") in ROWS:
            return f"scores {cell_value(dice, ROWS.index(action['row']))}"
        if kind == "call":
            return f"only {action.get('row')} may be written this turn"
        return ""

    def tally(self, seats: int, options: Mapping[str, Any]) -> Tally:
        return YambTally(seats, options)


TEXT = YambText()
