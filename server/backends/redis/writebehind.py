"""Write-behind (`--durability behind`): a room's messages are shown at once and written a
little later, every room due at once, in one group commit per period.

A failover takes such a room back to its last written point, and its next owner starts a
new epoch there (docs/protocol.md, "Epochs"). In exchange no act waits for Redis, and the
process makes one Redis call per period instead of one per commit (docs/benchmarks.md,
"Scale-out that pays").

A room has one write in flight at a time; what it makes meanwhile waits for the next
period. What a room with members on other processes makes is published at once, not with
its write, so that they see it when its own members do (on a standalone Redis, where the
publish and the writes before it keep their order; in a cluster, with the write). A write
that fails (Redis away, the log lost, the room fenced) goes the durable path's way
(`FencedStore.persist`: retried until Redis takes it, written back whole, or the room
given up).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Coroutine

from ...hosting.actor import CommitBatch, Entry, Reply
from ...rooms.outgoing import Outgoing
from ...rooms.room import RoomCore
from .errors import Fenced
from .groupcommit import MAX_ROOMS
from .keys import reply_channel, reply_key
from .link import Link
from .packing import pack_events, pack_outgoing
from .scripts import Committed
from .store import FencedStore, Write

log = logging.getLogger("dicehall.redis")


PROBE_EVERY = 8
"""Writes of a room published at once between two that publish what they write."""


def _live(out: Outgoing) -> bytes:
    return pack_outgoing(out, live=True)


class _Unwritten:
    """What a room made since its last write was sent."""

    __slots__ = ("core", "ending", "journal", "out", "replies")

    def __init__(self, core: RoomCore) -> None:
        self.core = core
        self.out: list[Outgoing] = []
        self.journal: list[Entry] = []
        self.replies: list[Reply] = []
        self.ending = False


class WriteBehind:
    def __init__(
        self,
        store: FencedStore,
        link: Callable[[], Link],
        *,
        period: float,
        held: Callable[[str], list[Entry]],
        lose: Callable[[str, RoomCore], None],
        list_ended: Callable[[str], Awaitable[None]],
        spawn: Callable[[Coroutine[object, None, None]], None],
    ) -> None:
        self.store = store
        self._link = link
        self.period = period
        """Seconds between a room's writes (a failover takes back what it made since its
        last completed write)."""
        self._held = held
        """Takes the commands a room ran since its last batch (answers it kept back): a
        write of the room as it is now carries them."""
        self._lose = lose
        self._list_ended = list_ended
        self._spawn = spawn
        self._due: dict[str, _Unwritten] = {}
        self._flying: dict[str, asyncio.Future[None]] = {}
        """Rooms with a write in flight, and what says when it is done."""
        self._timer: asyncio.Handle | None = None
        self._published: dict[str, int] = {}
        """Each room's last seq sent to be published (at once, or with a write)."""
        self._unheard: dict[str, int] = {}
        """Each room's writes since one published what it wrote: every `PROBE_EVERY`th
        does, so that a room whose members elsewhere left stops publishing at once."""
        self.writes = 0
        """Room writes sent (each carries every commit of its room since the one before)."""

    def add(self, batch: CommitBatch, ending: bool) -> None:
        """A commit, shown already: to be written with the next period's."""
        core = batch.core
        due = self._due.get(core.id)
        if due is None or due.core is not core:
            due = self._due[core.id] = _Unwritten(core)
        due.out += batch.out
        self._publish_now(core, batch.out)
        due.journal += batch.ran
        if batch.reply is not None:
            due.replies.append(batch.reply)
        due.ending = due.ending or ending
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.period, self._flush)

    @property
    def due(self) -> int:
        """Rooms with commits not yet sent to Redis."""
        return len(self._due)

    def drop(self, room: str) -> None:
        """The room is gone from here (lost, or closed): nothing more of it is written."""
        self._due.pop(room, None)
        self._published.pop(room, None)
        self._unheard.pop(room, None)

    def _publish_now(self, core: RoomCore, out: list[Outgoing]) -> None:
        """Publish `out` at once if members elsewhere hear the room and everything before
        it was sent to be published (else its write publishes it)."""
        room = core.id
        if not (self.store.heard(room) and self._link().in_order):
            return
        if self._published.get(room) != out[0].seq - 1:
            return
        self._published[room] = out[-1].seq
        payload = pack_events(self.store.proc, [_live(o) for o in out], core.epoch)
        self._spawn(self.store.announce(room, payload))

    async def settled(self, room: str) -> None:
        """Returns once the room's write in flight, if any, is done."""
        while (flying := self._flying.get(room)) is not None:
            await asyncio.shield(flying)

    async def write_now(self, room: str) -> None:
        """Write what the room made (a hand-over: before its lease goes), and wait."""
        await self.settled(room)
        due = self._due.pop(room, None)
        if due is not None:
            self._send(due, slowly=True)
        await self.settled(room)

    async def stop(self) -> None:
        """Write everything due (a process that stops in order loses nothing)."""
        for room in list(self._due):
            await self.write_now(room)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # --- the period's writes ---------------------------------------------------------------

    def _flush(self) -> None:
        """Send the writes due, `MAX_ROOMS` rooms (one group call) a turn of the loop, so
        that a period's writes of many rooms (packing them, some snapshots) never hold the
        connections up in one callback."""
        self._timer = None
        loop = asyncio.get_running_loop()
        ready = [room for room in self._due if room not in self._flying]
        for room in ready[:MAX_ROOMS]:
            due = self._due.pop(room)
            self._send(due, slowly=due.ending or bool(due.replies))
        if len(ready) > MAX_ROOMS:
            self._timer = loop.call_soon(self._flush)
        elif self._due:  # (rooms with a write in flight: the next period)
            self._timer = loop.call_later(self.period, self._flush)

    def _send(self, due: _Unwritten, slowly: bool) -> None:
        """Send the room's write: with the other rooms' in one group call, or, for what
        must happen in order around it (a game's end listed first, replies after), in a
        task of its own."""
        room = due.core.id
        due.journal += self._held(room)
        self._flying[room] = asyncio.get_running_loop().create_future()
        self.writes += 1
        entries, payload = self._pack(due)
        if slowly:
            self._spawn(self._write_slowly(due, entries, payload))
            return
        write = self.store.prepare(due.core, entries, payload, None, False, due.journal)
        done = self.store.group.submit(room, write.args)
        done.add_done_callback(functools.partial(self._written, due, write, entries, payload))

    def _pack(self, due: _Unwritten) -> tuple[list[tuple[int, bytes]], bytes]:
        """The write's log entries, and what it publishes: what was not published at once,
        or, every `PROBE_EVERY`th write, all of it (members elsewhere see each seq once),
        for Redis to say whether anyone still hears it."""
        room = due.core.id
        entries = [(o.seq, pack_outgoing(o)) for o in due.out]
        published = self._published.get(room, 0)
        unheard = self._unheard.get(room, 0) + 1
        if unheard >= PROBE_EVERY:
            published = 0
        # (the event channel also carries the live-only variants; the stream does not)
        heard = [
            pack_outgoing(o, live=True) if o.live else e
            for o, (_, e) in zip(due.out, entries, strict=True)
            if o.seq > published
        ]
        self._unheard[room] = 0 if heard else unheard
        if due.out:
            self._published[room] = max(self._published.get(room, 0), due.out[-1].seq)
        return entries, pack_events(self.store.proc, heard, due.core.epoch) if heard else b""

    def _written(
        self,
        due: _Unwritten,
        write: Write,
        entries: list[tuple[int, bytes]],
        payload: bytes,
        done: asyncio.Future[Committed],
    ) -> None:
        status = None if done.cancelled() or done.exception() else done.result()
        if status in (Committed.WRITTEN, Committed.HEARD):
            assert status is not None
            self.store.settle(due.core, write, status)
            self._landed(due.core.id)
            if not self.store.listed(due.core):
                self._spawn(self.store.list_in_lobby(due.core))
            return
        # Not written (Redis away, its log lost) or fenced: the durable path's way.
        self._spawn(self._write_slowly(due, entries, payload))

    async def _write_slowly(
        self, due: _Unwritten, entries: list[tuple[int, bytes]], payload: bytes
    ) -> None:
        core = due.core
        try:
            if due.ending:
                await self._list_ended(core.id)
            await self.store.persist(core, entries, payload, None, due.journal)
            for reply in due.replies:
                await self._answer(reply)
        except Fenced:
            self._due.pop(core.id, None)
            self._lose(core.id, core)
        except Exception:
            log.exception("room %s: writing it behind failed", core.id)
        finally:
            self._landed(core.id)

    async def _answer(self, reply: Reply) -> None:
        """A forwarded command's answer, once the messages it made are published."""
        px = self.store.reply_ms
        key, channel = reply_key(reply.asker, reply.rid), reply_channel(reply.asker)
        await self._link().answer(key, reply.data, px, channel)

    def _landed(self, room: str) -> None:
        flying = self._flying.pop(room, None)
        if flying is not None and not flying.done():
            flying.set_result(None)
