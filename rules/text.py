"""How a game reads as text at a terminal: its `Presentation`, one per game.

`dicehall play` (clients/terminal_*.py) draws every game through this interface and names
none: each game's `Game` carries its presentation as `text` (rules/NAME/__init__.py, from
rules/NAME/text.py; `presentation(name)` in rules/registry.py finds it), and this base
holds what most games share, so a game overrides only what its paper says differently
(its legend, its dice, its move numbers, its score).
Pure, like all of rules/: views and wire events in, strings and numbers out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

View = Mapping[str, Any]
Action = Mapping[str, Any]
Render = Callable[[View, int, str], str]


def index(options: Sequence[str], value: object) -> int | None:
    """Where `value` is among `options` (a row, a column), None if it is not one."""
    return options.index(value) if isinstance(value, str) and value in options else None


class Tally:
    """A game's scores kept from its public events alone, from the start (`feed`).

    The default counts what an event says it scored (Qwirkle's `points`, a `bonus`) and
    failed throws; a game whose score is a sheet keeps its sheet and scores it with its
    own rules' function."""

    def __init__(self, seats: int, options: Mapping[str, Any]) -> None:
        self.seats = seats
        self.options = options
        self.failed = [0] * seats
        self.points = [0] * seats

    def feed(self, event: Mapping[str, Any]) -> None:
        kind, seat = event.get("type"), event.get("seat")
        if not isinstance(seat, int) or not 0 <= seat < self.seats:
            return
        if kind == "failed_throw":
            self.failed[seat] += 1
        elif kind == "bonus":
            self.points[seat] += int(event.get("points", 0))
        elif kind == "applied" and isinstance(event.get("action"), Mapping):
            self.points[seat] += int(event.get("points", 0))
            self.applied(seat, event["action"], event)

    def applied(self, seat: int, action: Mapping[str, Any], event: Mapping[str, Any]) -> None:
        """A seat's move took effect (what the game's sheet keeps of it)."""

    def scores(self) -> list[int]:
        return list(self.points)


class Presentation:
    """What the terminal shows of one game beyond its engine; the defaults fit most games."""

    legend: str | None = None
    """The signs of the sheets, as the paper's rules explain them."""

    def turns(self, options: Mapping[str, Any]) -> bool:
        """Whether seat 0 has the first turn (`active` 0) when the game starts."""
        return options.get("mode") != "simultaneous"

    def sheets(
        self, view: View, names: Sequence[str], seat: int | None, render: Render
    ) -> list[str]:
        """Every seat's sheet, drawn by the game's `render_view`."""
        out = []
        for s in range(int(view.get("seats", len(names)))):
            out.append(render(view, s, names[s] if s < len(names) else f"seat {s}"))
        return out

    def dice_line(self, view: View, seat: int | None, held: Sequence[int] = ()) -> str | None:
        """The dice on the table as one line with their sum, or None when none are rolled."""
        return None

    def rolled_text(self, dice: object, roll: object = None) -> str:
        """A `rolled` event's dice (`roll`: which roll of a turn, where a game says)."""
        if isinstance(dice, list):
            of = f"; roll {roll} of 3" if roll is not None else ""
            return " ".join(str(d) for d in dice) + f"  (sum {sum(dice)}{of})"
        return str(dice)

    def describe(self, action: Action) -> str | None:
        """An action of the game's own as typed, or None where the common words fit."""
        return None

    def event_text(self, event: Mapping[str, Any], who: str) -> str | None:
        """A log line for an event of the game's own, or None where the common words fit."""
        return None

    numbered = False
    """Whether `number` gives every action of the game its number (then an action it does
    not know, a newer server's, is numbered apart, above all of them)."""

    def number(self, action: Action) -> int | None:
        """The move's number for the whole game, for games with a fixed set of actions;
        None numbers it in the order listed within its window."""
        return None

    def hint(self, action: Action, view: View, seat: int | None) -> str:
        """What a move would do with the dice on the table, or "" for nothing new."""
        return ""

    def tally(self, seats: int, options: Mapping[str, Any]) -> Tally:
        return Tally(seats, options)


DEFAULT = Presentation()
"""The presentation of a game that gives none (and of one not known)."""
