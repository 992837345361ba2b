"""Room messages for this process's members of rooms another process runs.

Each process subscribes to a room's event channel once, while it has members there and
does not own the room (the owner delivers its own commits), and fans out locally.
Pub/sub is the fast path; the stream is the truth: a gap in a room's seq is filled from
the stream before what follows it is delivered, so members see every seq once, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from ...connections.hub import Hub
from ...rooms.outgoing import Outgoing
from .connect import stream_field
from .keys import event_channel, log_key
from .link import Link
from .packing import unpack_outgoing

if TYPE_CHECKING:
    from .connect import RedisClient


class EventRelay:
    def __init__(
        self,
        hub: Hub,
        link: Callable[[], Link],
        redis: Callable[[], RedisClient],
        owns: Callable[[str], bool],
        spawn: Callable[[Coroutine[object, None, None]], None],
    ) -> None:
        self.hub = hub
        self._link = link
        self._redis = redis
        """redis-py, to read the stream."""
        self._owns = owns
        self._spawn = spawn
        self.interest: dict[str, int] = {}
        """Local members per room: the event channel is subscribed while this is > 0 and
        the room is run by another process."""
        self._channels: set[str] = set()
        """Rooms whose event channel is subscribed."""
        self._last_seq: dict[str, int] = {}
        """Per room with local members: every message up to this seq was delivered here."""
        self._epochs: dict[str, int] = {}
        """Per room with local members: the epoch of what was delivered here."""
        self._lock = asyncio.Lock()

    def listening(self, room: str) -> bool:
        """The room's event channel is subscribed here."""
        return room in self._channels

    def seen(self, room: str) -> bool:
        """Members here have been delivered messages of `room`."""
        return room in self._last_seq

    async def subscribe(self, room: str) -> None:
        """Count a member in; returns once the room's messages reach this process."""
        self.interest[room] = self.interest.get(room, 0) + 1
        await self.listen(room)

    def unsubscribe(self, room: str) -> None:
        n = self.interest.get(room, 0) - 1
        if n > 0:
            self.interest[room] = n
            return
        self.interest.pop(room, None)
        self._last_seq.pop(room, None)
        self._epochs.pop(room, None)
        self._spawn(self.listen(room))

    async def listen(self, room: str) -> None:
        """Subscribe the room's event channel exactly while members are here and another
        process runs the room. Subscribing again after the room left this process, read
        what its next owner committed before the subscription from the stream."""
        async with self._lock:
            wanted = room in self.interest and not self._owns(room)
            if wanted == (room in self._channels):
                return
            if wanted:
                self._channels.add(room)  # (the link subscribes it again after an outage)
                await self._link().subscribe(event_channel(room))
            else:
                self._channels.discard(room)
                with contextlib.suppress(RedisError):
                    await self._link().unsubscribe(event_channel(room))
                return
        await self.fill_gap(room, None)

    def synced(self, room: str, seq: int, epoch: int) -> None:
        """A local member caught up to `seq`: messages after it must reach this process."""
        if room in self.interest:
            if epoch != self._epochs.get(room, epoch):
                self._last_seq.pop(room, None)  # (caught up after a rewind: its seqs)
            self._epochs[room] = epoch
            self._last_seq[room] = min(self._last_seq.get(room, seq), seq)

    def _rewind(self, room: str, epoch: int) -> None:
        """The room went back to an earlier point (a write-behind failover): the local
        members are sent a snapshot (docs/protocol.md, "Epochs")."""
        self._epochs[room] = epoch
        self._last_seq.pop(room, None)
        self.hub.rewound(room)

    def committed(self, room: str, out: list[Outgoing]) -> None:
        """This process committed `out` in a room it runs: deliver it here."""
        if room in self.interest:
            self._last_seq[room] = out[-1].seq
        self.hub.deliver(room, out)

    def taken_over(self, room: str, log: list[Outgoing], epoch: int) -> None:
        """This process takes the room over with `log` its tail: first deliver what the old
        owner committed but members here have not seen (it died between commit and
        publish, or the publish is still on its way); or, if the room went back to an
        earlier point, a snapshot."""
        last = self._last_seq.get(room)
        if room in self.interest and epoch != self._epochs.get(room, epoch):
            self._rewind(room, epoch)
        elif room in self.interest and last is not None:
            missed = [o for o in log if o.seq > last]
            if missed:
                self._last_seq[room] = missed[-1].seq
                self.hub.deliver(room, missed)

    def received(self, room: str, out: list[Outgoing], epoch: int = 0) -> None:
        """Messages from the event channel: deliver at once what follows the last seq
        seen here; after a gap, first fill it from the stream (in a task: the pub/sub
        reader never waits). A later epoch than the members here saw rewinds them; an
        earlier one is what a dead owner published late, and is dropped."""
        if room not in self.interest or not out:
            return
        known = self._epochs.setdefault(room, epoch)
        if epoch < known:
            return
        if epoch > known:
            self._rewind(room, epoch)
        last = self._last_seq.get(room)
        if last is not None and out[0].seq > last + 1:
            self._spawn(self._deliver_after_gap(room, out))
            return
        if last is None:
            last = out[0].seq - 1
        out = [o for o in out if o.seq > last]
        if out:
            self._last_seq[room] = out[-1].seq
            self.hub.deliver(room, out)

    def progress(self, room: str, progress: Outgoing) -> None:
        """Who has answered the open window: passed on as of the last message here only
        (earlier or later, it is stale or early, and the next one corrects it)."""
        if room in self.interest and self._last_seq.get(room) == progress.seq:
            self.hub.progress(room, progress)

    async def refill(self) -> None:
        """After an outage: read what pub/sub lost from the streams."""
        for room in list(self.interest):
            await self.fill_gap(room, None)

    async def _deliver_after_gap(self, room: str, out: list[Outgoing]) -> None:
        await self.fill_gap(room, out[0].seq)
        last = self._last_seq.get(room, 0)
        out = [o for o in out if o.seq > last]
        if out and room in self.interest:
            self._last_seq[room] = out[-1].seq
            self.hub.deliver(room, out)

    async def fill_gap(self, room: str, next_seq: int | None) -> None:
        """Deliver what the stream holds between the last seq seen and `next_seq`."""
        last = self._last_seq.get(room)
        if last is None or (next_seq is not None and next_seq <= last + 1):
            if last is None and next_seq is not None and room in self.interest:
                self._last_seq[room] = next_seq - 1
            return
        upper = "+" if next_seq is None else f"{next_seq - 1}-1"
        with contextlib.suppress(RedisError):
            entries = await self._redis().xrange(log_key(room), f"{last + 1}-0", upper)
            missed = [unpack_outgoing(m) for m in stream_field(entries, b"m")]
            last = self._last_seq.get(room, last)
            missed = [o for o in missed if o.seq > last]
            if missed and room in self.interest:
                self._last_seq[room] = missed[-1].seq
                self.hub.deliver(room, missed)
