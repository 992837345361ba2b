"""What the client's stream delivers besides room messages, and the record of its
catch-ups: the types a consumer of `Client.messages()` matches on."""

from __future__ import annotations

from dataclasses import dataclass

from dicehall.protocol.messages.server import RoomMessage


@dataclass(frozen=True, slots=True)
class RoomLost:
    """After a reconnect the server would not take this client back into `room` (its seat
    token was refused, or the room is gone): nothing more will arrive for it."""

    room: str
    reason: str


Delivery = RoomMessage | RoomLost
"""What `messages()` yields: the room messages, in seq order per room, and `RoomLost`."""


@dataclass(frozen=True, slots=True)
class Resumed:
    """One catch-up after a reconnect: `room` resumed after `last_seq` up to `seq`, in
    the room's `epoch` (one above what the client had: a failover took the room back, and
    a `Snapshot` replaces what it knew)."""

    room: str
    last_seq: int
    mode: str
    seq: int
    epoch: int = 0


@dataclass(frozen=True, slots=True)
class End:
    error: BaseException | None
