"""The scores and the active seat as the room's events tell them, event by event.

`dicehall play` prints them with every turn window. Asking the server (`legal`) gives
today's view, which is wrong for a window replayed after a rejoin (the catch-up of a
`resume` replays the past) and late for a live window a bot has already answered. Every
game's events say all the scores depend on (docs/games/*.md: no event the score needs is
private), so the sheets are kept here and scored by the rules' own functions: a window's
line shows the game as it stood when the window opened, live or replayed alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicehall.rules.qwinto.sheet import COLOUR_INDEX as QWINTO_ROW
from dicehall.rules.qwinto.sheet import empty_sheet
from dicehall.rules.qwinto.sheet import score as qwinto_score
from dicehall.rules.qwixx.sheet import BOX as QWIXX_BOX
from dicehall.rules.qwixx.sheet import ROW_OF as QWIXX_ROW
from dicehall.rules.qwixx.sheet import score as qwixx_score
from dicehall.rules.yamb.table import COLUMN_INDEX, EMPTY, NCELLS, NROWS, ROW_INDEX, table_total


class Scoreboard:
    """One game, followed from its start by its events (`feed`)."""

    def __init__(self, game: str, seats: int, options: Mapping[str, Any]) -> None:
        self.game = game
        self.seats = seats
        turns = game != "qwirkle" and options.get("mode") != "simultaneous"
        self.active: int | None = 0 if turns else None
        """Whose turn it is (Qwirkle: none while the tiles are dealt; simultaneous Yamb:
        nobody's), as the game's `view` says it in `active` (Qwirkle: `turn`)."""
        self.failed = [0] * seats
        self.points = [0] * seats  # Qwirkle: placements and the hand-emptied bonus
        self.qwinto = [empty_sheet() for _ in range(seats)]
        self.sum = 0  # Qwinto: the dice of the last roll, what an `enter` writes
        self.marks = [[0] * 4 for _ in range(seats)]  # Qwixx: one bitmask of boxes per row
        self.locks = [0] * seats  # Qwixx: one bit per row this seat locked
        self.cells = [[EMPTY] * NCELLS for _ in range(seats)]  # Yamb: column-major

    def feed(self, event: Mapping[str, Any]) -> None:
        kind, seat = event.get("type"), event.get("seat")
        if kind == "turn" and isinstance(seat, int):
            self.active = seat
        elif kind == "rolled" and isinstance(event.get("dice"), Mapping):
            self.sum = sum(event["dice"].values())
        elif not isinstance(seat, int) or not 0 <= seat < self.seats:
            return
        elif kind == "failed_throw":
            self.failed[seat] += 1
        elif kind == "bonus":
            self.points[seat] += int(event.get("points", 0))
        elif kind == "locked" and event.get("row") in QWIXX_ROW:
            self.locks[seat] |= 1 << QWIXX_ROW[event["row"]]
        elif kind == "applied" and isinstance(event.get("action"), Mapping):
            self._applied(seat, event["action"], event)

    def _applied(self, seat: int, action: Mapping[str, Any], event: Mapping[str, Any]) -> None:
        self.points[seat] += int(event.get("points", 0))
        kind, row = action.get("type"), action.get("row")
        if kind == "enter" and row in QWINTO_ROW:
            self.qwinto[seat][QWINTO_ROW[row]][int(action["box"])] = self.sum
        elif kind == "mark" and row in QWIXX_ROW:
            self.marks[seat][QWIXX_ROW[row]] |= 1 << QWIXX_BOX[QWIXX_ROW[row]][action["number"]]
        elif kind == "write" and row in ROW_INDEX and action.get("column") in COLUMN_INDEX:
            cell = COLUMN_INDEX[action["column"]] * NROWS + ROW_INDEX[row]
            self.cells[seat][cell] = int(event["value"])

    def scores(self) -> list[int]:
        seats = range(self.seats)
        if self.game == "qwinto":
            return [qwinto_score(self.qwinto[s], self.failed[s]) for s in seats]
        if self.game == "qwixx":
            return [qwixx_score(self.marks[s], self.locks[s], self.failed[s]) for s in seats]
        if self.game == "yamb":
            return [table_total(self.cells[s]) for s in seats]
        return list(self.points)

    def view(self, window: int) -> dict[str, Any]:
        """What a window's status line reads from a view (`status_line`), as of now."""
        return {"window": window, "active": self.active, "scores": self.scores()}
