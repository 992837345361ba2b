"""The Redis calls of a turn window, behind one small interface with two implementations.

A room's every commit, forwarded command, reply and pub/sub message goes through a `Link`:
`StandaloneLink` speaks RESP itself (resp.py: one pipelined connection; pubsub.py: one
subscriber, no task per message) to one Redis, or to the primary that Sentinel names, found
again on every reconnect; `ClusterLink` uses redis-py's cluster client, which
routes each key to its shard and keeps a sharded pub/sub connection per node. Everything
else (leases taken, the lobby, the orphan scan, reading logs) is rare and stays on
redis-py in both cases.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError

from ...cancelling import cancel_and_wait
from .backoff import Backoff
from .pubsub import RespSubscriber
from .resp import RespClient, Script
from .resptypes import Arg, Reply
from .urls import RedisUrl, parse_redis_url

if TYPE_CHECKING:
    from redis.asyncio.connection import AbstractConnection
    from redis.commands.core import AsyncScript

POLL = 0.02
"""Seconds the cluster link's reader waits on each node's pub/sub connection in turn."""

log = logging.getLogger("dicehall.redis")

OnMessage = Callable[[bytes, bytes], None]

_ORPHANS = Script("""
local out = {}
for _, room in ipairs(redis.call('hkeys', KEYS[1])) do
  if redis.call('exists', ARGV[1] .. room .. ARGV[2]) == 0 then out[#out + 1] = room end
end
return out
""")
# KEYS[1] the asker's reply key. ARGV: the command channel, the command, the asker's reply
# channel, the answer that says "not run, try again", its time to live in ms. Run by its
# source (its reply skipped, a NOSCRIPT would go unseen); a standalone Redis only (it
# publishes on channels that are not its keys).
_FORWARD = """
if redis.call('publish', ARGV[1], ARGV[2]) > 0 then return 1 end
redis.call('set', KEYS[1], ARGV[4], 'PX', ARGV[5])
redis.call('publish', ARGV[3], ARGV[4])
return 0
"""
Signal = Callable[[], None]


class Unheard(NamedTuple):
    """What the asker of a forwarded command gets when no process hears the command: an
    answer kept in `key` for `px` ms and published on `channel` (its reply channel)."""

    key: str
    channel: str
    answer: bytes
    px: int


class Link(ABC):
    """What the backend asks of Redis on its hot path. `on_message(channel, data)` gets
    every pub/sub message; `on_down` / `on_up` say when the subscription was lost and when
    it is whole again (what was published in between must be read from the logs)."""

    multi_room = True
    """A script may name the keys of several rooms (a cluster runs a script on the keys of
    one slot only)."""
    in_order = True
    """What this process sends reaches Redis in the order it was sent (one connection; a
    cluster has one per node)."""

    def __init__(self, on_message: OnMessage, on_down: Signal, on_up: Signal) -> None:
        self.on_message = on_message
        self.on_down = on_down
        self.on_up = on_up

    @abstractmethod
    async def script(self, script: Script, keys: list[str], args: list[Arg]) -> Reply:
        """Run a Lua script by its SHA1, loaded again if Redis has forgotten it."""

    @abstractmethod
    async def command(self, *args: Arg) -> Reply:
        """One command on a key (in a cluster, sent to the key's shard)."""

    @abstractmethod
    async def orphans(self, rooms_key: str, lease_key: Callable[[str], str]) -> list[str]:
        """The rooms of the hash `rooms_key` whose lease key does not exist."""

    @abstractmethod
    async def forward(self, channel: str, data: bytes, unheard: Unheard | None) -> bool | None:
        """Publish a command for a room's owner. -> False if no process heard it (and then
        `unheard`, if given, is not sent), True if one did, None if that is not known here:
        then, if none did, `unheard` reaches the asker (the standalone link: no reply to
        wait for, the command's answer is the next thing this process hears)."""

    @abstractmethod
    async def answer(self, key: str, data: bytes, px: int, channel: str) -> None:
        """SET key data PX px, then publish data on channel, not waiting for Redis where
        it can: the asker reads the key, or sends its command again, if it goes missing."""

    @abstractmethod
    async def ping(self) -> None:
        """A round trip on every connection the link keeps; raises `RedisError` if one
        does not answer (the connection is given up and opened again)."""

    @abstractmethod
    async def publish(self, channel: str, data: bytes) -> None:
        """Publish on a room's channel, not waiting for Redis where it can."""

    @abstractmethod
    async def subscribe(self, channel: str) -> None:
        """Returns once Redis confirmed it: what is published after that arrives."""

    @abstractmethod
    async def unsubscribe(self, channel: str) -> None:
        """Stop hearing a channel."""

    @abstractmethod
    async def close(self) -> None:
        """Close its connections (the backend's redis-py client is the backend's)."""


class StandaloneLink(Link):
    def __init__(
        self,
        url: str | RedisUrl,
        on_message: OnMessage,
        on_down: Signal,
        on_up: Signal,
        reply_timeout: float = 1.0,
    ) -> None:
        super().__init__(on_message, on_down, on_up)
        target = parse_redis_url(url) if isinstance(url, str) else url
        self._commands = RespClient(target, reply_timeout=reply_timeout)
        self._sub = RespSubscriber(target, on_message, on_down, on_up, reply_timeout=reply_timeout)

    async def script(self, script: Script, keys: list[str], args: list[Arg]) -> Reply:
        return await self._commands.script(script, keys, args)

    async def command(self, *args: Arg) -> Reply:
        return await self._commands.execute(*args)

    async def orphans(self, rooms_key: str, lease_key: Callable[[str], str]) -> list[str]:
        # One round trip and only the answer comes back, however many rooms there are.
        # (A script touching keys it was not given only works on a standalone Redis.)
        prefix, suffix = lease_key("\0").split("\0")
        found = await self._commands.script(_ORPHANS, [rooms_key], [prefix, suffix])
        rooms = found if isinstance(found, list) else []
        return [room.decode() for room in rooms if isinstance(room, bytes)]

    async def forward(self, channel: str, data: bytes, unheard: Unheard | None) -> bool | None:
        if unheard is None:
            await self._commands.send("PUBLISH", channel, data)
        else:
            key, to, answer, px = unheard
            await self._commands.send("EVAL", _FORWARD, 1, key, channel, data, to, answer, px)
        return None

    async def answer(self, key: str, data: bytes, px: int, channel: str) -> None:
        await self._commands.send("SET", key, data, "PX", px)
        await self._commands.send("PUBLISH", channel, data)

    async def publish(self, channel: str, data: bytes) -> None:
        await self._commands.send("PUBLISH", channel, data)

    async def ping(self) -> None:
        await asyncio.gather(self._commands.ping(), self._sub.ping())

    async def subscribe(self, channel: str) -> None:
        await self._sub.subscribe(channel)

    async def unsubscribe(self, channel: str) -> None:
        await self._sub.unsubscribe(channel)

    async def close(self) -> None:
        await self._sub.close()
        await self._commands.close()


class ClusterLink(Link):
    """Sharded pub/sub (SPUBLISH / SSUBSCRIBE) through redis-py's cluster client, read by a
    task of its own that reconnects with backoff."""

    multi_room = False
    in_order = False

    def __init__(
        self,
        redis: RedisCluster,
        on_message: OnMessage,
        on_down: Signal,
        on_up: Signal,
    ) -> None:
        super().__init__(on_message, on_down, on_up)
        self.redis = redis
        self._pubsub = redis.pubsub()
        self._scripts: dict[str, AsyncScript] = {}
        self._reader: asyncio.Task[None] | None = None
        self._down = False
        """`on_down` was the last signal given (until `on_up`)."""

    async def script(self, script: Script, keys: list[str], args: list[Arg]) -> Reply:
        runner = self._scripts.get(script.sha)
        if runner is None:
            runner = self._scripts[script.sha] = self.redis.register_script(script.source)
        reply: Reply = await runner(keys=keys, args=args)
        return reply

    async def command(self, *args: Arg) -> Reply:
        reply: Reply = await self.redis.execute_command(*args)
        return reply

    async def orphans(self, rooms_key: str, lease_key: Callable[[str], str]) -> list[str]:
        keys = await self.redis.hkeys(rooms_key)
        rooms = [k.decode() if isinstance(k, bytes) else k for k in keys]
        if not rooms:
            return []
        pipe = self.redis.pipeline(transaction=False)  # leases live on many shards
        for room in rooms:
            pipe.exists(lease_key(room))
        leased = await pipe.execute()
        return [room for room, held in zip(rooms, leased, strict=True) if not held]

    async def forward(self, channel: str, data: bytes, unheard: Unheard | None) -> bool | None:
        n: int = await self.redis.spublish(channel, data)
        return n > 0

    async def answer(self, key: str, data: bytes, px: int, channel: str) -> None:
        # key and channel share a hash tag: one node, one pipeline
        pipe = self.redis.pipeline(transaction=False)
        pipe.set(key, data, px=px)
        pipe.execute_command("SPUBLISH", channel, data)
        await pipe.execute()

    async def publish(self, channel: str, data: bytes) -> None:
        await self.redis.spublish(channel, data)

    async def ping(self) -> None:
        # (the pub/sub connections answer to redis-py's health checks)
        await self.redis.ping()

    async def subscribe(self, channel: str) -> None:
        await self._pubsub.ssubscribe(channel)
        self._watch_reconnects()
        if self._reader is None:
            self._reader = asyncio.get_running_loop().create_task(self._listen())

    async def unsubscribe(self, channel: str) -> None:
        await self._pubsub.sunsubscribe(channel)

    def _watch_reconnects(self) -> None:
        """Hear of every reconnect of a node's pub/sub connection (CLIENT KILL, a blip)."""
        pubsubs = [self._pubsub, *getattr(self._pubsub, "node_pubsub_mapping", {}).values()]
        for pubsub in pubsubs:
            if pubsub.connection is not None:  # registering twice is a no-op
                pubsub.connection.register_connect_callback(self._reconnected)

    def _reconnected(self, connection: AbstractConnection) -> None:
        """Called once a connection is back and subscribed again (redis-py resubscribes).
        It was lost first, maybe without the reader seeing an error (redis-py reconnects
        within a read): the owner hears of the loss, then of the return, in that order.

        Only for a connection a node's pub/sub holds now: redis-py hands a closed node's
        connection back to the node's pool, callback and all, and its next connect (for
        commands, or a new pub/sub's first) lost nothing."""
        pubsubs = list(self._pubsub.node_pubsub_mapping.values())
        if not any(pubsub.connection is connection for pubsub in pubsubs):
            return
        self._lost()
        self._back()

    def _lost(self) -> None:
        if not self._down:
            self._down = True
            self.on_down()

    def _back(self) -> None:
        if self._down:
            self._down = False
            self.on_up()

    async def _listen(self) -> None:
        backoff = Backoff()
        while True:
            try:
                await self._read_each_node()
                backoff.reset()
                self._back()
            except Exception as exc:  # (anything but cancellation: a dead reader hears nothing)
                self._lost()
                log.warning("redis pub/sub: %r; retrying in %.2fs", exc, backoff.delay)
                await asyncio.sleep(backoff.next())

    async def _read_each_node(self) -> None:
        """Read each node's pub/sub connection once (waiting `POLL` seconds at most).

        Node by node, as the mapping is now, and only the connected ones. redis-py puts a
        node's pub/sub in the mapping before its first SSUBSCRIBE has connected, and takes
        it out after closing it once its last channel is unsubscribed; its own round robin
        (`get_sharded_message` without `target_node`) read such a one (RuntimeError: no
        connection), and the reader died: the process heard nothing more
        (tests/server/test_link.py)."""
        nodes = [
            self.redis.get_node(node_name=name)
            for name, pubsub in list(self._pubsub.node_pubsub_mapping.items())
            if pubsub.connection is not None
        ]
        if not any(nodes):  # (nothing to wait on: no spinning either)
            await asyncio.sleep(POLL)
            return
        for node in nodes:
            if node is None:  # (gone from the cluster: its channels are moving elsewhere)
                continue
            message = await self._pubsub.get_sharded_message(
                ignore_subscribe_messages=True, timeout=POLL, target_node=node
            )
            if message is not None and message.get("type") == "smessage":
                try:
                    self.on_message(message["channel"], message["data"])
                except Exception:
                    log.exception("handling a message on %r failed", message.get("channel"))

    async def close(self) -> None:
        if self._reader is not None:
            await cancel_and_wait([self._reader])
        with contextlib.suppress(RedisError, RuntimeError):
            await self._pubsub.aclose()
