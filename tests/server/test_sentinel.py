"""Our RESP connection and subscriber follow the primary that Sentinel names, against real
`redis-server` and `redis-sentinel` processes: asked on every connect, each sentinel in
turn (a dead or silent one costs at most its deadline), a failover followed, and a
READONLY answer (a demoted primary) taken as a reason to reconnect.

The Link contract on Sentinel is in test_link.py; a game across a primary killed mid-game
is in tests/e2e/test_sentinel.py.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator
from functools import partial

import pytest
from redis.exceptions import ConnectionError, ResponseError

from dicehall.server.backends.redis.pubsub import RespSubscriber
from dicehall.server.backends.redis.resp import RespClient, Script
from tests.support.proxy import faulty_proxy
from tests.support.redis import (
    RedisServer,
    backend_connections,
    free_redis_port,
    running_redis,
    until_redis_answers,
)
from tests.support.sentinel import SERVICE, SentinelSet, running_sentinels
from tests.support.tls import Certs


@pytest.fixture(scope="module")
def sentinels() -> Iterator[SentinelSet]:
    with running_sentinels() as s:
        yield s


async def test_each_sentinel_is_asked_in_turn_a_dead_or_silent_one_is_skipped(
    sentinels: SentinelSet,
) -> None:
    """A sentinel that refuses connections costs nothing, a black-holed one its deadline
    (`reply_timeout`); the next one names the primary."""
    primary = sentinels.primary()
    db = primary.fresh_db()
    with faulty_proxy(sentinels.sentinels[0].port) as silent:
        silent.black_hole()
        hosts = [f"127.0.0.1:{free_redis_port()}", f"127.0.0.1:{silent.port}"]
        hosts += [f"127.0.0.1:{s.port}" for s in sentinels.sentinels]
        url = f"redis+sentinel://{','.join(hosts)}/{SERVICE}/{db}"
        conn = RespClient(url, reply_timeout=0.3)
        try:
            began = time.monotonic()
            await conn.execute("SET", "k", "v")
            assert time.monotonic() - began < 2.0
            assert primary.client(db).get("k") == b"v"
        finally:
            await conn.close()
            silent.restore()  # (lets the proxy end the connection it held)


async def test_a_service_no_sentinel_knows_is_a_clear_connection_error(
    sentinels: SentinelSet,
) -> None:
    url = sentinels.url().replace(f"/{SERVICE}/", "/no-such-service/")
    conn = RespClient(url)
    try:
        with pytest.raises(ConnectionError, match="knows no 'no-such-service'"):
            await conn.execute("PING")
    finally:
        await conn.close()
    everyone_dead = f"redis+sentinel://127.0.0.1:{free_redis_port()}/{SERVICE}"
    conn = RespClient(everyone_dead)
    try:
        with pytest.raises(ConnectionError, match="no sentinel named the primary"):
            await conn.execute("PING")
    finally:
        await conn.close()


async def test_a_failover_is_followed_by_commands_subscriber_and_redis_py(
    sentinels: SentinelSet,
) -> None:
    """SENTINEL FAILOVER: the old primary stays up, demoted to a replica. Commands reach
    the new primary (a READONLY answer or a cut connection on the way only makes them
    reconnect), the subscriber says down, then up, and hears what the new primary
    publishes; the redis-py client of the rare calls follows too."""
    old = sentinels.primary()
    db = old.fresh_db()
    url = sentinels.url(db)
    events: list[str] = []
    heard: list[bytes] = []
    conn = RespClient(url)
    sub = RespSubscriber(
        url,
        lambda c, d: heard.append(d),
        lambda: events.append("down"),
        lambda: events.append("up"),
    )
    client, link = await backend_connections(url)
    try:
        await sub.subscribe("ch")
        assert await conn.execute("INCR", "n") == 1
        assert await client.incr("rare") == 1
        with sentinels.sentinels[0].client() as s:
            s.execute_command("SENTINEL", "FAILOVER", SERVICE)
        new = sentinels.failed_over(old)
        demoted(old)  # (until then the old primary takes writes, and drops them after)

        with new.client(db) as r:
            for i in range(3):
                assert await until_redis_answers(partial(conn.execute, "SET", "n", i)) == b"OK"
                assert await until_redis_answers(partial(client.set, "rare", i)) is True
                assert r.get("n") == r.get("rare") == str(i).encode()
            async with asyncio.timeout(30):
                while events[-1:] != ["up"] or not r.publish("ch", "after"):
                    await asyncio.sleep(0.05)  # (its reconnect: polled through Redis)
                while not heard:
                    await sub.ping()
        assert events[0] == "down" and heard[-1] == b"after"
    finally:
        await sub.close()
        await conn.close()
        await link.close()
        await client.aclose()


def demoted(node: RedisServer, timeout: float = 30.0) -> None:
    """Wait until Sentinel has made `node` a replica."""
    deadline = time.monotonic() + timeout
    while role(node) != "slave":
        assert time.monotonic() < deadline, f"{node.port} is still a primary"
        time.sleep(0.05)  # (another process's state: there is no event to await)


def role(node: RedisServer) -> str | None:
    """`node`'s ROLE, or None while it answers with an error: a primary turned replica
    loads the new primary's data, and answers LOADING meanwhile (CI saw it)."""
    try:
        return node.cli("role").split()[0]
    except subprocess.CalledProcessError:
        return None


@pytest.fixture
def pair() -> Iterator[tuple[RedisServer, RedisServer]]:
    with running_redis() as a, running_redis() as b:
        yield a, b


async def test_a_readonly_answer_gives_the_connection_up(
    pair: tuple[RedisServer, RedisServer],
) -> None:
    """A primary demoted while our connection stays open (REPLICAOF keeps its clients):
    the write fails with `ConnectionError` (what the callers retry) rather than a
    `ResponseError`, the connection is dropped, and the next one starts afresh."""
    a, b = pair
    conn = RespClient(a.url_db(0))
    write = Script("return redis.call('set', KEYS[1], ARGV[1])")
    try:
        assert await conn.script(write, ["k"], ["1"]) == b"OK"
        first = await conn.execute("CLIENT", "ID")
        a.cli("replicaof", "127.0.0.1", str(b.port))
        for attempt in (conn.execute("SET", "k", "2"), conn.script(write, ["k"], ["3"])):
            with pytest.raises(ConnectionError, match="read-only replica"):
                await attempt
        assert await conn.execute("CLIENT", "ID") not in (first, None)
        with pytest.raises(ConnectionError):
            await conn.execute("SET", "k", "4")
        a.cli("replicaof", "no", "one")
        assert await conn.execute("SET", "k", "5") == b"OK"
        with pytest.raises(ResponseError):  # other error replies are the caller's
            await conn.execute("INCR", "k", "too-many")
    finally:
        await conn.close()


async def test_rediss_sentinel_speaks_tls_to_the_primary_it_names(certs: Certs) -> None:
    """The sentinels in plain TCP, the data nodes TLS only: every path gets through with
    the URL's certificates, and none without them."""
    with running_sentinels(replicas=0, sentinels=1, tls=certs) as watched:
        url = watched.url(1)
        assert url.startswith("rediss+sentinel://")
        conn = RespClient(url)
        client, link = await backend_connections(url)
        try:
            await conn.execute("SET", "k", "v")
            assert await client.get("k") == b"v"
            await link.subscribe("ch")
            await link.ping()
        finally:
            await conn.close()
            await link.close()
            await client.aclose()
        plain = url.replace("rediss+sentinel", "redis+sentinel").split("?")[0]
        conn = RespClient(plain, connect_timeout=1.0)
        try:
            with pytest.raises(ConnectionError):
                await conn.execute("PING")
        finally:
            await conn.close()
