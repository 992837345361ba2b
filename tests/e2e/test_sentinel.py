"""Redis Sentinel under a game in progress, with real processes: a primary `redis-server`,
a replica, three `redis-sentinel`s and two `dicehall serve --redis redis+sentinel://...`.

The primary is killed (SIGKILL) mid-game. The sentinels promote the replica; every Redis
path of both processes (our RESP connection and subscriber, redis-py's pool) finds the new
primary through the sentinels, and the game ends with every client's stream equal to the
room's committed log on the new primary: nothing acknowledged lost, repeated or changed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator

import pytest

from tests.support.redis import Player, check_stream, committed_log, committed_seq, seat_players
from tests.support.sentinel import SentinelSet, running_sentinels
from tests.support.servers import ServerProcess, running_server


@pytest.fixture
def sentinels() -> Iterator[SentinelSet]:
    """Its primary is killed: a set of its own."""
    with running_sentinels() as s:
        yield s


@contextlib.asynccontextmanager
async def game(a: ServerProcess, b: ServerProcess) -> AsyncIterator[tuple[str, list[Player]]]:
    """A started 3-seat Qwixx room created on A (its owner): seats 0 and 2 on A, seat 1
    on B, and a spectator on each process (the last two players)."""
    room, players = await seat_players(
        lambda i: [a.ws, b.ws] if i % 2 == 0 else [b.ws, a.ws], "qwixx", 3
    )
    try:
        for urls in ([a.ws, b.ws], [b.ws, a.ws]):
            watcher = await Player(urls, "watcher", "qwixx").connect()
            await watcher.join(room)
            players.append(watcher)
        await players[0].client.start(room)
        yield room, players
    finally:
        await asyncio.gather(*(p.close() for p in players), return_exceptions=True)


async def test_a_primary_killed_mid_game_loses_nothing(sentinels: SentinelSet) -> None:
    old = sentinels.primary()
    db = old.fresh_db()
    url = sentinels.url(db)
    with running_server("--redis", url) as a, running_server("--redis", url) as b:
        async with game(a, b) as (room, players):
            with old.client(db) as r:
                await players[3].until_seq(committed_seq(r, room) + 8)

            old.stop()  # SIGKILL of the real redis-server: no goodbye, no save
            at_kill = max(p.last_seq for p in players)
            new = await asyncio.to_thread(sentinels.failed_over, old)
            await asyncio.gather(*(p.finish(timeout=90) for p in players))

            with new.client(db) as r:
                log = committed_log(r, room)
            assert len({check_stream(p, log) for p in players}) == 1
            assert max(log) > at_kill, "the game did not go on after the kill"
        for server in (a, b):
            assert server.terminate() == 0
            output = server.output()
            assert "Traceback" not in output, output[-4000:]
