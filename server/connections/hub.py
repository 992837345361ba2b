"""Local fan-out: a room's messages to this process's members, and a session's member.

The hub only routes; each member picks its variant and takes the frame the message has
memoised for that variant and encoding (server/rooms/outgoing.py, `Outgoing.frame`). A session's
member is its `RoomStream`: each room message once and in order to the session's sink,
held while the session catches up (server/connections/catchup.py). A room's commit reaches it once
per member, so this runs for every delivery, and it compiles (server/compiled.py) while the
session, a coroutine module, does not. The session owns its stream and shares its maps
(the seats it holds, the rooms it hosts, what is held and what was sent), mutating them in
place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from dicehall.protocol.messages.server import GameOver

from ..rooms.outgoing import Outgoing


class Member(Protocol):
    """Something that receives a room's messages: a WebSocket session or a house bot."""

    progress: bool
    """It asked for who has answered the open window (the `progress` feature)."""

    def deliver(self, room: str, outgoing: list[Outgoing]) -> None:
        """Queue for sending; never blocks (a slow member is cut off, not waited for)."""

    def deliver_progress(self, room: str, progress: Outgoing) -> None:
        """Who has answered the open window (a `Progress`, unnumbered): for the members
        that asked for it and are up to date with the room."""

    def rewound(self, room: str) -> None:
        """A failover took the room back to an earlier point: what was delivered after it
        never happened (docs/protocol.md, "Epochs")."""


class Hub:
    def __init__(self) -> None:
        self._rooms: dict[str, set[Member]] = {}
        self._progress: dict[str, set[Member]] = {}
        """The members of each room that asked for `progress` (few: people, not bots)."""

    def add(self, room: str, member: Member) -> None:
        self._rooms.setdefault(room, set()).add(member)
        if member.progress:
            self._progress.setdefault(room, set()).add(member)

    def remove(self, room: str, member: Member) -> None:
        for rooms in (self._rooms, self._progress):
            members = rooms.get(room)
            if members is not None:
                members.discard(member)
                if not members:
                    del rooms[room]

    def wants_progress(self, room: str) -> bool:
        return room in self._progress

    def members(self, room: str) -> int:
        return len(self._rooms.get(room, ()))

    def deliver(self, room: str, outgoing: list[Outgoing]) -> None:
        members = self._rooms.get(room)
        if members and outgoing:
            for member in list(members):
                member.deliver(room, outgoing)

    def rewound(self, room: str) -> None:
        for member in list(self._rooms.get(room, ())):
            member.rewound(room)

    def progress(self, room: str, progress: Outgoing) -> None:
        members = self._progress.get(room)
        if members:
            for member in list(members):
                member.deliver_progress(room, progress)


class RoomSink(Protocol):
    def room(self, outgoing: Sequence[Outgoing], seat: int | None) -> None:
        """Room messages as `seat` sees them (None: the public view), in order."""


class RoomStream:
    def __init__(self, sink: RoomSink) -> None:
        self.sink = sink
        self.seats: dict[str, int] = {}
        """Rooms where the session holds a seat (and receives messages once synced)."""
        self.hosting: dict[str, str] = {}
        """Room -> host key, for the rooms the session created (and whose game is on)."""
        self.held: dict[str, list[Outgoing]] = {}
        """What arrived for a room while its catch-up is under way: sent after it."""
        self.seen: dict[str, int] = {}
        """The last seq sent per room: a message that arrives twice is sent once."""
        self.progress = False
        """The `progress` feature is on: who has answered a shared window, as they do."""
        self.on_rewound: Callable[[str], None] | None = None
        """Sends a member of a room a failover took back its snapshot (the session's)."""

    def deliver(self, room: str, outgoing: list[Outgoing]) -> None:
        held = self.held.get(room)
        if held is not None:
            held.extend(outgoing)
            return
        seen = self.seen.get(room, 0)
        if not outgoing or outgoing[0].seq <= seen:  # (held ones overlap a catch-up)
            outgoing = [out for out in outgoing if out.seq > seen]
            if not outgoing:
                return
        # (seqs rise within a list: each commit's, and held ones)
        self.sink.room(outgoing, self.seats.get(room))
        self.seen[room] = outgoing[-1].seq
        if room in self.hosting:
            for out in outgoing:
                if type(out.message) is GameOver:
                    del self.hosting[room]  # a finished room is nothing to host: off the limit
                    break

    def rewound(self, room: str) -> None:
        """Forget the last seq sent (the next ones number a new history) and hold what
        arrives until the session sent the snapshot."""
        self.seen.pop(room, None)
        self.held[room] = []
        if self.on_rewound is not None:
            self.on_rewound(room)

    def deliver_progress(self, room: str, progress: Outgoing) -> None:
        """(The hub calls only members that asked.) Sent only as of the last message sent
        here: a catch-up under way (held) or a message not yet here would make it stale or
        early; the next one corrects it."""
        if room not in self.held and self.seen.get(room) == progress.seq:
            self.sink.room((progress,), None)
