"""How a backend reaches Redis, for each kind of `--redis` URL (urls.py): redis-py for the
rare calls and a `Link` for the hot ones, both with deadlines and TCP keepalive.

- one Redis: a blocking pool of 64 redis-py connections; `StandaloneLink` to its address.
- Sentinel: `Sentinel(...).master_for(...)` with the same kind of pool; `StandaloneLink`,
  asking the sentinels where the primary is on every connect.
- a cluster (`--redis-cluster`): `RedisCluster`; `ClusterLink` over the same client.

Either way every connection follows the current primary: redis-py's Sentinel pool asks the
sentinels on every connect and drops a connection that answers READONLY; so does resp.py.
"""

from __future__ import annotations

from typing import TypedDict

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import BlockingConnectionPool
from redis.asyncio.retry import Retry as RedisRetry
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool
from redis.backoff import ExponentialWithJitterBackoff

from .link import ClusterLink, Link, OnMessage, Signal, StandaloneLink
from .resp import keepalive_options
from .urls import RedisUrl

RedisClient = aioredis.Redis | RedisCluster
"""redis-py's client, for the rare calls: of one Redis (or Sentinel's primary), or of a
cluster."""

StreamEntries = list[tuple[bytes | str | None, dict[bytes | str, bytes | str] | None]] | None
"""What redis-py's XRANGE and XREVRANGE give."""

POOL_SIZE = 64
"""redis-py connections per process: the rare calls seldom need more than a few."""


class _Timeouts(TypedDict):
    """redis-py's connection settings for deadlines and keepalive."""

    socket_timeout: float
    socket_connect_timeout: float
    socket_keepalive: bool
    socket_keepalive_options: dict[int, int]


class _Pooling(_Timeouts):
    """redis-py's pool settings (a standalone Redis, Sentinel's primary)."""

    max_connections: int
    timeout: float
    retry: RedisRetry
    health_check_interval: int


class BlockingSentinelPool(SentinelConnectionPool, BlockingConnectionPool):
    """Sentinel's pool (finds the primary on connect), waiting for a free connection as
    `BlockingConnectionPool` does rather than failing when many rooms ask at once."""


class SentinelPrimary(aioredis.Redis):
    """The primary's client, which closes the clients of its sentinels with its own."""

    own_sentinel: Sentinel | None = None

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        await super().aclose(close_connection_pool)
        if self.own_sentinel is not None:  # (redis-py 8.0's Sentinel has no aclose)
            for client in self.own_sentinel.sentinels:
                await client.aclose()


def raw(value: bytes | str) -> bytes:
    """A value as redis-py gives it: typed `bytes | str` (it cannot know whether a client
    decodes replies), always bytes here, since no client of ours decodes them."""
    if isinstance(value, bytes):
        return value
    raise TypeError(f"a Redis client decoded a reply: {value!r}")


def stream_field(entries: StreamEntries, name: bytes) -> list[bytes]:
    """The field `name` of each entry of a stream, in order."""
    return [raw(fields[name]) for _, fields in entries or () if fields is not None]


async def connect(
    target: RedisUrl,
    on_message: OnMessage,
    on_down: Signal,
    on_up: Signal,
    *,
    cluster: bool,
    reply_timeout: float,
    patience: float,
) -> tuple[RedisClient, Link]:
    """-> (the redis-py client, the link); with `cluster`, `target` names one node of a
    cluster. `patience`: how long a rare call may wait for a free connection."""
    # Deadlines on redis-py's connections too (the rare calls), and keepalive.
    timeouts: _Timeouts = {
        "socket_timeout": reply_timeout,
        "socket_connect_timeout": 2 * reply_timeout,
        "socket_keepalive": True,
        "socket_keepalive_options": keepalive_options(),
    }
    if cluster:
        client = RedisCluster.from_url(target.url, health_check_interval=5, **timeouts)
        await client.initialize()
        return client, ClusterLink(client, on_message, on_down, on_up)
    # A connection Redis closed (CLIENT KILL, an idle timeout) is reopened and the command
    # sent again: every write here is idempotent or deduplicated. Callers wait for a free
    # connection rather than fail when many rooms ask at once.
    pooling: _Pooling = {
        "max_connections": POOL_SIZE,
        "timeout": patience,
        "retry": RedisRetry(ExponentialWithJitterBackoff(cap=0.5, base=0.01), 3),
        "health_check_interval": 5,
        **timeouts,
    }
    link = StandaloneLink(target, on_message, on_down, on_up, reply_timeout=reply_timeout)
    if not target.sentinel:
        pool = BlockingConnectionPool.from_url(target.url, **pooling)
        # (from_pool: the client owns the pool, so its aclose() closes the connections;
        # `Redis(connection_pool=pool)` would leave them open)
        return aioredis.Redis.from_pool(pool), link
    sentinel_auth = {"username": target.sentinel_username, "password": target.sentinel_password}
    sentinel = Sentinel(  # type: ignore[no-untyped-call]
        target.sentinels, sentinel_kwargs={**timeouts, **sentinel_auth}
    )
    primary = sentinel.master_for(
        target.service or "",
        redis_class=SentinelPrimary,
        connection_pool_class=BlockingSentinelPool,
        db=target.db,
        username=target.username,
        password=target.password,
        **(target.tls.redis_kwargs() if target.tls is not None else {}),
        **pooling,
    )
    primary.own_sentinel = sentinel
    return primary, link
