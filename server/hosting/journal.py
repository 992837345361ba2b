"""The commands a room ran since its last snapshot, so that another process can run them
again (the Redis backend's `store.py` and `leases.py`).

A room's snapshot is the expensive part of a commit (its whole game state, encoded), so it
is written only every few commits; in between, each commit appends the commands that led
to it, each with the time it ran. A room is sans I/O: what a command does depends only on
the room's state, the command and that time, so a process that takes the room over loads
the snapshot, runs the journal's commands again, and reaches the state of the last commit,
message for message (`replay` checks the messages against the log it was given).
Commands that change nothing (reads) are not kept.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import msgspec

from dicehall.protocol.errors import ProtocolError
from dicehall.protocol.subprotocols import Encoding

from ..rooms.commands import CommandType
from ..rooms.outgoing import Outgoing
from ..rooms.room import RoomCore
from .actor import Entry, execute

log = logging.getLogger("dicehall.room")


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(list[tuple[CommandType, float]])


class JournalError(Exception):
    """Running the journal again did not give the room its logged messages back."""


def encode(entries: Iterable[Entry]) -> bytes:
    return _ENCODER.encode(list(entries))


def replay(core: RoomCore, batches: Iterable[bytes], logged: dict[int, Outgoing]) -> int:
    """Run every command of `batches` (encoded entries, oldest first) on `core`; returns
    how many ran. Each message they make must be the one `logged` holds under its seq
    (the frames are compared byte for byte); raises `JournalError` where it is not."""
    ran = 0
    for batch in batches:
        for cmd, now in _DECODER.decode(batch):
            try:
                _, out = execute(core, cmd, now)
            except ProtocolError as exc:  # it changed nothing the first time either
                log.warning("room %s: a journaled %r failed again: %s", core.id, cmd, exc)
                continue
            ran += 1
            for message in out:
                kept_one = logged.get(message.seq)
                if kept_one is not None and not _same(message, kept_one):
                    raise JournalError(f"room {core.id}: message {message.seq} differs on replay")
    return ran


def _same(a: Outgoing, b: Outgoing) -> bool:
    seats = set(a.private) | set(b.private)
    return all(
        a.frame(seat, Encoding.MSGPACK) == b.frame(seat, Encoding.MSGPACK)
        for seat in (None, *seats)
    )
