"""Scale-out: many processes share rooms through Redis (DESIGN.md, "Backends").

- A room is owned by one process at a time: a lease key with a TTL that the owner renews.
  Only the owner runs the room's actor.
- Commands from sessions on other processes reach the owner on the room's command channel;
  the owner answers on the asking process's reply channel.
- After each command the owner *commits*: it appends the room's new messages to a stream
  (the durable log) and writes the room's snapshot, and only then publishes them on the
  room's event channel and answers. Each process subscribes once per room it has members
  in and fans out locally. Pub/sub is the fast path; the stream is the truth: a process
  that sees a gap in a room's seq fills it from the stream.
- When an owner dies its lease expires; every process scans for rooms without a lease and
  one of them takes the room over from its snapshot and the stream's tail.
- With `cluster=True` every key and channel of a room shares the hash tag `{room}`, so a room
  lives on one shard, and channels use sharded pub/sub (SPUBLISH / SSUBSCRIBE).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError, ResponseError

from protocol import errors as E
from protocol.messages.common import RoomInfo
from rules import get_game

from .. import snapshot
from ..actor import BotSpawner, RoomActor
from ..commands import RESULTS, Command, CommandType, RoomMessageType
from ..hub import Hub
from ..room import Outgoing, RoomCore
from .base import Backend, RoomSpec, new_room_id

log = logging.getLogger("dicehall.redis")

_ENC = msgspec.msgpack.Encoder()
_DEC = msgspec.msgpack.Decoder()
_CMD = msgspec.msgpack.Decoder(CommandType)

LOBBY = "dh:lobby"
"""Hash: room id -> RoomInfo of every room that is not over."""

SECRET = "dh:token-secret"
RECORD_TTL = 7 * 24 * 3600

# KEYS[1] lease, ARGV[1] owner, ARGV[2] ttl ms -> 1 renewed, 2 re-created, 0 lost.
_RENEW = """
local v = redis.call('get', KEYS[1])
if v == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
if not v then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 2 end
return 0
"""
# KEYS[1] lease, ARGV[1] owner -> 1 released.
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


def lease_key(room: str) -> str:
    return f"dh:{{{room}}}:lease"


def snap_key(room: str) -> str:
    return f"dh:{{{room}}}:snap"


def log_key(room: str) -> str:
    return f"dh:{{{room}}}:log"


def record_key(room: str) -> str:
    return f"dh:{{{room}}}:record"


def command_channel(room: str) -> str:
    return f"dh:{{{room}}}:cmd"


def event_channel(room: str) -> str:
    return f"dh:{{{room}}}:ev"


def reply_channel(proc: str) -> str:
    return f"dh:{{proc-{proc}}}:reply"


def pack_outgoing(out: Outgoing) -> dict[str, Any]:
    return {"m": out.message, "p": {str(k): v for k, v in out.private.items()}}


def unpack_outgoing(data: dict[str, Any]) -> Outgoing:
    message = msgspec.convert(data["m"], RoomMessageType)
    private = {int(k): msgspec.convert(v, RoomMessageType) for k, v in data.get("p", {}).items()}
    return Outgoing(message, private)


class _Retry(Exception):
    """The room has no reachable owner yet: try again shortly."""


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
        proc: str | None = None,
    ) -> None:
        super().__init__(hub)
        self.url = url
        self.cluster = cluster
        self.spawn_bot = spawn_bot
        self.drop_bots = drop_bots
        self.lease_ms = lease_ms
        self.history = history
        self.idle_seconds = idle_seconds
        self.proc = proc or secrets.token_hex(6)
        self.redis: Any = None
        self._pubsub: Any = None
        self._actors: dict[str, RoomActor] = {}
        self._interest: dict[str, int] = {}
        """Local members per room: the event channel is subscribed while this is > 0."""
        self._last_seq: dict[str, int] = {}
        self._pending: dict[int, tuple[asyncio.Future[Any], Any]] = {}
        self._ids = itertools.count(1)
        self._tasks: list[asyncio.Task[None]] = []
        self._healthy = False
        self._stopping = False
        self._sub_lock = asyncio.Lock()
        self.windows_expired_lost = 0
        self.takeovers = 0
        self.rooms_closed = 0

    # --- connection --------------------------------------------------------------------

    async def start(self) -> None:
        if self.cluster:
            self.redis = RedisCluster.from_url(self.url)
            await self.redis.initialize()
        else:
            self.redis = aioredis.Redis.from_url(self.url)
        self._renew = self.redis.register_script(_RENEW)
        self._release = self.redis.register_script(_RELEASE)
        self._pubsub = self.redis.pubsub()
        await self._subscribe_channel(reply_channel(self.proc))
        self._healthy = True
        loop = asyncio.get_running_loop()
        for job in (self._listen(), self._keep_leases(), self._scan()):
            self._tasks.append(loop.create_task(job))

    async def stop(self) -> None:
        """Drain: finish queued commands, commit, hand every room over by releasing its lease."""
        self._stopping = True
        for room in list(self._actors):
            await self._give_up(room, release=True)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, RedisError):
                await task
        with contextlib.suppress(RedisError, RuntimeError):
            await self._pubsub.aclose()
        with contextlib.suppress(RedisError, RuntimeError):
            await self.redis.aclose()

    async def shared_secret(self) -> bytes:
        """Created once by whichever process asks first; Redis access already implies trust."""
        await self.redis.set(SECRET, secrets.token_hex(32), nx=True)
        secret: bytes = await self.redis.get(SECRET)
        return secret

    def ready(self) -> bool:
        return self._healthy and not self._stopping

    async def _publish(self, channel: str, data: Any) -> int:
        payload = _ENC.encode(data)
        if self.cluster:
            n: int = await self.redis.spublish(channel, payload)
        else:
            n = await self.redis.publish(channel, payload)
        return n

    async def _subscribe_channel(self, channel: str) -> None:
        if self.cluster:
            await self._pubsub.ssubscribe(channel)
        else:
            await self._pubsub.subscribe(channel)

    async def _unsubscribe_channel(self, channel: str) -> None:
        if self.cluster:
            await self._pubsub.sunsubscribe(channel)
        else:
            await self._pubsub.unsubscribe(channel)

    async def _listen(self) -> None:
        """Every channel this process listens to, on one connection; reconnects with backoff."""
        backoff = 0.05
        while True:
            try:
                if self.cluster:
                    message = await self._pubsub.get_sharded_message(
                        ignore_subscribe_messages=True, timeout=1.0
                    )
                else:
                    message = await self._pubsub.get_message(
                        ignore_subscribe_messages=True, timeout=1.0
                    )
                backoff = 0.05
                if not self._healthy:
                    self._healthy = True
                    await self._resync_after_outage()
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                self._healthy = False
                log.warning("redis pub/sub: %s; retrying in %.2fs", exc, backoff)
                await asyncio.sleep(backoff)
                backoff = min(2.0, backoff * 2)
                continue
            if message is None or message.get("type") not in ("message", "smessage"):
                continue
            try:
                self._dispatch(message["channel"].decode(), _DEC.decode(message["data"]))
            except Exception:
                log.exception("bad message on %r", message.get("channel"))

    def _dispatch(self, channel: str, data: Any) -> None:
        if channel == reply_channel(self.proc):
            pending = self._pending.pop(data["rid"], None)
            if pending is not None and not pending[0].done():
                fut, typ = pending
                if data["ok"]:
                    fut.set_result(msgspec.convert(data["result"], typ) if typ else None)
                else:
                    err = data["error"]
                    cls = E.by_code(err["code"]) or E.InternalError
                    fut.set_exception(cls(err["message"], rule=err.get("rule")))
            return
        room = channel.split("{", 1)[1].split("}", 1)[0]
        if channel.endswith(":cmd"):
            asyncio.get_running_loop().create_task(self._serve_command(room, data))
        elif channel.endswith(":ev") and data["from"] != self.proc:
            asyncio.get_running_loop().create_task(self._receive_events(room, data["out"]))

    # --- owning rooms ---------------------------------------------------------------------

    async def create(self, spec: RoomSpec) -> RoomInfo:
        self._check()
        room = new_room_id()
        while not await self.redis.set(lease_key(room), self.proc, nx=True, px=self.lease_ms):
            room = new_room_id()
        core = RoomCore(
            room,
            get_game(spec.game),
            spec.options,
            spec.seats,
            spec.turn_window,
            public=spec.public,
            name=spec.name,
            history=self.history,
            autostart=spec.autostart,
            host_key=spec.host_key,
        )
        core.last_activity = time.time()
        await self._persist(core, [])
        await self._own(core)
        return core.info()

    async def _own(self, core: RoomCore) -> None:
        actor = RoomActor(core, self._commit, self.spawn_bot)
        self._actors[core.id] = actor
        await self._subscribe_channel(command_channel(core.id))
        actor.start()
        if self.spawn_bot is not None:
            for seat, s in enumerate(core.seats):
                if s.kind == "bot" and s.bot is not None and core.status != "over":
                    self.spawn_bot(core.id, seat, s.bot)

    async def _give_up(self, room: str, release: bool) -> None:
        actor = self._actors.pop(room, None)
        if actor is None:
            return
        if self.drop_bots is not None:
            self.drop_bots(room)
        await actor.stop()
        with contextlib.suppress(RedisError):
            await self._unsubscribe_channel(command_channel(room))
            if release:
                await self._release(keys=[lease_key(room)], args=[self.proc])

    async def _take_over(self, room: str) -> bool:
        """Own a room whose lease lapsed: its snapshot plus the stream's tail."""
        if room in self._actors or self._stopping:
            return room in self._actors
        if not await self.redis.set(lease_key(room), self.proc, nx=True, px=self.lease_ms):
            return False
        raw = await self.redis.get(snap_key(room))
        if raw is None:
            await self._release(keys=[lease_key(room)], args=[self.proc])
            await self.redis.hdel(LOBBY, room)
            return False
        core = snapshot.load(_DEC.decode(raw), self.history)
        tail = await self.redis.xrevrange(log_key(room), "+", "-", count=self.history)
        for _, fields in reversed(tail):
            core.log.append(unpack_outgoing(_DEC.decode(fields[b"m"])))
        self.takeovers += 1
        log.info("took over room %s at seq %d", room, core.seq)
        await self._own(core)
        return True

    async def _commit(self, core: RoomCore, out: list[Outgoing]) -> None:
        """Durable first, visible second: persist, publish, then deliver locally."""
        await self._persist(core, out)
        payload = {"from": self.proc, "out": [pack_outgoing(o) for o in out]}
        with contextlib.suppress(RedisError):
            await self._publish(event_channel(core.id), payload)
        self.hub.deliver(core.id, out)

    async def _persist(self, core: RoomCore, out: list[Outgoing]) -> None:
        """Retry until Redis takes it: a room pauses while Redis is away, it never forgets."""
        backoff = 0.05
        while True:
            try:
                pipe = self.redis.pipeline(transaction=not self.cluster)
                for o in out:
                    pipe.xadd(
                        log_key(core.id),
                        {"m": _ENC.encode(pack_outgoing(o))},
                        id=f"{o.seq}-1",
                        maxlen=self.history,
                        approximate=True,
                    )
                pipe.set(snap_key(core.id), _ENC.encode(snapshot.dump(core)))
                if core.status == "over" and core.record is not None:
                    pipe.set(record_key(core.id), msgspec.json.encode(core.record), ex=RECORD_TTL)
                await pipe.execute()
                if core.status == "over":
                    await self.redis.hdel(LOBBY, core.id)
                else:
                    await self.redis.hset(LOBBY, core.id, _ENC.encode(core.info()))
                return
            except ResponseError as exc:
                if "equal or smaller" not in str(exc):
                    raise
                # A retry after a reply lost in transit: the transaction had run. The log and
                # the snapshot are written; only the lobby may be behind.
                out = []
            except RedisError as exc:
                self._healthy = False
                log.warning("redis commit of room %s failed: %s", core.id, exc)
                await asyncio.sleep(backoff)
                backoff = min(2.0, backoff * 2)

    async def _rewrite(self, core: RoomCore) -> None:
        """Write a room back whole (its log tail from memory) after Redis lost it."""
        await self.redis.delete(log_key(core.id))
        await self._persist(core, list(core.log))

    async def _keep_leases(self) -> None:
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            for room in list(self._actors):
                try:
                    status = await self._renew(
                        keys=[lease_key(room)], args=[self.proc, self.lease_ms]
                    )
                except RedisError:
                    continue
                if status == 0:
                    log.warning("lost the lease of room %s; stopping it here", room)
                    await self._give_up(room, release=False)
                elif status == 2:  # Redis lost its data: write the room back
                    actor = self._actors.get(room)
                    if actor is not None:
                        await self._rewrite(actor.core)

    async def _scan(self) -> None:
        """Take over rooms whose owner is gone; close rooms idle for too long."""
        while True:
            await asyncio.sleep(min(0.25, self.lease_ms / 8000))
            if self._stopping:
                continue
            try:
                rooms = await self.redis.hkeys(LOBBY)
                for raw in rooms:
                    room = raw.decode()
                    if room in self._actors:
                        await self._reap_if_idle(room)
                    elif not await self.redis.exists(lease_key(room)):
                        await self._take_over(room)
            except RedisError:
                continue

    async def _reap_if_idle(self, room: str) -> None:
        actor = self._actors[room]
        core = actor.core
        if any(s.kind == "human" and s.connected for s in core.seats):
            return
        if self._interest.get(room, 0) > 0 or time.time() - core.last_activity < self.idle_seconds:
            return
        await self._give_up(room, release=True)
        await self.redis.delete(snap_key(room), log_key(room))
        await self.redis.hdel(LOBBY, room)
        self.rooms_closed += 1

    async def _resync_after_outage(self) -> None:
        """Redis came back (maybe empty): rewrite owned rooms, refill subscribers' gaps."""
        for room, actor in list(self._actors.items()):
            with contextlib.suppress(RedisError):
                await self.redis.set(lease_key(room), self.proc, px=self.lease_ms)
                await self._rewrite(actor.core)
        for room in list(self._interest):
            await self._fill_gap(room, None)

    # --- commands ------------------------------------------------------------------------

    async def call(self, room: str, cmd: Command) -> Any:
        self._check()
        give_up = time.monotonic() + 2 * self.lease_ms / 1000 + 2.0
        while True:
            actor = self._actors.get(room)
            if actor is not None:
                return await actor.call(cmd)
            try:
                return await self._forward(room, cmd, give_up)
            except _Retry:
                await asyncio.sleep(0.1)
            except RedisError as exc:
                raise E.UnavailableError(f"Redis is unreachable: {exc}") from None

    async def _forward(self, room: str, cmd: Command, give_up: float) -> Any:
        """Send `cmd` to the room's owner (taking the room over if it has none)."""
        owner = await self.redis.get(lease_key(room))
        if owner is None:
            if not await self.redis.exists(snap_key(room)):
                raise E.NoSuchRoomError(f"no room {room!r}")
            await self._take_over(room)
            raise _Retry
        rid = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = (fut, RESULTS.get(type(cmd)))
        payload = {"from": self.proc, "rid": rid, "cmd": cmd}
        if await self._publish(command_channel(room), payload) == 0:
            self._pending.pop(rid, None)  # nobody got it: the owner is gone, wait it out
            if time.monotonic() > give_up:
                raise E.UnavailableError("the room's server is gone; try again")
            raise _Retry
        try:
            return await asyncio.wait_for(fut, timeout=2 * self.lease_ms / 1000 + 1.0)
        except TimeoutError:
            raise E.UnavailableError(
                "the room's server did not answer; resume the room to see what happened"
            ) from None
        finally:
            self._pending.pop(rid, None)

    async def _serve_command(self, room: str, data: Any) -> None:
        reply: dict[str, Any] = {"rid": data["rid"]}
        try:
            cmd = msgspec.convert(data["cmd"], CommandType)
            actor = self._actors.get(room)
            if actor is None:
                raise E.UnavailableError("this server no longer owns the room; try again")
            reply["result"] = await actor.call(cmd)
            reply["ok"] = True
        except E.ProtocolError as exc:
            reply["ok"] = False
            reply["error"] = {"code": exc.code, "message": exc.message, "rule": exc.rule}
        except Exception as exc:
            log.exception("forwarded command failed")
            reply["ok"] = False
            reply["error"] = {"code": E.InternalError.code, "message": str(exc), "rule": None}
        with contextlib.suppress(RedisError):
            await self._publish(reply_channel(data["from"]), reply)

    # --- events for local members -----------------------------------------------------

    async def subscribe(self, room: str) -> None:
        self._interest[room] = self._interest.get(room, 0) + 1
        if self._interest[room] == 1:
            async with self._sub_lock:
                await self._subscribe_channel(event_channel(room))

    def unsubscribe(self, room: str) -> None:
        n = self._interest.get(room, 0) - 1
        if n > 0:
            self._interest[room] = n
            return
        self._interest.pop(room, None)
        self._last_seq.pop(room, None)
        asyncio.get_running_loop().create_task(self._drop_channel(room))

    async def _drop_channel(self, room: str) -> None:
        async with self._sub_lock:
            if room not in self._interest:
                with contextlib.suppress(RedisError):
                    await self._unsubscribe_channel(event_channel(room))

    async def _receive_events(self, room: str, packed: list[Any]) -> None:
        if room not in self._interest:
            return
        out = [unpack_outgoing(p) for p in packed]
        if out:
            await self._fill_gap(room, out[0].seq)
            last = self._last_seq.get(room, 0)
            out = [o for o in out if o.seq > last]
            if out:
                self._last_seq[room] = out[-1].seq
                self.hub.deliver(room, out)

    async def _fill_gap(self, room: str, next_seq: int | None) -> None:
        """Deliver what the stream holds between the last seq seen and `next_seq`."""
        last = self._last_seq.get(room)
        if last is None or (next_seq is not None and next_seq <= last + 1):
            if last is None and next_seq is not None:
                self._last_seq[room] = next_seq - 1
            return
        upper = "+" if next_seq is None else f"{next_seq - 1}-1"
        with contextlib.suppress(RedisError):
            entries = await self.redis.xrange(log_key(room), f"{last + 1}-0", upper)
            missed = [unpack_outgoing(_DEC.decode(f[b"m"])) for _, f in entries]
            missed = [o for o in missed if o.seq > last]
            if missed:
                self._last_seq[room] = missed[-1].seq
                self.hub.deliver(room, missed)

    # --- lobby ------------------------------------------------------------------------------

    async def rooms(self, game: str | None = None) -> list[RoomInfo]:
        self._check()
        raw = await self.redis.hgetall(LOBBY)
        infos = [msgspec.convert(_DEC.decode(v), RoomInfo) for v in raw.values()]
        return [i for i in infos if i.public and (game is None or i.game == game)]

    async def record(self, room: str) -> dict[str, Any] | None:
        raw = await self.redis.get(record_key(room))
        if raw is None:
            return None
        record: dict[str, Any] = msgspec.json.decode(raw)
        return record

    def game_of(self, room: str) -> str:
        actor = self._actors.get(room)
        if actor is None:
            raise E.NoSuchRoomError(f"room {room!r} is not owned here")
        return actor.core.game.name

    def stats(self) -> dict[str, int]:
        cores = [a.core for a in self._actors.values()]
        return {
            "rooms": len(cores),
            "rooms_playing": sum(c.status == "playing" for c in cores),
            "seats_taken": sum(s.kind != "open" for c in cores for s in c.seats),
            "windows_expired": sum(a.windows_expired for a in self._actors.values()),
            "rooms_closed": self.rooms_closed,
            "takeovers": self.takeovers,
        }

    def _check(self) -> None:
        if self._stopping:
            raise E.ShuttingDownError("this server is shutting down; reconnect")
        if not self._healthy:
            raise E.UnavailableError("the server cannot reach Redis; try again shortly")
