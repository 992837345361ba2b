"""The rooms this process owns: leases held and renewed, rooms taken over, handed over,
lost, and closed when idle.

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
from typing import Any

from redis.exceptions import RedisError

from ... import journal, snapshot
from ...actor import BotSpawner, RoomActor, ShowProgress
from ...commands import ReopenCmd
from ...journal import Entry
from ...outgoing import Outgoing
from ...room import RoomCore
from ..local import LocalRooms
from .backoff import Backoff
from .errors import Fenced
from .keys import (
    HISTORY_WAITING,
    LOBBY,
    command_channel,
    history_key,
    journal_key,
    lease_key,
    log_key,
    process_key,
    record_log_key,
    snap_key,
)
from .link import Link
from .packing import pack_events, pack_outgoing, unpack_outgoing
from .relay import EventRelay
from .scripts import Renewal, RidingReply, release, renew
from .store import RoomStore

log = logging.getLogger("dicehall.redis")

HISTORY_SWEEP_ROUNDS = 20
"""Scans between two sweeps of `HISTORY_WAITING` (about every 5 s with the default lease)."""


class Leases:
    def __init__(
        self,
        proc: str,
        link: Callable[[], Link],
        redis: Callable[[], Any],
        store: RoomStore,
        relay: EventRelay,
        spawn: Callable[[Coroutine[Any, Any, None]], None],
        *,
        lease_ms: int,
        history: int,
        idle_seconds: float,
        over_seconds: float,
        empty_seconds: float,
        spawn_bot: BotSpawner | None,
        drop_bots: Callable[[str], None] | None,
        public_url: Callable[[], str | None],
        game_over: Callable[[RoomCore], bool],
        progress: ShowProgress | None = None,
    ) -> None:
        self.proc = proc
        self._link = link
        self._redis = redis
        self.store = store
        self.relay = relay
        self._spawn = spawn
        self.lease_ms = lease_ms
        self.history = history
        self.idle_seconds = idle_seconds
        self.over_seconds = over_seconds
        self.empty_seconds = empty_seconds
        self.spawn_bot = spawn_bot
        self.drop_bots = drop_bots
        self._public_url = public_url
        self._progress = progress
        self._game_over = game_over
        """Hands a finished game to history: True if this process keeps history (and will
        say when the game is stored: `stored`)."""
        self._ended: set[str] = set()
        """Rooms run here whose finished game was handed to history (once per owner)."""
        self._unstored: set[str] = set()
        """Rooms run here whose finished game history has not stored yet: not closed until
        it has (their snapshot is what another process takes them over from, should this
        one die first; closing a room deletes it)."""
        self.actors = LocalRooms()
        self._lost: set[int] = set()
        """The ids of cores whose room another process runs now: never written again."""
        self.stopping = False
        self.takeovers = 0

    # --- taking and giving up rooms --------------------------------------------------------

    async def create(self, core: RoomCore) -> bool:
        """Own a new room: False if its id is taken (the caller picks another)."""
        if not await self._redis().set(lease_key(core.id), self.proc, nx=True, px=self.lease_ms):
            return False
        await self.store.persist(core, [])
        await self.own(core)
        return True

    async def own(self, core: RoomCore) -> None:
        actor = RoomActor(
            core,
            self._commit,
            self.spawn_bot,
            expired=self.actors.windows_expired,
            journal=True,
            progress=self._progress,
        )
        self.actors[core.id] = actor
        await self._link().subscribe(command_channel(core.id))
        actor.start()
        await self.relay.listen(core.id)  # the owner delivers its commits itself
        if self.spawn_bot is not None:
            for seat, s in enumerate(core.seats):
                if s.kind == "bot" and s.bot is not None and core.status != "over":
                    self.spawn_bot(core.id, seat, s.bot)

    async def give_up(self, room: str, release_lease: bool) -> None:
        """Stop running `room` here after the commands already queued (a drain, a reap)."""
        actor = self.actors.pop(room, None)
        if actor is None:
            return
        if self.drop_bots is not None:
            self.drop_bots(room)
        await actor.stop()
        if actor.unwritten():  # answers the room kept back: written, not lost
            with contextlib.suppress(Fenced):
                await self.store.persist(actor.core, [])
        self.store.forget(room)
        self._ended.discard(room)
        self._unstored.discard(room)  # (the next owner hands it again if it still waits)
        with contextlib.suppress(RedisError):
            await self._link().unsubscribe(command_channel(room))
            if release_lease:
                await release(self._link(), room, self.proc)
        with contextlib.suppress(RedisError):
            await self.relay.listen(room)  # local members hear the room from its next owner

    def lose(self, room: str, core: RoomCore) -> None:
        """Another process runs `room` now: stop `core` at once, run nothing more of it.

        Commands still queued are cancelled, which tells their callers they were not run
        (they try again, on the new owner)."""
        self._lost.add(id(core))
        actor = self.actors.get(room)
        if actor is None or actor.core is not core:
            return
        del self.actors[room]
        log.warning("room %s belongs to another process now; stopping it here", room)
        if self.drop_bots is not None:
            self.drop_bots(room)
        self._spawn(self._retire(room, actor))

    async def _retire(self, room: str, actor: RoomActor) -> None:
        await actor.stop(grace=0)
        self._lost.discard(id(actor.core))
        if room not in self.actors:  # (it may be ours again already)
            self.store.forget(room)
            self._ended.discard(room)
            self._unstored.discard(room)
            with contextlib.suppress(RedisError):
                await self._link().unsubscribe(command_channel(room))
            with contextlib.suppress(RedisError):
                await self.relay.listen(room)

    async def take_over(self, room: str) -> bool:
        """Own a room whose lease lapsed: its snapshot plus the stream's tail."""
        if room in self.actors or self.stopping:
            return room in self.actors
        redis = self._redis()
        if not await redis.set(lease_key(room), self.proc, nx=True, px=self.lease_ms):
            return False
        raw = await redis.get(snap_key(room))
        if raw is None:
            await release(self._link(), room, self.proc)
            await redis.hdel(LOBBY, room)
            return False
        record_log = await redis.get(record_log_key(room)) or b""
        saved = snapshot.decode(raw)
        core = RoomCore.restore(saved, self.history, record_log, presence=True)
        batches = await redis.lrange(journal_key(room), 0, -1) if saved.format >= 4 else []
        tail = await redis.xrevrange(log_key(room), "+", "-", count=self.history)
        logged = [unpack_outgoing(fields[b"m"]) for _, fields in reversed(tail)]
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
        if room in self.actors:  # the scan and a forwarded call both got here
            return True
        # (none in Redis yet if an earlier version wrote the snapshot: the commit sets it)
        self.store.taken_over(room, min(len(record_log), len(core.record_log.data)))
        self.takeovers += 1
        log.info("took over room %s at seq %d (%d commands run again)", room, core.seq, ran)
        self.relay.taken_over(room, list(core.log))
        await self.own(core)
        if core.status == "over":
            self._ended.add(room)
            if await redis.get(history_key(room)) == b"waiting":  # (its owner died first)
                self._hand_to_history(core)
        self._spawn(self._reopen(room))
        return True

    async def _reopen(self, room: str) -> None:
        """Answers the old owner held without committing them are gone: the open window
        is announced again, and its seats answer again."""
        actor = self.actors.get(room)
        if actor is None:
            return
        done = actor.submit(ReopenCmd())
        await asyncio.wait((done,))  # (cancelled if the room stopped here meanwhile)
        if not done.cancelled() and done.exception() is not None:
            log.warning("room %s: announcing its window again failed: %s", room, done.exception())

    # --- the actors' commit ------------------------------------------------------------

    async def _commit(
        self, core: RoomCore, out: list[Outgoing], rider: object, ran: list[Entry]
    ) -> None:
        """Durable first, visible second: persist (with `ran`, the commands that made
        `out`), publish (and answer the forwarded command that made `out`, if a
        `RidingReply` rides along), then deliver locally."""
        if id(core) in self._lost:
            raise asyncio.CancelledError  # lost meanwhile: the actor stops, nothing is written
        ending = core.status == "over" and core.id not in self._ended
        if ending:  # (first: a game whose end is committed is always on the list)
            await self._list_ended(core.id)
        entries = [(o.seq, pack_outgoing(o)) for o in out]
        # (the event channel also carries the live-only variants; the stream does not)
        heard = [
            pack_outgoing(o, live=True) if o.live else e
            for o, (_, e) in zip(out, entries, strict=True)
        ]
        payload = pack_events(self.proc, heard)
        try:
            reply = rider if isinstance(rider, RidingReply) else None
            await self.store.persist(core, entries, payload, reply, ran)
        except Fenced:
            # Not written, and never will be: end the actor's task (its command's caller is
            # told it was not run) before it runs anything else.
            self.lose(core.id, core)
            raise asyncio.CancelledError from None
        if ending:
            self._ended.add(core.id)  # (its end is in Redis now: `history_key` says waiting)
            self._hand_to_history(core)
        self.relay.committed(core.id, out)

    def _hand_to_history(self, core: RoomCore) -> None:
        if self._game_over(core):
            self._unstored.add(core.id)

    def stored(self, room: str) -> None:
        """History is done with `room`'s finished game: the room may close now."""
        self._unstored.discard(room)

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
                for room, actor in self.actors.items()
                if written.get(room, 0.0) < fresh
            ]
            renewals = [
                renew(self._link(), room, self.proc, self.lease_ms) for room, _ in owned
            ]  # sent together: one write and one round trip on a standalone Redis
            statuses = await asyncio.gather(*renewals, return_exceptions=True)
            for (room, actor), status in zip(owned, statuses, strict=True):
                if status is Renewal.LOST:
                    self.lose(room, actor.core)
                elif status is Renewal.GONE:  # lapsed or lost with Redis's data: write back
                    await self.rewrite(room)

    async def rewrite(self, room: str) -> None:
        """Write the room back whole (Redis lost it, or its lease lapsed)."""
        actor = self.actors.get(room)
        if actor is None:
            return
        try:
            await self.store.persist(actor.core, [])
        except Fenced:
            self.lose(room, actor.core)

    async def scan(self) -> None:
        """Take over rooms whose owner is gone; close rooms idle for too long; now and then
        sweep the finished games history is waiting for."""
        rounds = 0
        while True:
            await asyncio.sleep(min(0.25, self.lease_ms / 8000))
            if self.stopping:  # (a cancel lost in a Redis call below: server/cancelling.py)
                return
            try:
                for room in list(self.actors):
                    await self._reap_if_idle(room)
                for room in await self._link().orphans(LOBBY, lease_key):
                    if room not in self.actors:
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
            room = raw.decode()
            if room in self.actors:
                continue
            if await redis.get(history_key(room)) == b"stored":
                await redis.srem(HISTORY_WAITING, room)
                continue
            if await redis.exists(lease_key(room)) or await self.take_over(room):
                continue
            if not await redis.exists(snap_key(room)):
                await redis.srem(HISTORY_WAITING, room)  # (closed: its owner's outbox has it)

    async def _reap_if_idle(self, room: str) -> None:
        """Close a room nobody is in after `idle_seconds` of quiet (a finished one after
        `over_seconds`, or at the next scan once everyone left it; one nobody has sat in
        after `empty_seconds`, before its game starts), but a finished one
        only once history has stored its game: its lease, logs and snapshot go; a
        finished game's record stays."""
        actor = self.actors.get(room)
        if actor is None or room in self._unstored or self.relay.interest.get(room, 0) > 0:
            return
        core = actor.core
        if not core.closable(time.time(), self.idle_seconds, self.over_seconds, self.empty_seconds):
            return
        redis = self._redis()
        await redis.hdel(LOBBY, room)  # first: nobody is offered it now
        # The lease goes last: while it is held nobody can take the room over, and once
        # its snapshot is gone nobody can (a command in between came back to life a room
        # just closed, from the snapshot that give_up had just written).
        await self.give_up(room, release_lease=False)
        await redis.delete(snap_key(room), log_key(room), record_log_key(room), journal_key(room))
        with contextlib.suppress(RedisError):
            await release(self._link(), room, self.proc)
        self.actors.rooms_closed += 1
