"""A session's membership of rooms, and catching up without gaps or duplicates.

A member is registered with the hub *before* it asks the room for its snapshot or its
missed messages; what the hub delivers meanwhile is held, then released after the
catch-up, keeping only messages newer than it (the `RoomStream` drops the rest).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from dicehall.protocol.messages.server import ServerMessage

from ..backends import Rooms
from ..rooms.commands import Sync, SyncCmd
from .hub import Hub, RoomStream

log = logging.getLogger("dicehall.session")


class MessageSink(Protocol):
    def message(self, message: ServerMessage) -> None: ...


class Membership:
    """The rooms whose messages reach one session, through its `stream`."""

    def __init__(self, stream: RoomStream, sink: MessageSink, hub: Hub, rooms: Rooms) -> None:
        self.stream = stream
        self.sink = sink
        self.hub = hub
        self.rooms = rooms
        self.members: set[str] = set()
        """Rooms whose messages the hub delivers to the stream."""
        self._subscribed: set[str] = set()
        """Rooms this session asked the backend to bring here (`Rooms.subscribe`)."""
        self._resyncs: set[asyncio.Task[None]] = set()

    def attach(self, room: str) -> None:
        """Listen from now on, with nothing to catch up (an in-process house bot)."""
        self.members.add(room)
        self.hub.add(room, self.stream)

    async def hold(self, room: str) -> None:
        """Become a member now, holding what arrives until the catch-up is sent."""
        self.stream.held[room] = []
        self.members.add(room)
        self.hub.add(room, self.stream)
        if room not in self._subscribed:
            self._subscribed.add(room)
            try:
                await self.rooms.subscribe(room)
            except BaseException:
                self.unhold(room)  # (and the backend counts this member out again)
                raise

    def hold_again(self, room: str) -> None:
        """A member already: hold what arrives until a new catch-up is sent."""
        self.stream.held.setdefault(room, [])

    def unhold(self, room: str) -> None:
        """Stop listening to `room`."""
        self.stream.held.pop(room, None)
        self.stream.seen.pop(room, None)
        self.members.discard(room)
        self.hub.remove(room, self.stream)
        if room in self._subscribed:
            self._subscribed.discard(room)
            self.rooms.unsubscribe(room)

    def resume_held(self, room: str) -> None:
        """A catch-up that failed: send what was held as it is (a spectator that could not
        sit down keeps its stream)."""
        self.stream.deliver(room, self.stream.held.pop(room, []))

    def release(self, room: str, sync: Sync) -> None:
        """Send the catch-up, then what was held meanwhile that is newer."""
        if sync.snapshot is not None:
            self.sink.message(sync.snapshot)
        for message in sync.messages or ():
            self.sink.message(message)
        if sync.progress is not None and self.stream.progress:
            self.sink.message(sync.progress)
        held = self.stream.held.pop(room, [])
        self.stream.seen[room] = sync.seq
        self.stream.deliver(room, held)

    def rewound(self, room: str, seat: int | None) -> None:
        """A failover took the room back to an earlier point (docs/protocol.md, "Epochs"):
        what this member was sent after it never happened. Hold what arrives and send a
        snapshot first (the stream forgot its last seq: `RoomStream.rewound`)."""
        task = asyncio.get_running_loop().create_task(self._resync(room, seat))
        self._resyncs.add(task)
        task.add_done_callback(self._resyncs.discard)

    async def _resync(self, room: str, seat: int | None) -> None:
        try:
            sync: Sync = await self.rooms.call(room, SyncCmd(seat=seat))
        except Exception as exc:  # (the member's next `resume` catches it up)
            log.warning("room %s: a snapshot after its failover failed: %s", room, exc)
            self.resume_held(room)
            return
        if room in self.members:
            self.release(room, sync)
