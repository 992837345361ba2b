"""Scale-out: many processes share rooms through Redis (docs/design.md, "Backends").

- A room is owned by one process at a time: a lease key with a TTL that the owner renews.
  Only the owner runs the room's actor.
- Commands from sessions on other processes reach the owner on the room's command channel;
  the owner answers on the asking process's reply channel and in a short-lived reply key
  (when no process hears a command, the script that published it answers "retry" there).
  Neither side waits for Redis's reply to these: the answer is the next thing the asker
  hears, and a process woken for nothing is what this hop costs most (docs/benchmarks.md).
  Pub/sub drops what arrives while a connection is down, so the asker sends a command again
  each second until answered (the owner runs each one once) and reads the key if the
  published answer went missing. A command that may have run on an owner that is gone is
  failed (`unavailable`), never run twice; reads are simply asked again.
- After each command the owner *commits*: one script appends the room's new messages to a
  stream (the durable log) and writes the room's snapshot, and only then publishes them on
  the room's event channel and the reply to the forwarded command that made them. Each
  process subscribes once per room it has members in and does not own (the owner delivers
  its own commits), and fans out locally. Pub/sub is the fast path; the stream is the
  truth: a process that sees a gap in a room's seq fills it from the stream.
- When an owner dies its lease expires; every process scans for rooms without a lease and
  one of them takes the room over from its snapshot and the stream's tail.
- Commits are fenced: one script checks the lease and the log's last seq and writes the
  log, the snapshot and the lease together, so an owner that lost its room (it froze past
  its lease, or Redis restarted and another process got there first) can never write over
  the new owner's. It stops running the room instead, and its callers retry on the new one.
- Redis may come back empty (a restart without persistence): an owner that finds the log
  behind its room writes the room back whole.
- With `cluster=True` every key and channel of a room shares the hash tag `{room}`, so a room
  lives on one shard, and channels use sharded pub/sub (SPUBLISH / SSUBSCRIBE).
- Nothing waits on Redis without a deadline: a connection silent for `reply_timeout` while
  a reply is awaited is given up and opened again, a health ping every half of it says
  whether Redis answers (`ready()`, /readyz), and while it does not, requests fail at once
  with `unavailable` rather than wait. A request already under way when Redis went silent
  fails with `unavailable` after about two leases; its command may still take effect when
  Redis answers again (the reply says so: look at the room before trying again).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import BlockingConnectionPool
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import RedisError

from protocol import errors as E
from protocol.messages.common import RoomInfo
from protocol.subprotocols import Encoding

from .. import snapshot
from ..actor import BotSpawner, Rider, RoomActor, Tally
from ..commands import (
    RESULTS,
    Command,
    CommandType,
    LegalCmd,
    PresenceCmd,
    ResignCmd,
    Sync,
    SyncCmd,
    TokenCmd,
    WatchCmd,
)
from ..hub import Hub
from ..room import Outgoing, RoomCore
from .base import Backend, RoomSpec, new_room_id
from .redis_link import ClusterLink, Link, StandaloneLink, Unheard
from .resp import Script, keepalive_options

log = logging.getLogger("dicehall.redis")

_ENC = msgspec.msgpack.Encoder()
_DEC = msgspec.msgpack.Decoder()
_CMD = msgspec.msgpack.Decoder(CommandType)
_RESULTS = {typ: msgspec.msgpack.Decoder(typ) for typ in RESULTS.values() if typ is not None}
"""Built once: `msgspec.convert` works out the type anew on every call."""

LOBBY = "dh:lobby"
"""Hash: room id -> RoomInfo of every room that is not over."""

SECRET = "dh:token-secret"
RECORD_TTL = 7 * 24 * 3600

# KEYS[1] lease, ARGV[1] owner, ARGV[2] ttl ms -> 1 renewed, 2 gone (write the room back), 0 lost.
_RENEW = Script("""
local v = redis.call('get', KEYS[1])
if v == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
if not v then return 2 end
return 0
""")
# KEYS[1] lease, ARGV[1] owner -> 1 released.
_RELEASE = Script("""
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
""")
# KEYS: lease, log, snapshot, record, record log[, reply]. ARGV: owner, lease ms, log
# length, snapshot, record ('' for none), record ttl s, rewrite ('1': the entries replace
# the log and the record log), the room's seq, publish command, event channel, payload (''
# for none: nothing is published), the record log's length as written before, its new
# bytes, the reply to the forwarded command that made these messages ('' for none), its
# time to live in ms, its channel, then seq/entry pairs in order. -> 0 fenced: another
# process runs the room (its lease, or a log past this room's seq); 2 a log is behind the
# room (Redis lost it): write again with rewrite; 1 written, lease held or taken back, and
# only then the payload published, then the reply kept and published: what subscribers see
# is always committed, and one round trip does it all. Every check comes before the first
# write: a script that returns early has changed nothing.
_COMMIT = Script("""
local owner = redis.call('get', KEYS[1])
if owner and owner ~= ARGV[1] then return 0 end
local last = 0
local top = redis.call('xrevrange', KEYS[2], '+', '-', 'COUNT', 1)
if #top > 0 then last = tonumber(string.match(top[1][1], '^%d+')) end
local seq = tonumber(ARGV[8])
if last > seq then return 0 end
local done = tonumber(ARGV[12])
if ARGV[7] == '1' then
  redis.call('del', KEYS[2])
  last = 0
else
  local first = seq + 1
  if #ARGV >= 17 then first = tonumber(ARGV[17]) end
  if last < first - 1 then return 2 end
  if done > 0 and redis.call('strlen', KEYS[5]) ~= done then return 2 end
end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
if ARGV[7] == '1' or done == 0 then
  redis.call('set', KEYS[5], ARGV[13])
elseif ARGV[13] ~= '' then
  redis.call('append', KEYS[5], ARGV[13])
end
for i = 17, #ARGV, 2 do
  if tonumber(ARGV[i]) > last then
    redis.call('xadd', KEYS[2], 'MAXLEN', '~', ARGV[3], ARGV[i] .. '-1', 'm', ARGV[i + 1])
  end
end
redis.call('set', KEYS[3], ARGV[4])
if ARGV[5] ~= '' then redis.call('set', KEYS[4], ARGV[5], 'EX', ARGV[6]) end
if ARGV[11] ~= '' then redis.call(ARGV[9], ARGV[10], ARGV[11]) end
if ARGV[14] ~= '' then
  redis.call('set', KEYS[6], ARGV[14], 'PX', ARGV[15])
  redis.call(ARGV[9], ARGV[16], ARGV[14])
end
return 1
""")

RETRY_SAFE = (LegalCmd, SyncCmd, TokenCmd, WatchCmd, PresenceCmd, ResignCmd)
"""Commands that may be sent again when their owner vanished before answering: reads,
presence counts, which are not in a snapshot (a new owner counts them from zero), and the
creator's resignation, which does nothing the second time."""


def lease_key(room: str) -> str:
    return f"dh:{{{room}}}:lease"


def snap_key(room: str) -> str:
    return f"dh:{{{room}}}:snap"


def log_key(room: str) -> str:
    return f"dh:{{{room}}}:log"


def record_log_key(room: str) -> str:
    """The game record's log, appended to as the game goes (the snapshot says how long)."""
    return f"dh:{{{room}}}:rlog"


def record_key(room: str) -> str:
    return f"dh:{{{room}}}:record"


def command_channel(room: str) -> str:
    return f"dh:{{{room}}}:cmd"


def event_channel(room: str) -> str:
    return f"dh:{{{room}}}:ev"


def reply_channel(proc: str) -> str:
    return f"dh:{{proc-{proc}}}:reply"


def reply_key(proc: str, rid: int) -> str:
    """A reply is also kept here a while: one published while the asker's pub/sub
    connection was down (CLIENT KILL, a blip) is not lost, only late."""
    return f"dh:{{proc-{proc}}}:reply:{rid}"


class Packed(msgspec.Struct):
    """A room message in the stream and on the event channel: its MessagePack frame as the
    fan-out sends it (`m`), and the private variants by seat (`p`), embedded as they are."""

    m: msgspec.Raw
    p: dict[str, msgspec.Raw] = {}


class _Events(msgspec.Struct):
    sender: str = msgspec.field(name="from")
    out: list[Packed] = []


_PACKED = msgspec.msgpack.Decoder(Packed)
_EVENTS = msgspec.msgpack.Decoder(_Events)


def _frame(out: Outgoing, seat: int | None) -> msgspec.Raw:
    return msgspec.Raw(out.frame(seat, Encoding.MSGPACK))


def pack_outgoing(out: Outgoing) -> bytes:
    """The frames the local fan-out encodes anyway, reused: no second encoding."""
    return _ENC.encode(Packed(_frame(out, None), {str(s): _frame(out, s) for s in out.private}))


def unpack_outgoing(data: bytes | Packed) -> Outgoing:
    packed = _PACKED.decode(data) if isinstance(data, bytes) else data
    private = {int(s): bytes(raw) for s, raw in packed.p.items()}
    return Outgoing.from_msgpack(bytes(packed.m), private)


class _Retry(Exception):
    """The command was not run (the room has no reachable owner yet): try again shortly."""


class _Fenced(Exception):
    """Another process runs the room now: this one must not write it."""


class _Gone(Exception):
    """The owner a command was sent to lost the room (or never answered): it may have run."""


class _Forwarded(msgspec.Struct):
    """A command forwarded to the room's owner; `cmd` stays encoded until it is served."""

    sender: str = msgspec.field(name="from")
    rid: int
    cmd: msgspec.Raw


class _Answer(msgspec.Struct):
    """The owner's answer to a forwarded command: a result, `retry`, or an error."""

    rid: int
    ok: bool
    result: msgspec.Raw = msgspec.Raw(b"\xc0")
    retry: bool = False
    error: dict[str, Any] | None = None


_FORWARDED = msgspec.msgpack.Decoder(_Forwarded)
_ANSWER = msgspec.msgpack.Decoder(_Answer)


def _read_command(room: str, raw: msgspec.Raw) -> Command:
    try:
        cmd: Command = _CMD.decode(raw)
    except msgspec.DecodeError as exc:
        log.warning("room %s: a forwarded command I cannot read: %s", room, exc)
        raise E.UnavailableError(
            f"the room's server cannot read this command ({exc}): another version?"
        ) from None
    return cmd


class _Reply(msgspec.Struct):
    """A forwarded command's reply that rides with the commit its command made."""

    key: str
    channel: str
    data: bytes


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
        proc: str | None = None,
        reply_timeout: float = 1.0,
    ) -> None:
        super().__init__(hub)
        self.url = url
        self.cluster = cluster
        self.spawn_bot = spawn_bot
        self.drop_bots = drop_bots
        self.lease_ms = lease_ms
        self.history = history
        self.idle_seconds = idle_seconds
        self.over_seconds = min(over_seconds, idle_seconds)
        """As in the memory backend: a finished game nobody is in closes sooner."""
        self.reply_timeout = reply_timeout
        self._patience = 2 * lease_ms / 1000 + 2.0
        """How long a request may wait for its room (moving, or Redis silent)."""
        self.proc = proc or secrets.token_hex(6)
        self._reply_channel = reply_channel(self.proc)
        self._replies = self._reply_channel.encode()
        self._reply_ms = 2 * lease_ms + 5000
        """How long a reply is kept for an asker whose pub/sub connection missed it."""
        self._own_events = _ENC.encode({"from": self.proc, "out": []})[:-1]
        """How this process's event messages begin (msgspec keeps a map's order)."""
        self._loop: asyncio.AbstractEventLoop
        self.redis: Any = None
        """redis-py, for what is rare: taking leases, the lobby, the scan, reading logs."""
        self._link: Link | None = None
        """Commits, forwarded commands, replies and pub/sub: every turn window's calls."""
        self._actors: dict[str, RoomActor] = {}
        self._lost: set[int] = set()
        """The ids of cores whose room another process runs now: never written again."""
        self._writing: dict[str, asyncio.Lock] = {}
        """One writer per room at a time: the actor's commits, lease upkeep, resyncs."""
        self._interest: dict[str, int] = {}
        """Local members per room: the event channel is subscribed while this is > 0 and
        the room is run by another process."""
        self._channels: set[str] = set()
        """Rooms whose event channel is subscribed."""
        self._last_seq: dict[str, int] = {}
        """Per room with local members: every message up to this seq was delivered here."""
        self._owners: dict[str, bytes] = {}
        """The process last known to own each room that commands were forwarded to: no
        GET of the lease per command (a stale entry costs one retry)."""
        self._lobby: dict[str, tuple[Any, ...]] = {}
        """Each owned room's `lobby_key` as last written: most commits leave it as it is."""
        self._record_written: dict[str, int] = {}
        """Each owned room's record log bytes already in Redis: a commit appends the rest."""
        self._pending: dict[int, tuple[asyncio.Future[Any], Any]] = {}
        self._served: OrderedDict[tuple[str, int], dict[str, Any] | None] = OrderedDict()
        """Forwarded commands run lately, by (asking process, rid), with their replies (None:
        running): one sent twice runs once, and the second gets the reply again (the first
        may have been lost, with Redis's data even)."""
        self._ids = itertools.count(1)
        self._tasks: list[asyncio.Task[None]] = []
        self._background: set[asyncio.Task[None]] = set()
        self._secret: bytes | None = None
        self._healthy = False
        """The subscription is whole (False from a lost connection until subscribed again)."""
        self._answering = True
        """Redis answered the last health ping."""
        self._stopping = False
        self._sub_lock = asyncio.Lock()
        self.takeovers = 0
        self.rooms_closed = 0
        self.windows_expired = Tally()
        """Turn windows closed by their deadline, in every room this process ever ran."""

    # --- connection --------------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()  # kept: each call is a getpid system call
        # Deadlines on redis-py's connections too (the rare calls), and keepalive.
        timeouts: dict[str, Any] = {
            "socket_timeout": self.reply_timeout,
            "socket_connect_timeout": 2 * self.reply_timeout,
            "socket_keepalive": True,
            "socket_keepalive_options": keepalive_options(),
            "health_check_interval": 5,
        }
        if self.cluster:
            self.redis = RedisCluster.from_url(self.url, **timeouts)
            await self.redis.initialize()
            self._link = ClusterLink(self.redis, self._on_message, self._link_down, self._link_up)
        else:
            # A connection Redis closed (CLIENT KILL, an idle timeout) is reopened and the
            # command sent again: every write here is idempotent or deduplicated. Callers
            # wait for a free connection rather than fail when many rooms ask at once.
            retry = Retry(ExponentialWithJitterBackoff(cap=0.5, base=0.01), 3)
            pool = BlockingConnectionPool.from_url(
                self.url, max_connections=64, retry=retry, timeout=self._patience, **timeouts
            )
            self.redis = aioredis.Redis(connection_pool=pool)
            self._link = StandaloneLink(
                self.url,
                self._on_message,
                self._link_down,
                self._link_up,
                reply_timeout=self.reply_timeout,
            )
        await self.link.subscribe(reply_channel(self.proc))
        self._healthy = True
        for job in (self._keep_leases(), self._scan(), self._watch_health()):
            self._tasks.append(self._loop.create_task(job))

    @property
    def link(self) -> Link:
        assert self._link is not None, "the backend is not started"
        return self._link

    async def stop(self) -> None:
        """Drain: finish queued commands, commit, hand every room over by releasing its lease."""
        self._stopping = True
        for room in list(self._actors):
            await self._give_up(room, release=True)
        for task in [*self._tasks, *self._background]:
            task.cancel()
        for task in [*self._tasks, *self._background]:
            with contextlib.suppress(asyncio.CancelledError, RedisError):
                await task
        with contextlib.suppress(RedisError, RuntimeError):
            await self.link.close()
        with contextlib.suppress(RedisError, RuntimeError):
            await self.redis.aclose()

    async def shared_secret(self) -> bytes:
        """Created once by whichever process asks first; Redis access already implies trust."""
        await self.redis.set(SECRET, secrets.token_hex(32), nx=True)
        secret: bytes = await self.redis.get(SECRET)
        self._secret = secret
        return secret

    def ready(self) -> bool:
        return self._healthy and self._answering and not self._stopping

    async def _watch_health(self) -> None:
        """Ping Redis every half `reply_timeout`: a black hole shows within about one
        and a half of it (the pinged connections are given up and opened again)."""
        while True:
            await asyncio.sleep(self.reply_timeout / 2)
            answering = await self._pings()
            if self._answering and not answering:
                log.warning("redis does not answer")
            self._answering = answering

    async def _pings(self) -> bool:
        """Redis answers a ping within `reply_timeout`. A connection that was merely cut
        (CLIENT KILL, a restart of a proxy) fails at once: ping again on a new one."""
        try:
            async with asyncio.timeout(self.reply_timeout):
                while True:
                    try:
                        await self.link.ping()
                        return True
                    except RedisError:
                        await asyncio.sleep(0.05)
        except TimeoutError:
            return False

    def _spawn(self, job: Any) -> None:
        """Run `job` in the background, kept (and cancelled at stop) until it is done."""
        task = self._loop.create_task(job)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _link_down(self) -> None:
        self._healthy = False

    def _link_up(self) -> None:
        """Subscribed again after a lost connection (CLIENT KILL, a blip, a restart): what
        was published meanwhile is not coming, and Redis may have come back empty."""
        self._healthy = True
        if not self._stopping:
            self._spawn(self._resync_after_outage())

    async def _refill(self) -> None:
        for room in list(self._interest):
            await self._fill_gap(room, None)

    def _on_message(self, channel: bytes, data: bytes) -> None:
        """Every pub/sub message, as it is parsed: no task unless it must wait."""
        if channel == self._replies:
            self._resolve(data)
            return
        name = channel.decode()
        room = name.split("{", 1)[1].split("}", 1)[0]
        if name.endswith(":ev"):
            if data.startswith(self._own_events):
                return  # its own commit (the channel is being dropped): delivered already
            events = _EVENTS.decode(data)
            if room in self._owners:
                self._owners[room] = events.sender.encode()
            self._receive_events(room, [unpack_outgoing(p) for p in events.out])
        elif name.endswith(":cmd"):
            self._spawn(self._serve_command(room, data))

    def _resolve(self, data: bytes) -> None:
        """An owner's reply to a forwarded command: the waiting future gets its outcome."""
        try:
            answer = _ANSWER.decode(data)
        except msgspec.DecodeError:
            log.warning("dropped a malformed reply: %r", data[:200])
            return
        pending = self._pending.pop(answer.rid, None)
        if pending is None or pending[0].done():
            return
        fut, typ = pending
        if answer.ok:
            fut.set_result(_RESULTS[typ].decode(answer.result) if typ else None)
        elif answer.retry:
            fut.set_exception(_Retry())
        else:
            err = answer.error or {}
            cls = E.by_code(err.get("code", 0)) or E.InternalError
            message = err.get("message", "the room's server failed")
            fut.set_exception(cls(message, rule=err.get("rule")))

    # --- owning rooms ---------------------------------------------------------------------

    async def create(self, spec: RoomSpec) -> RoomInfo:
        async with self._reaching_redis():
            room = new_room_id()
            while not await self.redis.set(lease_key(room), self.proc, nx=True, px=self.lease_ms):
                room = new_room_id()
            core = spec.core(room, self.history)
            core.last_activity = time.time()
            await self._persist(core, [])
            await self._own(core)
        return core.info()

    async def _own(self, core: RoomCore) -> None:
        actor = RoomActor(core, self._commit, self.spawn_bot, expired=self.windows_expired)
        self._actors[core.id] = actor
        await self.link.subscribe(command_channel(core.id))
        actor.start()
        await self._listen(core.id)  # the owner delivers its commits itself
        if self.spawn_bot is not None:
            for seat, s in enumerate(core.seats):
                if s.kind == "bot" and s.bot is not None and core.status != "over":
                    self.spawn_bot(core.id, seat, s.bot)

    async def _give_up(self, room: str, release: bool) -> None:
        """Stop running `room` here after the commands already queued (a drain, a reap)."""
        actor = self._actors.pop(room, None)
        if actor is None:
            return
        if self.drop_bots is not None:
            self.drop_bots(room)
        await actor.stop()
        self._writing.pop(room, None)
        self._lobby.pop(room, None)
        self._record_written.pop(room, None)
        with contextlib.suppress(RedisError):
            await self.link.unsubscribe(command_channel(room))
            if release:
                await self.link.script(_RELEASE, [lease_key(room)], [self.proc])
        with contextlib.suppress(RedisError):
            await self._listen(room)  # local members hear the room from its next owner

    def _lose(self, room: str, core: RoomCore) -> None:
        """Another process runs `room` now: stop `core` at once, run nothing more of it.

        Commands still queued are cancelled, which tells their callers they were not run
        (they try again, on the new owner)."""
        self._lost.add(id(core))
        actor = self._actors.get(room)
        if actor is None or actor.core is not core:
            return
        del self._actors[room]
        log.warning("room %s belongs to another process now; stopping it here", room)
        if self.drop_bots is not None:
            self.drop_bots(room)
        self._spawn(self._retire(room, actor))

    async def _retire(self, room: str, actor: RoomActor) -> None:
        await actor.stop(grace=0)
        self._lost.discard(id(actor.core))
        if room not in self._actors:  # (it may be ours again already)
            self._writing.pop(room, None)
            self._lobby.pop(room, None)
            self._record_written.pop(room, None)
            with contextlib.suppress(RedisError):
                await self.link.unsubscribe(command_channel(room))
            with contextlib.suppress(RedisError):
                await self._listen(room)

    async def _take_over(self, room: str) -> bool:
        """Own a room whose lease lapsed: its snapshot plus the stream's tail."""
        if room in self._actors or self._stopping:
            return room in self._actors
        if not await self.redis.set(lease_key(room), self.proc, nx=True, px=self.lease_ms):
            return False
        raw = await self.redis.get(snap_key(room))
        if raw is None:
            await self.link.script(_RELEASE, [lease_key(room)], [self.proc])
            await self.redis.hdel(LOBBY, room)
            return False
        record_log = await self.redis.get(record_log_key(room)) or b""
        core = snapshot.load(_DEC.decode(raw), self.history, record_log)
        tail = await self.redis.xrevrange(log_key(room), "+", "-", count=self.history)
        for _, fields in reversed(tail):
            core.log.append(unpack_outgoing(fields[b"m"]))
        if room in self._actors:  # the scan and a forwarded call both got here
            return True
        # (none in Redis yet if an earlier version wrote the snapshot: the commit sets it)
        self._record_written[room] = min(len(record_log), len(core.record_log.data))
        self.takeovers += 1
        log.info("took over room %s at seq %d", room, core.seq)
        # What the old owner committed but this process's members have not seen yet (it
        # died between commit and publish, or the publish is still on its way) comes first.
        last = self._last_seq.get(room)
        if room in self._interest and last is not None:
            missed = [o for o in core.log if o.seq > last]
            if missed:
                self._last_seq[room] = missed[-1].seq
                self.hub.deliver(room, missed)
        await self._own(core)
        return True

    async def _commit(self, core: RoomCore, out: list[Outgoing], rider: object) -> None:
        """Durable first, visible second: persist, publish (and answer the forwarded
        command that made `out`, if it has a `_Reply` riding), then deliver locally."""
        if id(core) in self._lost:
            raise asyncio.CancelledError  # lost meanwhile: the actor stops, nothing is written
        entries = [(o.seq, pack_outgoing(o)) for o in out]
        payload = _ENC.encode({"from": self.proc, "out": [msgspec.Raw(e) for _, e in entries]})
        try:
            reply = rider if isinstance(rider, _Reply) else None
            await self._persist(core, entries, payload, reply)
        except _Fenced:
            # Not written, and never will be: end the actor's task (its command's caller is
            # told it was not run, see `_local`) before it runs anything else.
            self._lose(core.id, core)
            raise asyncio.CancelledError from None
        if core.id in self._interest:
            self._last_seq[core.id] = out[-1].seq
        self.hub.deliver(core.id, out)

    async def _persist(
        self,
        core: RoomCore,
        entries: list[tuple[int, bytes]],
        payload: bytes = b"",
        reply: _Reply | None = None,
    ) -> None:
        """Retry until Redis takes it: a room pauses while Redis is away, it never forgets.
        `payload` (the messages for other processes) is published once they are written,
        and `reply` after it.

        Raises `_Fenced` when another process runs the room now."""
        backoff = 0.05
        lock = self._writing.setdefault(core.id, asyncio.Lock())
        while True:
            try:
                async with lock:
                    status = await self._write(core, entries, payload, reply, rewrite=False)
                    if status == 2:  # Redis lost the room's log: write the room back whole
                        log.warning("room %s: Redis lost its log; writing it back", core.id)
                        self._lobby.pop(core.id, None)
                        whole = [(o.seq, pack_outgoing(o)) for o in core.log]
                        status = await self._write(core, whole, payload, reply, rewrite=True)
                        if self._secret is not None:
                            await self.redis.set(SECRET, self._secret, nx=True)
                if status == 0:
                    raise _Fenced(core.id)
                await self._list(core)
                return
            except RedisError as exc:
                log.warning("redis commit of room %s failed: %s", core.id, exc)
                await asyncio.sleep(backoff)
                backoff = min(2.0, backoff * 2)

    async def _list(self, core: RoomCore) -> None:
        """Keep the room's lobby entry as the room is (gone once the game is over)."""
        key = core.lobby_key()
        if self._lobby.get(core.id) == key:
            return
        if core.status == "over":
            await self.link.command("HDEL", LOBBY, core.id)
        else:
            await self.link.command("HSET", LOBBY, core.id, _ENC.encode(core.info()))
        self._lobby[core.id] = key

    async def _write(
        self,
        core: RoomCore,
        entries: list[tuple[int, bytes]],
        payload: bytes,
        reply: _Reply | None,
        rewrite: bool,
    ) -> int:
        """One fenced, atomic write of the room: log entries, snapshot, record, lease."""
        record = b""
        if core.status == "over" and core.record is not None:
            record = msgspec.json.encode(core.record)
        record_log = core.record_log.data
        size = len(record_log)
        done = 0 if rewrite else min(self._record_written.get(core.id, 0), size)
        args: list[Any] = [
            self.proc,
            self.lease_ms,
            self.history,
            _ENC.encode(snapshot.dump(core)),
            record,
            RECORD_TTL,
            1 if rewrite else 0,
            core.seq,
            "spublish" if self.cluster else "publish",
            event_channel(core.id),
            payload,
            done,
            bytes(record_log[done:]),
            b"" if reply is None else reply.data,
            self._reply_ms,
            "" if reply is None else reply.channel,
        ]
        for seq, entry in entries:
            args += [seq, entry]
        room = core.id
        keys = [lease_key(room), log_key(room), snap_key(room), record_key(room)]
        keys.append(record_log_key(room))
        if reply is not None:
            keys.append(reply.key)
        status: int = await self.link.script(_COMMIT, keys, args)
        if status == 1:
            self._record_written[room] = size
        return status

    async def _keep_leases(self) -> None:
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            owned = list(self._actors.items())
            renewals = [
                self.link.script(_RENEW, [lease_key(room)], [self.proc, self.lease_ms])
                for room, _ in owned
            ]  # sent together: one write and one round trip on a standalone Redis
            statuses = await asyncio.gather(*renewals, return_exceptions=True)
            for (room, actor), status in zip(owned, statuses, strict=True):
                if isinstance(status, BaseException):
                    continue
                if status == 0:
                    self._lose(room, actor.core)
                elif status == 2:  # lapsed or lost with Redis's data: write the room back
                    await self._rewrite(room)

    async def _rewrite(self, room: str) -> None:
        actor = self._actors.get(room)
        if actor is None:
            return
        try:
            await self._persist(actor.core, [])
        except _Fenced:
            self._lose(room, actor.core)

    async def _scan(self) -> None:
        """Take over rooms whose owner is gone; close rooms idle for too long."""
        while True:
            await asyncio.sleep(min(0.25, self.lease_ms / 8000))
            if self._stopping:
                continue
            try:
                for room in list(self._actors):
                    await self._reap_if_idle(room)
                for room in await self.link.orphans(LOBBY, lease_key):
                    if room not in self._actors:
                        await self._take_over(room)
            except RedisError:
                continue
            except Exception:
                log.exception("scanning the rooms failed")

    async def _reap_if_idle(self, room: str) -> None:
        """Close a room nobody is in after `idle_seconds` of quiet (a finished one after
        `over_seconds`, or at the next scan once everyone left it): its lease, logs and
        snapshot go; a finished game's record stays."""
        actor = self._actors.get(room)
        if actor is None or self._interest.get(room, 0) > 0:
            return
        if not actor.core.closable(time.time(), self.idle_seconds, self.over_seconds):
            return
        await self.redis.hdel(LOBBY, room)  # first: no other process takes it over now
        await self._give_up(room, release=True)
        await self.redis.delete(snap_key(room), log_key(room), record_log_key(room))
        self.rooms_closed += 1

    async def _resync_after_outage(self) -> None:
        """Redis came back (maybe empty): write owned rooms back, refill subscribers' gaps."""
        self._lobby.clear()
        if self._secret is not None:
            with contextlib.suppress(RedisError):
                await self.redis.set(SECRET, self._secret, nx=True)
        for room in list(self._actors):
            await self._rewrite(room)
        await self._refill()

    # --- commands ------------------------------------------------------------------------

    async def call(self, room: str, cmd: Command) -> Any:
        """Run `cmd` on the owner, waiting (within about two leases) while the room moves
        between processes or Redis is away; only a command that may have run is failed."""
        if self._stopping:
            raise E.ShuttingDownError("this server is shutting down; reconnect")
        if not self._answering:
            raise E.UnavailableError("the server cannot reach Redis; try again shortly")
        give_up = time.monotonic() + self._patience
        while True:
            try:
                actor = self._actors.get(room)
                if actor is not None:
                    result = await self._local(actor, cmd, deadline=give_up)
                else:
                    result = await self._forward(room, cmd)
            except (_Retry, RedisError) as exc:
                self._owners.pop(room, None)
                if time.monotonic() > give_up:
                    raise E.UnavailableError(
                        "the room's server is unreachable; try again shortly"
                    ) from exc
                await asyncio.sleep(0.05)
                continue
            if isinstance(result, Sync):
                self._synced(room, result.seq)
            return result

    async def _local(
        self,
        actor: RoomActor,
        cmd: Command,
        rider: Rider | None = None,
        deadline: float | None = None,
    ) -> Any:
        """Run `cmd` on a room this process owns; with a `deadline` (monotonic), give up
        waiting for its commit then (Redis went silent): `unavailable`, though the
        command may still take effect once Redis answers."""
        try:
            if deadline is None:
                return await actor.call(cmd, rider)
            async with asyncio.timeout(deadline - time.monotonic()):
                return await actor.call(cmd, rider)
        except TimeoutError:
            raise E.UnavailableError(
                "the room's server cannot reach Redis; the request may still take effect: "
                "look at the room (resume, legal) before trying again"
            ) from None
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            raise _Retry from None  # the room stopped here before running the command

    def _synced(self, room: str, seq: int) -> None:
        """A local member caught up to `seq`: messages after it must reach this process."""
        if room in self._interest:
            self._last_seq[room] = min(self._last_seq.get(room, seq), seq)

    async def _forward(self, room: str, cmd: Command) -> Any:
        """Send `cmd` to the room's owner (taking the room over if it has none)."""
        owner = self._owners.get(room)
        if owner is None:
            owner = await self.redis.get(lease_key(room))
            if owner is None:
                if await self.redis.exists(snap_key(room)):
                    await self._take_over(room)
                    raise _Retry
                if room in self._last_seq:  # it was here: Redis lost it; its owner rewrites it
                    raise _Retry
                raise E.NoSuchRoomError(f"no room {room!r}")
            if len(self._owners) >= 10_000:
                self._owners.clear()
            self._owners[room] = owner
        rid = next(self._ids)
        fut: asyncio.Future[Any] = self._loop.create_future()
        self._pending[rid] = (fut, RESULTS.get(type(cmd)))
        data = _ENC.encode({"from": self.proc, "rid": rid, "cmd": cmd})
        # Nobody heard it: the owner is gone, and this process is told to wait it out.
        retry = _ENC.encode({"rid": rid, "ok": False, "retry": True})
        unheard = Unheard(reply_key(self.proc, rid), self._reply_channel, retry, self._reply_ms)
        try:
            try:
                try:
                    heard = await self.link.forward(command_channel(room), data, unheard)
                except RedisError:
                    heard = None  # maybe sent: `_reply` sends it again, the owner runs it once
                if heard is False:
                    raise _Retry
                return await self._reply(fut, room, owner, rid, data)
            except (RedisError, _Gone) as exc:
                self._owners.pop(room, None)
                if isinstance(cmd, RETRY_SAFE):
                    raise _Retry from None
                raise E.UnavailableError(
                    "the room moved to another server while this request was on its way; "
                    "look at the room (resume, legal) before trying again"
                ) from exc
        finally:
            self._pending.pop(rid, None)

    async def _reply(
        self, fut: asyncio.Future[Any], room: str, owner: bytes, rid: int, data: bytes
    ) -> Any:
        """The owner's answer, from pub/sub or, if that lost it, from its reply key; `_Gone`
        once another process holds the lease (the owner died or left), or after two leases
        without an answer.

        While the same owner holds the room the command is sent again each second: a
        command lost with a pub/sub connection (CLIENT KILL, a Redis restart) arrives late
        rather than never, and the owner runs each (process, rid) once."""
        deadline = time.monotonic() + 2 * self.lease_ms / 1000 + 1.0
        resend = time.monotonic() + 1.0
        while True:
            await self._until_done(fut, 0.25)
            if fut.done():
                return fut.result()
            if time.monotonic() > deadline:
                raise _Gone
            try:
                kept = await self.redis.get(reply_key(self.proc, rid))
                holder = await self.redis.get(lease_key(room)) if kept is None else owner
            except RedisError:
                continue  # Redis is away: so is the reply, for now
            if kept is not None:
                self._resolve(kept)
            elif holder not in (None, owner):  # (none: it lapsed, or Redis lost it: wait)
                raise _Gone
            elif holder == owner and time.monotonic() > resend:
                resend = time.monotonic() + 1.0
                with contextlib.suppress(RedisError):
                    await self.link.forward(command_channel(room), data, None)

    async def _until_done(self, fut: asyncio.Future[Any], timeout: float) -> None:
        """Wait for `fut` at most `timeout` seconds, neither cancelling nor wrapping it:
        `asyncio.wait((fut,), timeout=...)` without its set, and its getpid system call."""
        if fut.done():
            return
        waiter = self._loop.create_future()

        def wake(_: object = None) -> None:
            if not waiter.done():
                waiter.set_result(None)

        timer = self._loop.call_later(timeout, wake)
        fut.add_done_callback(wake)
        try:
            await waiter
        finally:
            timer.cancel()
            fut.remove_done_callback(wake)

    async def _serve_command(self, room: str, data: bytes) -> None:
        try:
            forwarded = _FORWARDED.decode(data)
        except msgspec.DecodeError:
            log.warning("dropped a malformed command for room %s: %r", room, data[:200])
            return
        to, rid = forwarded.sender, forwarded.rid
        key = (to, rid)
        if key in self._served:
            done = self._served[key]
            if done is not None:
                await self._send_reply(to, rid, done)
            return
        self._served[key] = None
        while len(self._served) > 1000:
            self._served.popitem(last=False)
        reply: dict[str, Any] = {"rid": rid}
        rode = False

        def ride(result: Any) -> _Reply:
            """A command that commits is answered by its commit's script: one round trip."""
            nonlocal rode
            rode = True
            body = _ENC.encode({"rid": rid, "result": result, "ok": True})
            return _Reply(reply_key(to, rid), reply_channel(to), body)

        try:
            cmd = _read_command(room, forwarded.cmd)
            actor = self._actors.get(room)
            if actor is None:
                raise _Retry
            # (a cluster keeps the reply's key on the asker's shard, not the room's)
            reply["result"] = await self._local(actor, cmd, None if self.cluster else ride)
            reply["ok"] = True
        except _Retry:
            reply["ok"] = False
            reply["retry"] = True  # not run here: the asking process tries again
        except E.ProtocolError as exc:
            reply["ok"] = False
            reply["error"] = {"code": exc.code, "message": exc.message, "rule": exc.rule}
        except Exception as exc:
            log.exception("forwarded command failed")
            reply["ok"] = False
            reply["error"] = {"code": E.InternalError.code, "message": str(exc), "rule": None}
        if key in self._served:
            self._served[key] = reply
        if not (rode and reply["ok"]):
            await self._send_reply(to, rid, reply)

    async def _send_reply(self, to: str, rid: int, reply: dict[str, Any]) -> None:
        """Kept in a key (retried while Redis is away, as long as the asker waits) and
        published: the asker reads the key if the publish does not reach it."""
        keep = self._reply_ms
        give_up = time.monotonic() + keep / 1000
        backoff = 0.05
        data = _ENC.encode(reply)
        while True:
            try:
                await self.link.answer(reply_key(to, rid), data, keep, reply_channel(to))
                return
            except RedisError:
                if time.monotonic() > give_up:
                    return
                await asyncio.sleep(backoff)
                backoff = min(1.0, backoff * 2)

    # --- events for local members -----------------------------------------------------

    async def subscribe(self, room: str) -> None:
        """Returns once the room's messages reach this process (also for the second member
        in): from its own commits if it owns the room, else on the event channel."""
        self._interest[room] = self._interest.get(room, 0) + 1
        async with self._reaching_redis():
            await self._listen(room)

    def unsubscribe(self, room: str) -> None:
        n = self._interest.get(room, 0) - 1
        if n > 0:
            self._interest[room] = n
            return
        self._interest.pop(room, None)
        self._last_seq.pop(room, None)
        self._owners.pop(room, None)
        self._spawn(self._listen(room))

    async def _listen(self, room: str) -> None:
        """Subscribe the room's event channel exactly while members are here and another
        process runs the room. Subscribing again after the room left this process, read
        what its next owner committed before the subscription from the stream."""
        async with self._sub_lock:
            wanted = room in self._interest and room not in self._actors
            if wanted == (room in self._channels):
                return
            if wanted:
                self._channels.add(room)  # (the link subscribes it again after an outage)
                await self.link.subscribe(event_channel(room))
            else:
                self._channels.discard(room)
                with contextlib.suppress(RedisError):
                    await self.link.unsubscribe(event_channel(room))
                return
        await self._fill_gap(room, None)

    def _receive_events(self, room: str, out: list[Outgoing]) -> None:
        """Deliver at once what follows the last seq seen here; after a gap, first fill it
        from the stream (in a task: the pub/sub reader never waits)."""
        if room not in self._interest or not out:
            return
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

    async def _deliver_after_gap(self, room: str, out: list[Outgoing]) -> None:
        await self._fill_gap(room, out[0].seq)
        last = self._last_seq.get(room, 0)
        out = [o for o in out if o.seq > last]
        if out and room in self._interest:
            self._last_seq[room] = out[-1].seq
            self.hub.deliver(room, out)

    async def _fill_gap(self, room: str, next_seq: int | None) -> None:
        """Deliver what the stream holds between the last seq seen and `next_seq`."""
        last = self._last_seq.get(room)
        if last is None or (next_seq is not None and next_seq <= last + 1):
            if last is None and next_seq is not None and room in self._interest:
                self._last_seq[room] = next_seq - 1
            return
        upper = "+" if next_seq is None else f"{next_seq - 1}-1"
        with contextlib.suppress(RedisError):
            entries = await self.redis.xrange(log_key(room), f"{last + 1}-0", upper)
            missed = [unpack_outgoing(f[b"m"]) for _, f in entries]
            last = self._last_seq.get(room, last)
            missed = [o for o in missed if o.seq > last]
            if missed and room in self._interest:
                self._last_seq[room] = missed[-1].seq
                self.hub.deliver(room, missed)

    # --- lobby ------------------------------------------------------------------------------

    async def rooms(self, game: str | None = None) -> list[RoomInfo]:
        async with self._reaching_redis():
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
            "windows_expired": self.windows_expired.value,
            "rooms_closed": self.rooms_closed,
            "takeovers": self.takeovers,
        }

    def _check(self) -> None:
        if self._stopping:
            raise E.ShuttingDownError("this server is shutting down; reconnect")
        if not (self._healthy and self._answering):
            raise E.UnavailableError("the server cannot reach Redis; try again shortly")

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
            raise E.UnavailableError("the server cannot reach Redis; try again shortly") from exc
