"""Redis trouble under a game in progress, with real processes and a Redis of their own.

Two `dicehall serve --redis` processes share a room (owned by A, players and spectators
on both). Their Redis connections are cut (CLIENT KILL), Redis restarts and comes back
empty, or the network to Redis becomes a black hole (nothing answers, nothing closes): no
committed message may be lost, repeated or changed in any client's stream, no turn may
stall until its deadline for want of a message, the owner writes the room back into the
empty Redis, and /readyz says "not ready" exactly while Redis is away.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from dicehall.clients.client import Client
from dicehall.protocol import errors
from tests.support.proxy import FaultyProxy, faulty_proxy
from tests.support.redis import (
    Player,
    RedisServer,
    check_stream,
    committed_log,
    committed_seq,
    lease_owner,
    running_redis,
    seat_players,
)
from tests.support.servers import ServerProcess, running_server

from .helpers import metrics


@pytest.fixture(scope="module")
def own_redis() -> Iterator[RedisServer]:
    """Restarted and cut off by these tests, so shared with no other module."""
    with running_redis() as r:
        yield r


@pytest.fixture
def pair(own_redis: RedisServer) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    own_redis.client().flushall()
    with (
        running_server("--redis", own_redis.url) as a,
        running_server("--redis", own_redis.url) as b,
    ):
        yield a, b


@pytest.fixture
def holed_pair(
    own_redis: RedisServer,
) -> Iterator[tuple[FaultyProxy, ServerProcess, ServerProcess]]:
    """The pair, reaching Redis through a proxy that can black-hole (default settings)."""
    own_redis.client().flushall()
    with (
        faulty_proxy(own_redis.port) as proxy,
        running_server("--redis", proxy.redis_url()) as a,
        running_server("--redis", proxy.redis_url()) as b,
    ):
        yield proxy, a, b


@contextlib.asynccontextmanager
async def game(a: ServerProcess, b: ServerProcess) -> AsyncIterator[tuple[str, list[Player]]]:
    """A started 3-seat Qwixx room owned by A: seats 0 and 2 on A, seat 1 on B, and a
    spectator on each process (the last two players)."""
    room, players = await seat_players(
        lambda i: [a.ws, b.ws] if i % 2 == 0 else [b.ws, a.ws], "qwixx", 3
    )
    for urls in ([a.ws, b.ws], [b.ws, a.ws]):
        watcher = await Player(urls, "watcher", "qwixx").connect()
        await watcher.join(room)
        players.append(watcher)
    try:
        await players[0].client.start(room)
        yield room, players
    finally:
        await asyncio.gather(*(p.close() for p in players), return_exceptions=True)


def expired_windows(*servers: ServerProcess) -> float:
    return sum(metrics(s)["dicehall_windows_closed_by_deadline_total"] for s in servers)


async def ready(server: ServerProcess, expected: int, timeout: float = 15.0) -> float:
    """Wait until /readyz answers `expected`; returns how long that took."""
    began = time.monotonic()
    while (await asyncio.to_thread(server.get, "/readyz"))[0] != expected:
        assert time.monotonic() - began < timeout, f"/readyz never said {expected}"
        await asyncio.sleep(0.05)  # polling an HTTP endpoint: there is no event to await
    return time.monotonic() - began


async def connected(redis: RedisServer, kind: str, at_least: int, timeout: float = 15.0) -> None:
    """Wait until Redis lists `at_least` clients of `kind` (`normal`, `pubsub`), not
    counting the `redis-cli` that asks (a normal client too, and one CLIENT KILL skips)."""
    began = time.monotonic()
    while (
        sum(
            "cmd=client|list" not in line
            for line in redis.cli("client", "list", "type", kind).strip().splitlines()
        )
        < at_least
    ):
        assert time.monotonic() - began < timeout, f"fewer than {at_least} {kind} clients"
        await asyncio.sleep(0.05)  # polling Redis's client list: there is no event to await


async def test_cut_connections_lose_nothing_and_stall_nothing(
    own_redis: RedisServer, pair: tuple[ServerProcess, ServerProcess]
) -> None:
    """CLIENT KILL of every pub/sub connection, then of every other one, five times each
    while the game goes on; both processes reconnect by themselves."""
    a, b = pair
    r = own_redis.client()
    async with game(a, b) as (room, players):
        for kind in ("pubsub", "normal") * 5:
            await players[3].until_seq(players[3].last_seq + 3)
            await connected(own_redis, kind, 2)  # (back from the previous cut: a slow box)
            assert int(own_redis.cli("client", "kill", "type", kind).strip()) >= 2
        await asyncio.gather(*(p.finish() for p in players))

        log = committed_log(r, room)
        assert len({check_stream(p, log) for p in players}) == 1
        assert expired_windows(a, b) == 0, "a turn waited for its deadline"
        # Bots answer at once: a long silence means a command or a reply was lost and
        # only its time-out (two leases) got the room going again.
        for p in players:
            arrivals = [s.at for s in p.seen]
            pause = max(later - earlier for earlier, later in itertools.pairwise(arrivals))
            assert pause < 2.5, f"{p.client.name} waited {pause:.1f} s for a message"
        assert all(p.unavailable == 0 for p in players), "an error reached a player"


async def test_a_redis_restart_loses_nothing_and_readyz_follows_it(
    own_redis: RedisServer, pair: tuple[ServerProcess, ServerProcess]
) -> None:
    """Redis is killed mid-game and comes back empty: both processes say "not ready"
    until it is back, the game resumes and ends, the owner has written the whole room
    back (lease, log, snapshot, record), and seat tokens still work on a process started
    after the restart."""
    a, b = pair
    r = own_redis.client()
    async with game(a, b) as (room, players):
        owner = lease_owner(r, room)
        await players[3].until_seq(committed_seq(r, room) + 8)

        own_redis.stop()
        await asyncio.gather(ready(a, 503), ready(b, 503))
        own_redis.start()
        await asyncio.gather(ready(a, 200), ready(b, 200))
        await asyncio.gather(*(p.finish() for p in players))

        assert lease_owner(r, room) == owner
        log = committed_log(r, room)
        assert len({check_stream(p, log) for p in players}) == 1
        assert all(p.unavailable == 0 for p in players), "an error reached a player"
        assert all(s.get(f"/api/rooms/{room}/record")[0] == 200 for s in (a, b))

        with running_server("--redis", own_redis.url) as c:
            async with Client(c.ws, tokens=players[1].client.tokens) as again:
                assert again.hello is not None
                assert [(h.room, h.seat) for h in again.hello.seats] == [(room, 1)]


async def test_a_black_holed_redis_fails_requests_fast_and_everything_resumes(
    own_redis: RedisServer, holed_pair: tuple[FaultyProxy, ServerProcess, ServerProcess]
) -> None:
    """The path to Redis drops everything for a while and closes nothing: both processes
    say "not ready" within 2 s, requests fail with `unavailable` instead of hanging, and
    when the path heals the game goes on and ends with nothing acknowledged lost."""
    proxy, a, b = holed_pair
    r = own_redis.client()
    async with game(a, b) as (room, players):
        await players[3].until_seq(players[3].last_seq + 5)

        proxy.black_hole()
        waited = await asyncio.gather(ready(a, 503), ready(b, 503))
        assert max(waited) < 2.0, f"/readyz took {max(waited):.1f} s to notice"
        for server in (a, b):
            async with Client(server.ws, name="probe", reconnect_timeout=0) as probe:
                async with asyncio.timeout(10):  # a hang fails here
                    with pytest.raises(errors.UnavailableError):
                        await probe.create("qwixx", 2)
                    with pytest.raises(errors.UnavailableError):
                        await probe.spectate(room)

        proxy.restore()
        await asyncio.gather(ready(a, 200), ready(b, 200))
        await asyncio.gather(*(p.finish() for p in players))

        # Every message any client saw, before, during and after, is the committed one.
        log = committed_log(r, room)
        assert len({check_stream(p, log) for p in players}) == 1
        assert sum(p.unavailable for p in players) > 0, "no player's request met the hole"
    for server in (a, b):
        assert server.terminate() == 0
        output = server.output()
        assert "Traceback" not in output, output[-4000:]
