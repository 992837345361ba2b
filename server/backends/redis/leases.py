"""The Redis deployment's room store: leases held and renewed, rooms taken over, handed
over, lost and closed, and their fenced commits (store.py).

A room is owned by one process at a time: a lease key with a TTL that the owner renews.
Only the owner runs the room's actor. When an owner dies its lease expires; every process
scans for rooms without a lease and one of them takes the room over from its snapshot and
the stream's tail. Commits are fenced (scripts.py), so an owner that lost its room (it
froze past its lease, or Redis restarted and another process got there first) never
writes over the new owner's: it stops running the room instead, and its callers retry on
the new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from ...hosting import journal
from ...hosting.actor import CommitBatch, Entry, Pending
from ...hosting.host import RoomHost
from ...hosting.store import Release, RoomStore
from ...rooms import snapshot
from ...rooms.commands import ReopenCmd
from ...rooms.room import RoomCore
from .backoff import Backoff
from .connect import raw as raw_bytes
from .connect import stream_field
from .errors import Fenced
from .keys import (
    HISTORY_WAITING,
    LOBBY,
    command_channel,
    handed_key,
    history_key,
    journal_key,
    lease_key,
    log_key,
    process_key,
    record_log_key,
    reply_channel,
    reply_key,
    snap_key,
)
from .link import Link
from .packing import pack_events, pack_outgoing, unpack_outgoing
from .relay import EventRelay
from .scripts import Renewal, RidingReply, release, renew
from .store import FencedStore
from .writebehind import WriteBehind

if TYPE_CHECKING:
    from .connect import RedisClient

log = logging.getLogger("dicehall.redis")

HISTORY_SWEEP_ROUNDS = 20
"""Scans between two sweeps of `HISTORY_WAITING` (about every 5 s with the default lease)."""


class Leases(RoomStore):
    """The Redis deployment's `RoomStore`: a room's commits are fenced by its lease."""

    journal = True
    durable = True

    def __init__(
        self,
        proc: str,
        link: Callable[[], Link],
        redis: Callable[[], RedisClient],
        store: FencedStore,
        relay: EventRelay,
        spawn: Callable[[Coroutine[object, None, None]], None],
        *,
        lease_ms: int,
        history: int,
        public_url: Callable[[], str | None],
        write_behind_ms: int | None = None,
    ) -> None:
        self.proc = proc
        self._link = link
        self._redis = redis
        self.store = store
        self.relay = relay
        self._spawn = spawn
        self.lease_ms = lease_ms
        self.history = history
        self._public_url = public_url
        self.host: RoomHost | None = None
        """The rooms run here (set once the host that uses this store is made)."""
        self._lost: set[int] = set()
        """The ids of cores whose room another process runs now: never written again."""
        self.stopping = False
        self.takeovers = 0
        self.behind = store.behind = write_behind_ms is not None
        self.writer = WriteBehind(
            store,
            link,
            period=(write_behind_ms or 0) / 1000,
            held=self._held,
            lose=self.lose,
            list_ended=self._list_ended,
            spawn=spawn,
        )
        """Writes the rooms' commits behind (`--durability behind`), if `behind`."""

    @property
    def rooms(self) -> RoomHost:
        assert self.host is not None, "no host uses this store"
        return self.host

    # --- taking and giving up rooms --------------------------------------------------------

    async def create(self, core: RoomCore) -> bool:
        if not await self._redis().set(lease_key(core.id), self.proc, nx=True, px=self.lease_ms):
            return False
        await self.store.persist(core, [])
        return True

    async def owned(self, core: RoomCore) -> None:
        self._lost.discard(id(core))
        await self._link().subscribe(command_channel(core.id))
        await self.relay.listen(core.id)  # the owner delivers its commits itself

    async def released(self, core: RoomCore, why: Release, unwritten: bool) -> None:
        room = core.id
        if why is Release.LOST:
            self._lost.discard(id(core))
            self.writer.drop(room)
            if room in self.rooms.actors:  # (it is ours again already)
                return
        elif why is Release.HANDED:
            await self.writer.write_now(room)
            if unwritten:  # answers the room kept back: not lost
                with contextlib.suppress(Fenced):
                    await self.store.persist(core, [])
        else:  # (closed: what it made goes with it, once a write in flight is done)
            self.writer.drop(room)
            await self.writer.settled(room)
        self.store.forget(room)
        with contextlib.suppress(RedisError):
            await self._link().unsubscribe(command_channel(room))
        if why is Release.CLOSED:
            # The lease goes last: while it is held nobody can take the room over, and
            # once its snapshot is gone nobody can.
            redis = self._redis()
            with contextlib.suppress(RedisError):
                await redis.hdel(LOBBY, room)
                await redis.delete(
                    snap_key(room), log_key(room), record_log_key(room), journal_key(room)
                )
                await release(self._link(), room, self.proc)
        elif why is Release.HANDED:
            with contextlib.suppress(RedisError):
                await release(self._link(), room, self.proc, handed_ms=10 * self.lease_ms)
        with contextlib.suppress(RedisError):
            await self.relay.listen(room)  # local members hear the room from its next owner

    def _held(self, room: str) -> list[Entry]:
        actor = self.rooms.actors.get(room)
        return [] if actor is None else actor.take_journal()

    def busy(self, room: str) -> bool:
        return self.relay.interest.get(room, 0) > 0

    def lose(self, room: str, core: RoomCore) -> None:
        """Another process runs `room` now: nothing of `core` is written again."""
        self._lost.add(id(core))
        self.rooms.lose(room, core)

    async def take_over(self, room: str) -> bool:
        """Own a room whose lease lapsed: its snapshot plus the stream's tail."""
        actors = self.rooms.actors
        if room in actors or self.stopping:
            return room in actors
        redis = self._redis()
        if not await redis.set(lease_key(room), self.proc, nx=True, px=self.lease_ms):
            return False
        raw = await redis.get(snap_key(room))
        if raw is None:
            await release(self._link(), room, self.proc)
            await redis.hdel(LOBBY, room)
            return False
        record_log = raw_bytes(await redis.get(record_log_key(room)) or b"")
        saved = snapshot.decode(raw_bytes(raw))
        core = RoomCore.restore(saved, self.history, record_log, presence=True)
        batches = (
            [raw_bytes(b) for b in await redis.lrange(journal_key(room), 0, -1)]
            if saved.format >= 4
            else []
        )
        tail = await redis.xrevrange(log_key(room), "+", "-", count=self.history)
        logged = [unpack_outgoing(m) for m in reversed(stream_field(tail, b"m"))]
        for out in logged:
            if out.seq <= core.seq:  # (the journal's commands make the rest again)
                core.log.append(out)
        try:
            ran = journal.replay(core, batches, {o.seq: o for o in logged})
            if logged and core.seq != logged[-1].seq:
                raise journal.JournalError(
                    f"room {room}: the journal reaches seq {core.seq}, the log {logged[-1].seq}"
                )
        except journal.JournalError:
            # A bug (or another version's rules): never run a room that differs from
            # what its players saw. Let go of it; the log says why.
            log.exception("room %s cannot be taken over", room)
            await release(self._link(), room, self.proc)
            return False
        core.forget_presence()
        if room in actors:  # the scan and a forwarded call both got here
            return True
        handed = await redis.getdel(handed_key(room)) is not None
        if saved.behind and not handed:  # what its owner showed last may be lost
            core.rewind()
            try:  # (written before anything of the new epoch is shown: one epoch, one history)
                await self.store.persist(core, [])
            except Fenced:
                return False
        # (none in Redis yet if an earlier version wrote the snapshot: the commit sets it)
        self.store.taken_over(room, min(len(record_log), len(core.record_log.data)))
        self.takeovers += 1
        log.info("took over room %s at seq %d (%d commands run again)", room, core.seq, ran)
        self.relay.taken_over(room, list(core.log), core.epoch)
        await self.rooms.own(core)
        if core.status == "over":  # handed again only if its owner died first
            self.rooms.ended(core, hand=await redis.get(history_key(room)) == b"waiting")
        self._spawn(self._reopen(room))
        return True

    async def _reopen(self, room: str) -> None:
        """Answers the old owner held without committing them are gone: the open window
        is announced again, and its seats answer again."""
        actor = self.rooms.actors.get(room)
        if actor is None:
            return
        done = actor.submit(ReopenCmd())
        await asyncio.wait((done,))  # (cancelled if the room stopped here meanwhile)
        if not done.cancelled() and done.exception() is not None:
            log.warning("room %s: announcing its window again failed: %s", room, done.exception())

    # --- the actors' commit ------------------------------------------------------------

    def commit(self, batch: CommitBatch, ending: bool) -> Pending:
        return self._commit(batch, ending)

    def write_behind(self, batch: CommitBatch, ending: bool) -> None:
        if id(batch.core) not in self._lost:
            self.writer.add(batch, ending)

    async def _commit(self, batch: CommitBatch, ending: bool) -> None:
        """Persist (with the commands that made the batch's messages), then publish (and
        answer the forwarded command that made them, if its reply rides along)."""
        core, out = batch.core, batch.out
        if id(core) in self._lost:
            raise asyncio.CancelledError  # lost meanwhile: the actor stops, nothing is written
        if ending:  # (first: a game whose end is committed is always on the list)
            await self._list_ended(core.id)
        entries = [(o.seq, pack_outgoing(o)) for o in out]
        # (the event channel also carries the live-only variants; the stream does not)
        heard = [
            pack_outgoing(o, live=True) if o.live else e
            for o, (_, e) in zip(out, entries, strict=True)
        ]
        payload = pack_events(self.proc, heard)
        reply = batch.reply
        riding = None
        if reply is not None:
            riding = RidingReply(
                reply_key(reply.asker, reply.rid), reply_channel(reply.asker), reply.data
            )
        try:
            await self.store.persist(core, entries, payload, riding, batch.ran)
        except Fenced:
            # Not written, and never will be: end the actor's task (its command's caller is
            # told it was not run) before it runs anything else.
            self.lose(core.id, core)
            raise asyncio.CancelledError from None

    # --- upkeep ------------------------------------------------------------------------

    async def advertise(self) -> None:
        """Say where this process takes connections, for as long as it keeps its leases."""
        url = self._public_url()
        if url is not None:
            await self._link().command("SET", process_key(self.proc), url, "PX", 3 * self.lease_ms)

    async def keep(self) -> None:
        """Renew the leases of the rooms owned here, a third of a lease apart (and the
        process's advertised address with them). A room that committed within the last
        sixth of a lease is skipped: its commit renewed it (a playing room commits several
        times a second, so most renewals are not needed), and the next renewal comes
        before half of the lease has run."""
        period = self.lease_ms / 3000
        while True:
            await asyncio.sleep(period)
            with contextlib.suppress(RedisError):
                await self.advertise()
            fresh = time.monotonic() - period / 2
            written = self.store.written_at
            owned = [
                (room, actor)
                for room, actor in self.rooms.actors.items()
                if written.get(room, 0.0) < fresh
            ]
            if not owned:
                continue
            try:  # (one script call: ~0.1 ms of the process's CPU a room renewed apart)
                rooms = [room for room, _ in owned]
                statuses = await renew(self._link(), rooms, self.proc, self.lease_ms)
            except RedisError:
                continue
            for (room, actor), status in zip(owned, statuses, strict=True):
                if status is Renewal.LOST:
                    self.lose(room, actor.core)
                elif status is Renewal.GONE:  # lapsed or lost with Redis's data: write back
                    await self.rewrite(room)

    async def rewrite(self, room: str) -> None:
        """Write the room back whole (Redis lost it, or its lease lapsed)."""
        actor = self.rooms.actors.get(room)
        if actor is None:
            return
        try:
            await self.store.persist(actor.core, [])
        except Fenced:
            self.lose(room, actor.core)

    async def scan(self) -> None:
        """Take over rooms whose owner is gone; now and then sweep the finished games
        history is waiting for."""
        rounds = 0
        while True:
            await asyncio.sleep(min(0.25, self.lease_ms / 8000))
            if self.stopping:  # (a cancel lost in a Redis call below: server/cancelling.py)
                return
            try:
                for room in await self._link().orphans(LOBBY, lease_key):
                    if room not in self.rooms.actors:
                        await self.take_over(room)
                rounds += 1
                if rounds % HISTORY_SWEEP_ROUNDS == 0:
                    await self.sweep_history()
            except RedisError:
                continue
            except Exception:
                log.exception("scanning the rooms failed")

    async def _list_ended(self, room: str) -> None:
        """Put a finished game on `HISTORY_WAITING`, trying again until Redis takes it, as
        the commit after it does (it cannot be written before then anyway): a game
        committed as over but not listed would be lost if its owner died with its disk
        before its writer stored it, since the sweep finds games by that list."""
        backoff = Backoff()
        while True:
            try:
                await self._redis().sadd(HISTORY_WAITING, room)
                return
            except RedisError as exc:
                log.warning("room %s: listing its game for history failed: %s", room, exc)
                await asyncio.sleep(backoff.next())

    async def sweep_history(self) -> None:
        """Hand history the finished games whose owner died before a writer stored them:
        take such a room over (its snapshot says the game is over; `take_over` hands it).
        A room whose owner lives is its owner's to hand."""
        redis = self._redis()
        for raw in await redis.smembers(HISTORY_WAITING):
            room = raw_bytes(raw).decode()
            if room in self.rooms.actors:
                continue
            if await redis.get(history_key(room)) == b"stored":
                await redis.srem(HISTORY_WAITING, room)
                continue
            if await redis.exists(lease_key(room)) or await self.take_over(room):
                continue
            if not await redis.exists(snap_key(room)):
                await redis.srem(HISTORY_WAITING, room)  # (closed: its owner's outbox has it)
