"""The scores and the active seat as the room's events tell them, event by event.

`dicehall play` prints them with every turn window. Asking the server (`legal`) gives
today's view, which is wrong for a window replayed after a rejoin (the catch-up of a
`resume` replays the past) and late for a live window a bot has already answered. Every
game's events say all the scores depend on (docs/games/*.md: no event the score needs is
private), so each game's presentation keeps its sheets (`Tally`, rules/NAME/text.py) and
scores them by the rules' own functions: a window's line shows the game as it stood when
the window opened, live or replayed alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicehall.rules import presentation


class Scoreboard:
    """One game, followed from its start by its events (`feed`)."""

    def __init__(self, game: str, seats: int, options: Mapping[str, Any]) -> None:
        self.game = game
        self.seats = seats
        text = presentation(game)
        self.active: int | None = 0 if text.turns(options) else None
        """Whose turn it is (None while nobody's: tiles being dealt, a simultaneous round),
        as the game's `view` says it in `active` (or `turn`)."""
        self.tally = text.tally(seats, options)

    def feed(self, event: Mapping[str, Any]) -> None:
        seat = event.get("seat")
        if event.get("type") == "turn" and isinstance(seat, int):
            self.active = seat
        self.tally.feed(event)

    def scores(self) -> list[int]:
        return self.tally.scores()

    def view(self, window: int) -> dict[str, Any]:
        """What a window's status line reads from a view (`status_line`), as of now."""
        return {"window": window, "active": self.active, "scores": self.scores()}
