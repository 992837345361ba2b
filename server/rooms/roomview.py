"""What a room shows without changing anything: its lobby entry, who sits and whether
anybody is there, its game record, a member's snapshot and the messages it missed.

`RoomView` is a plain base class of `RoomCore` (server/rooms/room.py), which adds the commands,
between it and its fields (server/rooms/roomstate.py): none of these is on the act path, which
crosses room.py alone, and mypyc compiles the chain as it does any classes. (What a seat
may do in the open window, `owes` and `legal`, is the turn window's, in room.py.)
"""

from __future__ import annotations

from typing import Any

from dicehall.protocol.messages.common import Actor, RoomInfo, SeatInfo
from dicehall.protocol.messages.server import RoomMessage, Snapshot, TurnWindow
from dicehall.rules import State

from . import gamerecord, presence, seating
from .roomstate import RoomState


class RoomView(RoomState):
    """A room's queries (its commands: `RoomCore`)."""

    # --- lobby ----------------------------------------------------------------------------

    def info(self) -> RoomInfo:
        return RoomInfo(
            room=self.id,
            name=self.name,
            game=self.game.name,
            options=self.options,
            status=self.status,
            public=self.public,
            turn_window=self.turn_window,
            seats=[
                SeatInfo(seat=i, kind=s.kind, name=s.name, connected=s.connected > 0)
                for i, s in enumerate(self.seats)
            ],
            spectators=self.spectators,
            commitment=self.state.commitment() if self.state is not None else None,
            host=self.host,
        )

    def lobby_key(self) -> tuple[Any, ...]:
        """What of `info()` can change after creation (commitment only with status):
        equal keys, equal lobby entries. A commit compares it instead of building the
        entry: most commits change nothing the lobby shows."""
        return (
            self.status,
            self.spectators,
            self.host,
            tuple((s.kind, s.name, s.connected > 0) for s in self.seats),
        )

    # --- seats and presence ---------------------------------------------------------------

    def open_seats(self) -> list[int]:
        return seating.open_seats(self.seats)

    def players(self) -> list[str | None]:
        """Each seat's player id, by seat (None: open, or taken without an identity): who
        a finished game is recorded under."""
        return [s.player for s in self.seats]

    def check_token(self, seat: int, nonce: str) -> bool:
        return seating.holds_token(self.seats, seat, nonce)

    @property
    def deserted(self) -> bool:
        """The game is over and nobody will come back to it (`presence.deserted`)."""
        return presence.deserted(self.status, self.spectators, self.seats)

    def closable(
        self, now: float, idle_seconds: float, over_seconds: float, empty_seconds: float = 0.0
    ) -> bool:
        """Nobody is in the room and it has been quiet long enough since its last activity
        (`presence.closable` says how long)."""
        return presence.closable(
            self.status,
            self.spectators,
            self.seats,
            now - self.last_activity,
            idle_seconds,
            over_seconds,
            empty_seconds,
        )

    # --- the game record, and a member's catch-up -----------------------------------------

    @property
    def record(self) -> dict[str, Any] | None:
        """The game record so far (built on each call: a copy, not to be changed)."""
        return gamerecord.whole(self.record_head, self.record_log)

    def snapshot(self, seat: int | None) -> Snapshot:
        view = self.state.view(seat) if self.state is not None else {}
        turn = None
        if self.window_id is not None and self.deadline is not None and self.state is not None:
            turn = TurnWindow(
                window=self.window_id,
                deadline=int(self.deadline * 1000),
                actors=_actors(self.state),
            )
        return Snapshot(
            room=self.id,
            seq=self.seq,
            seat=seat,
            view=view,
            info=self.info(),
            turn=turn,
            epoch=self.epoch,
        )

    def since(self, last_seq: int, seat: int | None) -> list[RoomMessage] | None:
        """The messages after `last_seq` as `seat` saw them, or None if they aged out."""
        if last_seq > self.seq:
            return None
        if last_seq == self.seq:
            return []
        first = self.log.first_seq
        if first is None or first > last_seq + 1:
            return None
        return self.log.messages(last_seq + 1 - first, seat)


def _actors(state: State) -> list[Actor]:
    """The seats that must act now, with the kinds of action legal for each."""
    return [Actor(seat=s, kinds=state.legal_kinds(s)) for s in state.actors()]
