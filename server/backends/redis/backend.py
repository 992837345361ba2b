"""Scale-out: many processes share rooms through Redis (docs/architecture.md, "Redis").

The backend composes the parts, each in its module: `leases` (the rooms this process
owns, taken over, handed over, closed), `store` (their fenced commits and lobby entries),
`bus` (commands for rooms another process runs), `relay` (those rooms' messages for the
members here), over a `link` (the hot calls: resp.py on a standalone Redis, redis-py's
cluster client on a cluster) and redis-py for what is rare.

Nothing waits on Redis without a deadline: a connection silent for `reply_timeout` while a
reply is awaited is given up and opened again, a health ping every half of it says whether
Redis answers (`ready()`, /readyz), and while it does not, requests fail at once with
`unavailable` rather than wait. A request already under way when Redis went silent fails
with `unavailable` after about two leases; its command may still take effect when Redis
answers again (the error says so: look at the room before trying again).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Protocol

import msgspec
from redis.exceptions import RedisError

from dicehall.protocol import errors
from dicehall.protocol.messages.common import RoomInfo
from dicehall.protocol.messages.results import RoomsResult

from ...cancelling import cancel_and_wait
from ...connections.hub import Hub
from ...hosting.actor import BotSpawner, Rider, RoomActor
from ...hosting.host import RoomHost
from ...jsonvalue import JsonObject
from ...rooms.commands import Command, R, Sync
from ...rooms.outgoing import Outgoing
from ...rooms.room import RoomCore
from ..base import Backend, RoomSpec, new_room_id, page_of
from .bus import CommandBus
from .connect import RedisClient, connect
from .connect import raw as raw_bytes
from .errors import Retry
from .health import Health
from .keys import (
    HISTORY_WAITING,
    LOBBY,
    RECORD_TTL,
    SECRET,
    history_key,
    lease_key,
    process_key,
    record_key,
    room_of,
)
from .leases import Leases
from .link import Link
from .packing import DECODER, EVENTS, events_prefix, pack_progress, unpack_outgoing
from .relay import EventRelay
from .store import FencedStore
from .urls import parse_redis_url

log = logging.getLogger("dicehall.redis")


class _Overdue(Protocol):
    """A call waiting for its room's commit, as the sweep of overdue calls sees it."""

    def done(self) -> bool: ...

    def set_exception(self, exception: BaseException, /) -> None: ...


def _settle(answer: asyncio.Future[R], done: asyncio.Future[R]) -> None:
    """Settle `answer` as `done` was (unless its caller stopped waiting for it)."""
    if answer.done():
        return
    if done.cancelled():
        answer.cancel()
    elif (exc := done.exception()) is not None:
        answer.set_exception(exc)
    else:
        answer.set_result(done.result())


class _Listed(msgspec.Struct):
    """What the lobby's filter reads of an entry (the rest is skipped, not decoded)."""

    game: str
    public: bool


_LISTED = msgspec.msgpack.Decoder(_Listed)
_ENTRY = msgspec.msgpack.Decoder(RoomInfo)


class RedisBackend(Backend):
    def __init__(
        self,
        hub: Hub,
        url: str,
        spawn_bot: BotSpawner | None = None,
        drop_bots: Callable[[str], None] | None = None,
        *,
        cluster: bool = False,
        lease_ms: int = 2000,
        history: int = 1024,
        idle_seconds: float = 600.0,
        over_seconds: float = 30.0,
        empty_seconds: float = 60.0,
        proc: str | None = None,
        reply_timeout: float = 1.0,
        write_behind_ms: int | None = None,
    ) -> None:
        """`write_behind_ms`: write rooms behind, this far apart (`--durability behind`);
        None: nothing is shown before it is written (`seen`)."""
        self.url = url
        self.cluster = cluster
        self.lease_ms = lease_ms
        self.history = history
        self.reply_timeout = reply_timeout
        self._patience = 2 * lease_ms / 1000 + 2.0
        """How long a request may wait for its room (moving, or Redis silent)."""
        self.proc = proc or secrets.token_hex(6)
        self._own_events = events_prefix(self.proc)
        self._redis: RedisClient | None = None
        """redis-py, for what is rare: taking leases, the lobby, the scan, reading logs."""
        self._link: Link | None = None
        """Commits, forwarded commands, replies and pub/sub: every turn window's calls."""
        self._background: set[asyncio.Task[None]] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._secret: bytes | None = None
        self.health = Health(lambda: self.link, reply_timeout, self._back)
        self._stopping = False
        reply_ms = 2 * lease_ms + 5000
        """How long a reply is kept for an asker whose pub/sub connection missed it."""
        self.store = FencedStore(
            lambda: self.link,
            self.proc,
            lease_ms=lease_ms,
            history=history,
            reply_ms=reply_ms,
            cluster=cluster,
            restore_secret=self._restore_secret,
            advertised=self.advertised,
        )
        self.relay = EventRelay(hub, lambda: self.link, lambda: self.redis, self.owns, self._spawn)
        self.leases = Leases(
            self.proc,
            lambda: self.link,
            lambda: self.redis,
            self.store,
            self.relay,
            self._spawn,
            lease_ms=lease_ms,
            history=history,
            public_url=lambda: self.public_url,
            write_behind_ms=write_behind_ms,
        )
        host = RoomHost(
            hub,
            self.leases,
            spawn_bot=spawn_bot,
            drop_bots=drop_bots,
            idle_seconds=idle_seconds,
            over_seconds=over_seconds,
            empty_seconds=empty_seconds,
        )
        host.deliver = self.relay.committed
        host.show_progress = self._progress
        self.leases.host = host
        super().__init__(hub, host)
        self.call = self._ask
        self._urls: dict[str, str | None] = {}
        """Where each process seen as an owner takes connections (None: not advertised)."""
        self._reply_ms = reply_ms
        self._waiting: dict[_Overdue, float] = {}
        """Calls on rooms run here, by the monotonic time at which to stop waiting."""
        self._bus: CommandBus | None = None

    # --- what the parts share -------------------------------------------------------------

    @property
    def link(self) -> Link:
        assert self._link is not None, "the backend is not started"
        return self._link

    @property
    def redis(self) -> RedisClient:
        """redis-py, for what is rare: taking leases, the lobby, the scan, reading logs."""
        assert self._redis is not None, "the backend is not started"
        return self._redis

    @property
    def bus(self) -> CommandBus:
        assert self._bus is not None, "the backend is not started"
        return self._bus

    def owns(self, room: str) -> bool:
        return room in self.host.actors

    def _spawn(self, job: Coroutine[object, None, None]) -> None:
        """Run `job` in the background, kept (and cancelled at stop) until it is done."""
        task = asyncio.get_running_loop().create_task(job)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        # One Redis, the primary Sentinel names, or a cluster (connect.py, urls.py).
        self._redis, self._link = await connect(
            parse_redis_url(self.url, self.cluster),
            self._on_message,
            self.health.down,
            self.health.up,
            cluster=self.cluster,
            reply_timeout=self.reply_timeout,
            patience=self._patience,
        )
        self._bus = CommandBus(
            self.proc,
            lambda: self.link,
            lambda: self.redis,
            actor_of=self.host.actors.get,
            take_over=self.leases.take_over,
            run_here=self._run_here,
            seen_here=self.relay.seen,
            lease_ms=self.lease_ms,
            reply_ms=self._reply_ms,
            cluster=self.cluster,
        )
        await self.link.subscribe(self.bus.replies)
        await self.leases.advertise()
        self.health.subscribed = True
        jobs = (
            self.leases.keep(),
            self.leases.scan(),
            self.health.watch(),
            self._give_up_waiting(),
        )
        for job in jobs:
            self._tasks.append(asyncio.get_running_loop().create_task(job))
        await self.host.start()

    async def stop(self) -> None:
        """Drain: finish queued commands, commit, hand every room over by releasing its lease."""
        self._stopping = self.leases.stopping = True
        await self.host.stop()
        await self.leases.writer.stop()
        await cancel_and_wait([*self._tasks, *self._background])
        with contextlib.suppress(RedisError, RuntimeError):
            await self.link.close()
        with contextlib.suppress(RedisError, RuntimeError):
            await self.redis.aclose()

    async def shared_secret(self) -> bytes:
        """Created once by whichever process asks first; Redis access already implies trust."""
        await self.redis.set(SECRET, secrets.token_hex(32), nx=True)
        kept = await self.redis.get(SECRET)
        if kept is None:  # (deleted between the two calls)
            raise RedisError("the shared secret is gone")
        secret = self._secret = raw_bytes(kept)
        return secret

    async def _restore_secret(self) -> None:
        """Redis lost its data: put the shared secret back (every process has it)."""
        if self._secret is not None:
            with contextlib.suppress(RedisError):
                await self.redis.set(SECRET, self._secret, nx=True)

    def history_stored(self, room: str) -> None:
        super().history_stored(room)  # (it may close now)
        self._spawn(self._mark_stored(room))

    async def _mark_stored(self, room: str) -> None:
        try:
            await self.redis.set(history_key(room), b"stored", ex=RECORD_TTL)
            await self.redis.srem(HISTORY_WAITING, room)
        except RedisError as exc:  # (a later owner may hand it again: stored once anyway)
            log.warning("room %s: could not note its game as stored: %s", room, exc)

    # --- health ---------------------------------------------------------------------------

    def ready(self) -> bool:
        return self.health.reachable and not self._stopping

    def _back(self) -> None:
        if not self._stopping:
            self._spawn(self._resync_after_outage())

    async def _resync_after_outage(self) -> None:
        """Redis came back (maybe empty): write owned rooms back, refill subscribers' gaps."""
        self.store.forget_lobby()
        await self._restore_secret()
        for room in list(self.host.actors):
            await self.leases.rewrite(room)
        await self.relay.refill()

    def _check(self) -> None:
        if self._stopping:
            raise errors.ShuttingDownError("this server is shutting down; reconnect")
        if not self.health.reachable:
            raise errors.UnavailableError("the server cannot reach Redis; try again shortly")

    @contextlib.asynccontextmanager
    async def _reaching_redis(self) -> AsyncIterator[None]:
        """A request's Redis work: refused at once while Redis is known to be away, and
        `unavailable` if Redis fails or stays silent under it, never a hang. (A room
        created as Redis went silent may be left half written: no lobby entry points to
        it, nobody holds its id.)"""
        self._check()
        try:
            async with asyncio.timeout(self._patience):
                yield
        except (RedisError, TimeoutError) as exc:
            raise errors.UnavailableError(
                "the server cannot reach Redis; try again shortly"
            ) from exc

    # --- pub/sub ----------------------------------------------------------------------------

    def _on_message(self, channel: bytes, data: bytes) -> None:
        """Every pub/sub message, as it is parsed: no task unless it must wait."""
        if self._bus is not None and channel == self._bus.replies_name:
            self._bus.resolve(data)
            return
        room = room_of(channel)
        if channel.endswith(b":ev"):
            if data.startswith(self._own_events, 1):
                return  # its own commit (the channel is being dropped): delivered already
            events = EVENTS.decode(data)
            self.bus.saw_owner(room, events.sender)
            if events.progress:
                self.relay.progress(room, Outgoing.from_msgpack(bytes(events.progress)))
            else:
                self.relay.received(room, [unpack_outgoing(p) for p in events.out], events.epoch)
        elif channel.endswith(b":cmd"):
            self._spawn(self.bus.serve(room, data))

    # --- rooms -----------------------------------------------------------------------------

    async def create(self, spec: RoomSpec) -> RoomInfo:
        async with self._reaching_redis():
            while True:
                core = spec.core(new_room_id(), self.history)
                if await self.host.create(core):
                    return self.advertised(core.info())

    async def owner_url(self, room: str) -> str | None:
        if room in self.host.actors:
            return self.public_url
        try:
            async with asyncio.timeout(self.reply_timeout):
                proc = self.bus.owner_of(room)
                if proc is None:
                    raw = await self.redis.get(lease_key(room))
                    if raw is None:
                        return None
                    proc = raw_bytes(raw).decode()
                if proc not in self._urls:
                    if len(self._urls) >= 1000:
                        self._urls.clear()
                    url = await self.redis.get(process_key(proc))
                    self._urls[proc] = None if url is None else raw_bytes(url).decode()
                return self._urls[proc]
        except (RedisError, TimeoutError):
            return None  # the client stays where it is: its requests are forwarded

    def _ask(self, room: str, cmd: Command[R]) -> Awaitable[R]:
        """`call`: a room run here is asked at once, and its answer is the actor's future
        (or one settled from it when its commit is done), with no coroutine on the way:
        the path of nearly every request when seats follow their rooms. Everything else
        goes through `_call`: a room elsewhere or moving, Redis away, this process
        stopping, and a command the room stopped before running."""
        actor = self.host.actors.get(room)
        if actor is None or self._stopping or not self.health.answering:
            return self._call(room, cmd)
        fut = actor.submit(cmd)
        if not fut.done():
            answer: asyncio.Future[R] = asyncio.get_running_loop().create_future()
            self._waiting[fut] = time.monotonic() + self._patience
            fut.add_done_callback(functools.partial(self._answer, room, cmd, answer))
            return answer
        if fut.cancelled():
            return self._call(room, cmd)
        if fut.exception() is None:
            self._synced(room, fut.result())
        return fut

    def _answer(
        self, room: str, cmd: Command[R], answer: asyncio.Future[R], fut: asyncio.Future[R]
    ) -> None:
        self._waiting.pop(fut, None)
        if answer.done():  # (its caller stopped waiting)
            return
        if fut.cancelled():  # the room stopped here before running it: ask where it is now
            retry = asyncio.ensure_future(self._call(room, cmd))
            retry.add_done_callback(functools.partial(_settle, answer))
            return
        exc = fut.exception()
        if exc is not None:
            answer.set_exception(exc)
            return
        result = fut.result()
        self._synced(room, result)
        answer.set_result(result)

    def _synced(self, room: str, result: object) -> None:
        if type(result) is Sync:
            self.relay.synced(room, result.seq, result.epoch)

    async def _call(self, room: str, cmd: Command[R]) -> R:
        """`call`: run `cmd` on the owner, waiting (within about two leases) while the room moves
        between processes or Redis is away; only a command that may have run is failed."""
        if self._stopping:
            raise errors.ShuttingDownError("this server is shutting down; reconnect")
        if not self.health.answering:
            raise errors.UnavailableError("the server cannot reach Redis; try again shortly")
        give_up = time.monotonic() + self._patience
        while True:
            try:
                actor = self.host.actors.get(room)
                if actor is not None:
                    result: R = await self._run_here(actor, cmd, None, give_up)
                else:
                    result = await self.bus.forward(room, cmd)
            except (Retry, RedisError) as exc:
                self.bus.forget_owner(room)
                if time.monotonic() > give_up:
                    raise errors.UnavailableError(
                        "the room's server is unreachable; try again shortly"
                    ) from exc
                await asyncio.sleep(0.05)
                continue
            self._synced(room, result)
            return result

    async def _run_here(
        self,
        actor: RoomActor,
        cmd: Command[R],
        rider: Rider | None = None,
        deadline: float | None = None,
    ) -> R:
        """Run `cmd` on a room this process owns; with a `deadline` (monotonic), give up
        waiting for its commit then (Redis went silent): `unavailable`, though the
        command may still take effect once Redis answers. (One sweep gives up on every
        overdue call: a timer per call costs about a tenth of a commit.)"""
        fut = actor.submit(cmd, rider)
        if deadline is not None:
            self._waiting[fut] = deadline
        try:
            result: R = await fut
            return result
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            raise Retry from None  # the room stopped here before running the command
        finally:
            if deadline is not None:
                self._waiting.pop(fut, None)

    async def _give_up_waiting(self) -> None:
        """Fail the calls whose commit is overdue (Redis silent), twice per time-out."""
        overdue = (
            "the room's server cannot reach Redis; the request may still take effect: "
            "look at the room (resume, legal) before trying again"
        )
        while True:
            await asyncio.sleep(self.reply_timeout / 2)
            now = time.monotonic()
            for fut, deadline in list(self._waiting.items()):
                if deadline < now and not fut.done():
                    fut.set_exception(errors.UnavailableError(overdue))

    def _progress(self, core: RoomCore) -> None:
        """An answer the room kept back: who has answered, to the members here at once,
        and on the event channel when its last commit reached members elsewhere."""
        here, elsewhere = self.hub.wants_progress(core.id), self.store.heard(core.id)
        progress = core.progress() if here or elsewhere else None
        if progress is None:
            return
        out = Outgoing(progress)
        self.hub.progress(core.id, out)
        if elsewhere:
            self._spawn(self.store.announce(core.id, pack_progress(self.proc, out)))

    async def subscribe(self, room: str) -> None:
        """Returns once the room's messages reach this process (also for the second member
        in): from its own commits if it owns the room, else on the event channel."""
        async with self._reaching_redis():
            await self.relay.subscribe(room)

    def unsubscribe(self, room: str) -> None:
        self.bus.forget_owner(room)
        self.relay.unsubscribe(room)

    async def rooms(self, game: str | None = None) -> list[RoomInfo]:
        async with self._reaching_redis():
            raw = await self.redis.hgetall(LOBBY)
        infos = [msgspec.convert(DECODER.decode(raw_bytes(v)), RoomInfo) for v in raw.values()]
        return [i for i in infos if i.public and (game is None or i.game == game)]

    async def lobby(self, game: str | None, limit: int, after: str | None) -> RoomsResult:
        """The lobby is one hash every process writes to: read whole, as `rooms` does, but
        only the page's entries decoded whole."""
        async with self._reaching_redis():
            raw = await self.redis.hgetall(LOBBY)
        entries = {raw_bytes(room): raw_bytes(entry) for room, entry in raw.items()}
        listed = []
        for room, entry in entries.items():
            shown = _LISTED.decode(entry)
            if shown.public and (game is None or shown.game == game):
                listed.append(room.decode())
        page, cursor = page_of(sorted(listed), limit, after)
        rooms = [_ENTRY.decode(entries[room.encode()]) for room in page]
        return RoomsResult(rooms=rooms, total=len(listed), next=cursor)

    async def record(self, room: str) -> JsonObject | None:
        raw = await self.redis.get(record_key(room))
        if raw is None:
            return None
        record: JsonObject = msgspec.json.decode(raw)
        return record

    def stats(self) -> dict[str, int]:
        return {
            **super().stats(),
            "takeovers": self.leases.takeovers,
            "commands_forwarded": 0 if self._bus is None else self._bus.forwarded,
            "commands_served": 0 if self._bus is None else self._bus.served,
        }
