"""A room's seat as the room keeps it (and a snapshot saves it), and the room's status."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SeatKind = Literal["open", "human", "bot"]
Status = Literal["open", "playing", "over"]


@dataclass(slots=True)
class Seat:
    kind: SeatKind = "open"
    name: str | None = None
    nonce: str | None = None
    """Part of the seat token; a new holder gets a new one, so old tokens die."""
    bot: str | None = None
    connected: int = 0
    """Live connections holding the seat (house bots count as one)."""
    left: bool = False
    """Given up with `leave` after the start, and not taken back since (a merely
    disconnected seat is not `left`: its holder may be on the way back)."""
    player: str | None = None
    """The player id it is played as (the `identity` feature; `house:<kind>` for a house
    bot); None for an open seat and for a connection without an identity. What a
    finished game is recorded under."""
    legal: bool = False
    """Its holder asked for its legal actions with each window (the `legal_in_window`
    feature): set by each holder that takes the seat, so a snapshot keeps it."""

    def copy(self) -> Seat:
        """A seat of its own with the same fields: a saved room must not change with the
        live one, nor two rooms restored from one snapshot share their seats. (Spelled out:
        `dataclasses.replace` costs several times as much, once per seat per snapshot.)"""
        return Seat(
            self.kind,
            self.name,
            self.nonce,
            self.bot,
            self.connected,
            self.left,
            self.player,
            self.legal,
        )
