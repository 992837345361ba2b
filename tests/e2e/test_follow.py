"""Clients follow a room to the process that runs it (docs/protocol.md, "Following a room
to its server"): two real processes sharing Redis, each advertising its own address.

A seat that connected to the process that does not run its room moves to the one that
does, after which nothing of the game crosses Redis but the owner's commits: no command
is forwarded. A process whose advertised address cannot be reached keeps its clients
where they are, and forwarding plays the game as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
import redis

from tests.support.redis import (
    Player,
    RedisServer,
    check_stream,
    closing,
    committed_log,
    seat_players,
)
from tests.support.servers import ServerProcess, running_server

from .helpers import metrics


@pytest.fixture
def advertising(
    redis_server: RedisServer,
) -> Iterator[tuple[ServerProcess, ServerProcess, redis.Redis]]:
    db = redis_server.fresh_db()
    url = redis_server.url_db(db)
    with (
        running_server("--redis", url, advertise=True) as a,
        running_server("--redis", url, advertise=True) as b,
    ):
        yield a, b, redis_server.client(db)


def forwarded(server: ServerProcess) -> float:
    return metrics(server)["dicehall_commands_forwarded_total"]


async def forwarded_once_settled(server: ServerProcess) -> float:
    """`forwarded` once it has stopped moving: a session that moved away may still be
    letting go of its seat (a command over Redis) after its connection stopped counting,
    and nothing announces when it is done."""
    last = forwarded(server)
    while True:
        await asyncio.sleep(0.5)  # (a look, twice: the count holding still is the condition)
        now = forwarded(server)
        if now == last:
            return now
        last = now


async def test_a_seat_on_the_other_process_moves_to_the_owner(
    advertising: tuple[ServerProcess, ServerProcess, redis.Redis],
) -> None:
    a, b, r = advertising
    # Seat 0 creates the room on B (B runs it); seats 1 and 2 come in through A.
    room, players = await seat_players(lambda i: [b.ws] if i == 0 else [a.ws], "qwixx", 3)
    watcher = await Player([a.ws], "watcher", "qwixx").connect()
    await watcher.join(room)
    everyone = [*players, watcher]
    async with closing(everyone):
        for p in everyone[1:]:
            async with asyncio.timeout(10):
                while p.client.url != b.ws or not p.client.connected:
                    await asyncio.sleep(0.02)  # polling the client: a move tells nothing else
            assert p.client.moves == 1
        assert players[0].client.moves == 0
        assert metrics(a)["dicehall_connections"] == 0  # every seat and watcher is on B
        before = await forwarded_once_settled(a)
        await players[0].client.start(room)
        overs = await asyncio.gather(*(p.finish() for p in everyone))
        assert len({o.seed for o in overs}) == 1

        assert forwarded(a) == before, "a command crossed Redis after the move"
        assert forwarded(b) == 0
        # Nothing lost or repeated across the move: each stream is the committed log.
        log = committed_log(r, room)
        ends = {check_stream(p, log) for p in players}
        ends.add(check_stream(watcher, log, spectator=True))
        assert len(ends) == 1
        assert all(p.client.reconnects == 0 for p in everyone)  # a move is no reconnect


async def test_an_address_that_cannot_be_reached_keeps_clients_where_they_are(
    redis_server: RedisServer,
) -> None:
    url = redis_server.url_db(redis_server.fresh_db())
    nowhere = "ws://127.0.0.1:9/ws"  # the discard port: nothing listens
    with (
        running_server("--redis", url, "--public-url", nowhere) as a,
        running_server("--redis", url, advertise=True) as b,
    ):
        # Seat 0 creates the room on A, which advertises an address nobody can reach.
        room, players = await seat_players(lambda i: [a.ws] if i == 0 else [b.ws], "qwixx", 2)
        async with closing(players):
            await players[0].client.start(room)
            await asyncio.gather(*(p.finish() for p in players))
            assert [p.client.moves for p in players] == [0, 0]
            assert players[1].client.url == b.ws
            assert forwarded(b) > 0  # its seat played through B, forwarded to A
            r = redis_server.client(int(url.rsplit("/", 1)[1]))
            log = committed_log(r, room)
            assert len({check_stream(p, log) for p in players}) == 1
