"""Beyond one Redis: a real 3-master Redis Cluster on loopback, two `dicehall serve
--redis-cluster` processes, one game played across both.

Every key of a room shares the hash tag `{room}`, so the room lives on one shard (its fenced
commit is one script on one node), and its channels use sharded pub/sub: each process
SSUBSCRIBEs once per room, on the shard that holds it, and nothing goes through the classic,
cluster-wide PUBLISH.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from dicehall.protocol import errors
from dicehall.server.backends.redis.keys import (
    command_channel,
    event_channel,
    lease_key,
    log_key,
    record_key,
    snap_key,
)
from tests.support.redis import (
    Player,
    RedisClusterNodes,
    check_stream,
    committed_log,
    lease_owner,
    running_cluster,
    seat_players,
)
from tests.support.servers import ServerProcess, running_server


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisClusterNodes]:
    with running_cluster(3) as c:
        yield c


def channel_subscribers(cluster: RedisClusterNodes, channel: str, command: str) -> int:
    """Subscribers of `channel` over every node (`shardnumsub` or `numsub`)."""
    total = 0
    for node in cluster.nodes:
        out = node.cli("pubsub", command, channel).split()
        total += int(out[1])
    return total


async def test_a_game_across_two_processes_through_a_cluster(
    cluster: RedisClusterNodes,
) -> None:
    seed = cluster.nodes[1].url  # any node will do: the client finds the others
    with (
        running_server("--redis", seed, "--redis-cluster") as a,
        running_server("--redis", seed, "--redis-cluster") as b,
    ):
        await game_across(cluster, a, b)


async def game_across(cluster: RedisClusterNodes, a: ServerProcess, b: ServerProcess) -> None:
    r = cluster.client()
    room, players = await seat_players(
        lambda i: [a.ws, b.ws] if i % 2 == 0 else [b.ws, a.ws], "qwinto", 3
    )
    for urls in ([a.ws], [b.ws]):
        watcher = await Player(urls, "watcher", "qwinto").connect()
        await watcher.join(room)
        players.append(watcher)
    try:
        keys = [lease_key(room), snap_key(room), log_key(room), record_key(room)]
        channels = [command_channel(room), event_channel(room)]
        assert len({r.keyslot(k) for k in keys + channels}) == 1
        assert lease_owner(r, room) is not None
        # One sharded subscription to the room's events, the other process's (the owner
        # delivers its own); the owner alone listens to its commands; no classic ones.
        assert channel_subscribers(cluster, event_channel(room), "shardnumsub") == 1
        assert channel_subscribers(cluster, command_channel(room), "shardnumsub") == 1
        assert channel_subscribers(cluster, event_channel(room), "numsub") == 0

        with pytest.raises(errors.ForbiddenError):  # from B, forwarded to A, refused there
            await players[1].client.start(room)  # (seat 0 on A hosts)
        await players[0].client.start(room)  # seat 1's acts go from B to A over the shard
        overs = await asyncio.gather(*(p.finish() for p in players))
        assert len({o.seed for o in overs}) == 1

        log = committed_log(r, room)
        assert len({check_stream(p, log) for p in players}) == 1
        for server in (a, b):
            status, body = server.get(f"/api/rooms/{room}/record")
            assert status == 200 and json.loads(body)["seed"] == overs[0].seed
    finally:
        await asyncio.gather(*(p.close() for p in players), return_exceptions=True)
        r.close()
