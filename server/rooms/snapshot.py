"""A room's whole state as a typed MessagePack map, so another process can take it over.

`RoomCore.save()` makes a `SavedRoom` and `RoomCore.restore()` makes a room from one: the
room owns what goes in. Two logs are not in here, because they only grow and are written as
they grow: the numbered message log (the Redis stream) and the game record's log (bytes
appended beside it; the snapshot says how many are its own). A snapshot is written together
with what it has added to both, so the three always agree.

The map's keys are the same in every format since 1, so a process of the previous version,
which reads maps, reads what this one writes (during a rolling upgrade) and the other way
round. Fields a format added have defaults, and a field at its default is not written (the
previous version reads each of those with a default too). A seat's `player` (the
`identity` feature) came within format 5: a seat is written with all its keys, the
previous version passes over one it does not know, and a seat without it reads as None.
A seat's `legal` (the `legal_in_window` feature) came the same way: without it, False.
"""

from __future__ import annotations

from typing import Any

import msgspec

from dicehall.protocol.messages.common import SeatAction

from .seat import Seat, Status

FORMAT = 5
"""5: the open window's `answered` events kept back (`answers`: `RoomCore.act`);
4: seats' presence (`connected`), `left` and the spectators too, so that the journal of
commands after the snapshot (server/hosting/journal.py) runs again exactly as it ran, and a
process of an earlier version, which would not run the journal, refuses it; 3: the
record's log beside the snapshot (`record_bytes` of it, `record_entries` entries); 2 had
its bytes in `record_log`; 1 had it as maps in `record`. All are read."""

FORMATS = (1, 2, 3, 4, FORMAT)


class SnapshotError(ValueError):
    """The snapshot cannot be read: an unknown format, or not a snapshot at all."""


class SavedRoom(msgspec.Struct, kw_only=True, omit_defaults=True):
    format: int
    id: str
    game: str
    options: dict[str, object]
    turn_window: int
    public: bool
    name: str
    autostart: bool
    host_key: str
    seats: list[Seat]
    status: Status
    seed: str
    """Hex; revealed only with the game's end, never sent to a client before."""
    state: dict[str, object] | None
    seq: int
    epoch: int = 0
    """(Within format 5: absent, 0.)"""
    kept_seq: int = 0
    behind: bool = False
    """Its owner wrote it behind (`--durability behind`): a process that takes it over
    from a dead owner starts a new epoch. (Set by the store, not by the room.)"""
    window: int | None
    deadline: float | None
    done: list[SeatAction]
    last_activity: float
    record: dict[str, Any] | None
    """The game record without its log (format 1: with it)."""
    host: int | None = None
    """(Absent when written by a version before the host role.)"""
    spectators: int = 0
    answers: list[dict[str, Any]] = []
    """(Before format 5 every answer was shown as it came: none kept back.)"""
    record_bytes: int | None = None
    """Formats 3 and later: how many bytes of the record's log beside it are its own."""
    record_entries: int | None = None
    record_log: bytes | None = None
    """Format 2 only: the record's log inside the snapshot."""


_DECODER = msgspec.msgpack.Decoder(SavedRoom)


def decode(raw: bytes) -> SavedRoom:
    """A snapshot as written by any version; `SnapshotError` if it is not one."""
    try:
        saved = _DECODER.decode(raw)
    except msgspec.ValidationError as exc:
        raise SnapshotError(f"not a room snapshot: {exc}") from None
    if saved.format not in FORMATS:
        raise SnapshotError(f"unsupported room snapshot format {saved.format!r}")
    return saved
