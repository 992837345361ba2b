"""One contract for every `Link` (server/backends/redis/link.py), against real Redis.

Each test runs on every way the backend reaches Redis, the links built as the backend
builds them (connect.py): one Redis (`StandaloneLink`), the same over TLS, a 3-master
cluster (`ClusterLink`), and the primary that Sentinel names (`StandaloneLink` asking the
sentinels). What `Link` documents must hold on each: scripts (loaded again once Redis forgot
them), commands on keys of any shard, the orphan scan, forwarded commands with and without
`Unheard`, answers, subscriptions and the messages they bring, pings, `on_down` / `on_up`
when Redis cuts the link's connections (CLIENT KILL) or freezes (SIGSTOP), and `close`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import signal
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from redis.exceptions import RedisError

from dicehall.server.backends.redis.keys import command_channel, lease_key, reply_channel, reply_key
from dicehall.server.backends.redis.link import ClusterLink, Link, StandaloneLink, Unheard
from dicehall.server.backends.redis.resp import Script
from tests.support.redis import (
    RedisClusterNodes,
    RedisServer,
    backend_connections,
    running_cluster,
    until_redis_answers,
)
from tests.support.sentinel import SentinelSet, running_sentinels

KINDS = ["standalone", "tls", "cluster", "sentinel"]
REPLY_TIMEOUT = 0.5
"""The links' `--redis-timeout`: short, so that a frozen Redis shows within a second."""

_names = itertools.count()


def unique(name: str) -> str:
    """A name no other test uses (the cluster has no databases to keep tests apart)."""
    return f"t{next(_names)}-{name}"


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisClusterNodes]:
    with running_cluster(3) as c:
        yield c


@pytest.fixture(scope="module")
def sentinels() -> Iterator[SentinelSet]:
    """No failover here: a primary frozen for a second must not look down to them."""
    with running_sentinels(down_after_ms=10_000) as s:
        yield s


@dataclass
class Target:
    """Where a link under test connects: its URL, the data nodes its connections reach,
    and an admin client of the same keys (its own connections are left alone)."""

    kind: str
    url: str
    nodes: list[RedisServer]
    admin: Any
    """`redis.Redis` of the test's database, or `redis.RedisCluster`."""
    db: int | None
    """The test's database (None on a cluster, which has only one)."""
    admin_id: int | None = None
    """The admin's connection in that database, which is not the link's."""

    @property
    def cluster(self) -> bool:
        return self.kind == "cluster"

    def publish(self, channel: str, data: bytes) -> int:
        verb = "SPUBLISH" if self.cluster else "PUBLISH"
        return int(self.admin.execute_command(verb, channel, data))

    def subscribers(self, channel: str) -> int:
        """Subscribers of `channel` over every node."""
        verb = "shardnumsub" if self.cluster else "numsub"
        return sum(int(n.cli("pubsub", verb, channel).split()[1]) for n in self.nodes)

    def connections(self, kind: str) -> list[tuple[RedisServer, int]]:
        """(node, client id) of every connection of type `kind` (`normal`, `pubsub`) that
        may be the link's: in its database, and not the admin's or the sentinels'."""
        found = []
        for node in self.nodes:
            with node.client() as r:
                for c in r.client_list(_type=kind):
                    if self.db is None or (
                        c["db"] == str(self.db) and c["id"] != str(self.admin_id)
                    ):
                        found.append((node, int(c["id"])))
        return found

    def kill(self, kind: str) -> int:
        """CLIENT KILL every connection `connections(kind)` lists; -> how many."""
        killed = 0
        for node, client in self.connections(kind):
            with node.client() as r:
                killed += int(r.execute_command("CLIENT", "KILL", "ID", client))
        return killed

    def flush_scripts(self) -> None:
        for node in self.nodes:
            node.cli("script", "flush")


@pytest.fixture(params=KINDS)
def target(request: pytest.FixtureRequest, redis_server: RedisServer) -> Iterator[Target]:
    kind: str = request.param
    if kind == "cluster":
        nodes: RedisClusterNodes = request.getfixturevalue("cluster")
        with contextlib.closing(nodes.client()) as admin:
            yield Target(kind, nodes.url, nodes.nodes, admin, None)
        return
    if kind == "sentinel":
        watched: SentinelSet = request.getfixturevalue("sentinels")
        primary = watched.primary()
        db = primary.fresh_db()
        with primary.client(db) as admin:
            yield Target(kind, watched.url(db), watched.nodes, admin, db, admin.client_id())
        return
    server = redis_server if kind == "standalone" else request.getfixturevalue("tls_redis")
    db = server.fresh_db()
    with server.client(db) as admin:
        yield Target(kind, server.url_db(db), [server], admin, db, admin.client_id())


class Heard:
    """What a link told its owner: messages, and "down" / "up" in order."""

    def __init__(self) -> None:
        self.messages: list[tuple[bytes, bytes]] = []
        self.events: list[str] = []
        self._changed = asyncio.Event()

    def on_message(self, channel: bytes, data: bytes) -> None:
        self.messages.append((channel, data))
        self._changed.set()

    def on_down(self) -> None:
        self.events.append("down")
        self._changed.set()

    def on_up(self) -> None:
        self.events.append("up")
        self._changed.set()

    async def until(self, check: Callable[[], bool], timeout: float = 15.0) -> None:
        async with asyncio.timeout(timeout):
            while not check():
                self._changed.clear()
                await self._changed.wait()

    def on(self, channel: str) -> list[bytes]:
        return [data for c, data in self.messages if c == channel.encode()]


@contextlib.asynccontextmanager
async def opened(target: Target) -> AsyncIterator[tuple[Link, Heard]]:
    """A link built as the backend builds it, and what it heard; closed at the end."""
    heard = Heard()
    client, link = await backend_connections(
        target.url, target.cluster, heard.on_message, heard.on_down, heard.on_up, REPLY_TIMEOUT
    )
    assert isinstance(link, ClusterLink if target.cluster else StandaloneLink)
    try:
        yield link, heard
    finally:
        await link.close()
        await client.aclose()


# --- commands -----------------------------------------------------------------------------


async def test_a_script_runs_by_its_sha_and_is_loaded_again_once_redis_forgot_it(
    target: Target,
) -> None:
    key = unique("{s}")
    script = Script("redis.call('set', KEYS[1], ARGV[1]) return {KEYS[1], ARGV[1] * 2}")
    async with opened(target) as (link, _):
        assert await link.script(script, [key], [21]) == [key.encode(), 42]
        target.flush_scripts()
        assert await link.script(script, [key], [5]) == [key.encode(), 10]
        assert target.admin.get(key) == b"5"


async def test_a_command_reaches_its_key_wherever_it_lives(target: Target) -> None:
    keys = [unique(f"{{{tag}}}") for tag in "abcdefgh"]  # (on every shard of a cluster)
    async with opened(target) as (link, _):
        for i, key in enumerate(keys):
            assert await link.command("SET", key, bytes([i, 0, 255])) in (b"OK", True)
        assert [await link.command("GET", key) for key in keys] == [
            bytes([i, 0, 255]) for i in range(len(keys))
        ]
        assert target.admin.get(keys[-1]) == bytes([len(keys) - 1, 0, 255])
        assert await link.command("GET", unique("missing")) is None


async def test_orphans_are_the_rooms_whose_lease_is_gone(target: Target) -> None:
    rooms_key = unique("rooms")
    rooms = [unique(f"room{i}") for i in range(6)]
    target.admin.hset(rooms_key, mapping={room: b"info" for room in rooms})
    for room in rooms[::2]:
        target.admin.set(lease_key(room), b"owner", px=60_000)
    async with opened(target) as (link, _):
        assert sorted(await link.orphans(rooms_key, lease_key)) == sorted(rooms[1::2])
        assert await link.orphans(unique("none"), lease_key) == []


# --- forwarded commands and their answers --------------------------------------------------


def unheard_of(proc: str) -> Unheard:
    return Unheard(reply_key(proc, 7), reply_channel(proc), b"retry", 5000)


async def test_a_forwarded_command_reaches_the_owner_and_no_unheard_answer_is_sent(
    target: Target,
) -> None:
    proc = unique("asker")
    owner = command_channel(unique("room"))
    async with opened(target) as (link, heard):
        await link.subscribe(owner)
        await link.subscribe(reply_channel(proc))
        assert await link.forward(owner, b"\x00cmd-1", None) in (True, None)
        assert await link.forward(owner, b"\xffcmd-2", unheard_of(proc)) in (True, None)
        await heard.until(lambda: len(heard.on(owner)) == 2)
        assert heard.on(owner) == [b"\x00cmd-1", b"\xffcmd-2"]
        await link.ping()  # (a round trip after the forward: its effects are in)
        assert target.admin.get(reply_key(proc, 7)) is None
        assert heard.on(reply_channel(proc)) == []


async def test_a_command_nobody_hears_is_said_so_or_answered_with_unheard(
    target: Target,
) -> None:
    """`forward` says False (and sends no `Unheard`), or cannot tell (None) and then the
    `Unheard` answer is kept for the asker and published on its reply channel."""
    proc = unique("asker")
    nobody = command_channel(unique("room"))
    async with opened(target) as (link, heard):
        await link.subscribe(reply_channel(proc))
        assert await link.forward(nobody, b"cmd", None) in (False, None)
        heard_of = await link.forward(nobody, b"cmd", unheard_of(proc))
        if heard_of is None:
            await heard.until(lambda: heard.on(reply_channel(proc)) == [b"retry"])
            assert target.admin.get(reply_key(proc, 7)) == b"retry"
            assert 0 < target.admin.pttl(reply_key(proc, 7)) <= 5000
        else:
            assert heard_of is False
            await link.ping()
            assert target.admin.get(reply_key(proc, 7)) is None
            assert heard.on(reply_channel(proc)) == []


async def test_an_answer_is_kept_for_a_while_and_published(target: Target) -> None:
    proc = unique("asker")
    async with opened(target) as (link, heard):
        await link.subscribe(reply_channel(proc))
        await link.answer(reply_key(proc, 1), b"\x00answer\xff", 3000, reply_channel(proc))
        await heard.until(lambda: bool(heard.on(reply_channel(proc))))
        assert heard.on(reply_channel(proc)) == [b"\x00answer\xff"]
        assert target.admin.get(reply_key(proc, 1)) == b"\x00answer\xff"
        assert 0 < target.admin.pttl(reply_key(proc, 1)) <= 3000


# --- subscriptions --------------------------------------------------------------------------


async def test_a_subscription_hears_what_is_published_after_it_until_unsubscribed(
    target: Target,
) -> None:
    tag = unique("{ch}")  # one slot: one connection, so one order, on a cluster too
    a, b, c = f"{tag}:a", f"{tag}:b", f"{tag}:c"
    async with opened(target) as (link, heard):
        await link.subscribe(a)
        await link.subscribe(b)
        sent = [(a if i % 2 else b, bytes([i]) * i) for i in range(60)]
        for channel, data in sent:
            assert target.publish(channel, data) == 1
        assert target.publish(c, b"not subscribed") == 0
        await link.unsubscribe(b)
        assert target.publish(b, b"after unsubscribe") == 0
        assert target.publish(a, b"last") == 1
        await heard.until(lambda: heard.messages[-1:] == [(a.encode(), b"last")])
        assert heard.messages == [(ch.encode(), d) for ch, d in sent] + [(a.encode(), b"last")]
        assert target.subscribers(b) == 0 and target.subscribers(a) == 1


async def test_subscriptions_made_and_dropped_on_every_shard_while_it_reads_lose_nothing(
    target: Target,
) -> None:
    """The reader goes on while channels come and go: on a cluster each shard's first
    channel opens a connection (redis-py lists it before it is connected) and its last
    one closes it (it goes after it is closed); reading either killed the reader."""
    channels = [unique(f"{{{tag}}}") for tag in "abcdefgh"]  # (on every shard of a cluster)
    async with opened(target) as (link, heard):
        for rounds in range(3):
            for channel in channels:  # (no pause: the reader runs between them)
                await link.subscribe(channel)
            for channel in channels:
                assert target.publish(channel, b"%d" % rounds) == 1
            await heard.until(lambda r=b"%d" % rounds: all(r in heard.on(c) for c in channels))
            for channel in channels[1:]:
                await link.unsubscribe(channel)
            # (the last channel of a shard goes once the reader hears it confirmed)
            assert target.publish(channels[0], b"kept") == 1
            await heard.until(lambda: heard.on(channels[0])[-1:] == [b"kept"])
        assert [heard.on(c) for c in channels[1:]] == [[b"0", b"1", b"2"]] * 7
        assert heard.events == []  # (never down: nothing failed)


async def test_ping_is_a_round_trip_on_every_connection(target: Target) -> None:
    async with opened(target) as (link, _):
        await link.ping()
        await link.subscribe(unique("{p}"))
        for _ in range(3):
            await link.ping()


# --- trouble --------------------------------------------------------------------------------


async def test_cut_connections_say_down_then_up_and_everything_works_again(
    target: Target,
) -> None:
    """CLIENT KILL of the subscriber: `on_down`, then `on_up` once subscribed again; of
    the command connections: the next command reconnects."""
    channel = unique("{cut}")
    key = unique("{cut}k")
    async with opened(target) as (link, heard):
        await link.subscribe(channel)
        await link.command("SET", key, b"v")
        assert target.kill("pubsub") >= 1
        await heard.until(lambda: heard.events[-2:] == ["down", "up"])
        assert heard.events == ["down", "up"] * (len(heard.events) // 2)
        assert target.publish(channel, b"again") == 1  # subscribed again
        await heard.until(lambda: heard.on(channel) == [b"again"])

        assert target.kill("normal") >= 1
        assert await until_redis_answers(lambda: link.command("GET", key)) == b"v"
        await until_redis_answers(link.ping)


def freeze(nodes: list[RedisServer]) -> None:
    """SIGSTOP: the processes keep every connection open and answer nothing (a frozen
    peer, a black hole)."""
    for node in nodes:
        assert node.proc is not None
        node.proc.send_signal(signal.SIGSTOP)


def thaw(nodes: list[RedisServer]) -> None:
    for node in nodes:
        assert node.proc is not None
        node.proc.send_signal(signal.SIGCONT)


async def test_a_frozen_redis_fails_the_ping_and_the_link_heals(target: Target) -> None:
    """The health ping (every half `--redis-timeout`) must not pass while Redis answers
    nothing and says nothing; once Redis answers again, so does the link. (Frozen for
    less than Sentinel's `down-after-milliseconds`, so no failover begins.)"""
    channel = unique("{frozen}")
    frozen = target.nodes if target.cluster else target.nodes[:1]
    async with opened(target) as (link, heard):
        await link.subscribe(channel)
        await link.ping()
        freeze(frozen)
        try:
            with pytest.raises((RedisError, TimeoutError)):
                async with asyncio.timeout(REPLY_TIMEOUT * 2):  # what Health allows, and more
                    await link.ping()
        finally:
            thaw(frozen)
        await until_redis_answers(link.ping)
        await until_redis_answers(lambda: _published(target, channel))
        await heard.until(lambda: bool(heard.on(channel)))


async def _published(target: Target, channel: str) -> None:
    """Publish once the link is subscribed again (after a reconnect it may not be yet)."""
    if target.publish(channel, b"thawed") == 0:
        raise RedisError("not subscribed yet")


async def test_close_drops_every_connection_and_tells_no_one(target: Target) -> None:
    channel = unique("{closed}")
    async with opened(target) as (link, heard):
        await link.subscribe(channel)
        await link.command("GET", unique("k"))
        await link.ping()
        assert target.subscribers(channel) == 1
        await link.close()
        async with asyncio.timeout(10):
            while target.subscribers(channel) or target.connections("pubsub"):
                await asyncio.sleep(0.05)  # (Redis's client list: there is no event to await)
            if not target.cluster:  # (a cluster link's commands are the backend's client's)
                while target.connections("normal"):
                    await asyncio.sleep(0.05)
        assert target.publish(channel, b"late") == 0
        assert heard.events == [] and heard.on(channel) == []
