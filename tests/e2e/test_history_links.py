"""History over every Redis link: one standalone Redis, one over TLS, Redis Sentinel, a
Redis Cluster.

The same tests run on each (`link`): a game that ends on process A is stored once, by A;
a game whose owner A is killed (SIGKILL, its disk gone with it) while PostgreSQL is down
is taken over by B from Redis and stored once PostgreSQL is back; processes sharing Redis
and a database sign the same player keys. On a cluster the history set and a room's keys
live on different shards: no script or transaction may touch both (CROSSSLOT).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from dicehall.server.backends.redis.keys import (
    HISTORY_WAITING,
    RECORD_TTL,
    SECRET,
    history_key,
    lease_key,
    record_key,
    snap_key,
)
from tests.e2e.helpers import bot_game, hello_player, metrics, stored, waiting
from tests.support.postgres import PostgresServer, running_postgres
from tests.support.redis import RedisClusterNodes, RedisServer, running_cluster
from tests.support.sentinel import SentinelSet, running_sentinels
from tests.support.servers import ServerProcess, running_server
from tests.support.wait import eventually

LINKS = ["standalone", "tls", "sentinel", "cluster"]

Client = redis.Redis | redis.RedisCluster


@dataclass
class RedisLink:
    """How `dicehall serve` reaches a Redis deployment, and a client of the test's own."""

    name: str
    args: tuple[str, ...]
    """`--redis URL`, and `--redis-cluster` for a cluster."""
    client: Client

    @property
    def cluster(self) -> bool:
        return self.name == "cluster"


@pytest.fixture(scope="module")
def cluster_nodes() -> Iterator[RedisClusterNodes]:
    with running_cluster(3) as c:
        yield c


@pytest.fixture(scope="module")
def sentinel_set() -> Iterator[SentinelSet]:
    """Nothing is killed here: one set for the module."""
    with running_sentinels() as s:
        yield s


@pytest.fixture(params=LINKS)
def link(request: pytest.FixtureRequest) -> Iterator[RedisLink]:
    """A Redis deployment of `request.param`'s kind, with nothing of another test in it
    (a fresh logical database; a cluster has only one, so its nodes are flushed)."""
    client: Client
    if request.param in ("standalone", "tls"):
        name = "redis_server" if request.param == "standalone" else "tls_redis"
        server: RedisServer = request.getfixturevalue(name)
        db = server.fresh_db()
        args: tuple[str, ...] = ("--redis", server.url_db(db))
        client = server.client(db)
    elif request.param == "sentinel":
        sentinels: SentinelSet = request.getfixturevalue("sentinel_set")
        primary = sentinels.primary()
        db = primary.fresh_db()
        args = ("--redis", sentinels.url(db))
        client = primary.client(db)
    else:
        nodes: RedisClusterNodes = request.getfixturevalue("cluster_nodes")
        for node in nodes.nodes:
            node.cli("flushall")
        args = ("--redis", nodes.nodes[1].url, "--redis-cluster")  # (any node will do)
        client = nodes.client()
    try:
        yield RedisLink(request.param, args, client)
    finally:
        client.close()


def saved(server: ServerProcess) -> float:
    return metrics(server)["dicehall_history_saved_total"]


def noted_stored(link: RedisLink, room: str) -> bool:
    """Redis says the room's game is in the database, and no longer lists it."""
    return link.client.get(history_key(room)) == b"stored" and not link.client.sismember(
        HISTORY_WAITING, room
    )


def closed(link: RedisLink, server: ServerProcess, room: str) -> bool:
    """`server` closed the room: it runs none, and the room's snapshot is gone."""
    return metrics(server)["dicehall_rooms"] == 0 and not link.client.exists(snap_key(room))


def kept_for_the_record(link: RedisLink, room: str) -> bool:
    """The room's history note expires with its record (no key left behind for ever)."""
    return 0 < link.client.ttl(history_key(room)) <= RECORD_TTL


def quiet(*servers: ServerProcess) -> None:
    """No server failed a Redis call of the history path (a CROSSSLOT in a cluster) or
    anything else."""
    for server in servers:
        output = server.output()
        for sign in ("Traceback", "CROSSSLOT", "not listed for history", "could not note"):
            assert sign not in output, output[-4000:]


async def test_a_game_ending_on_its_owner_is_stored_once(
    link: RedisLink, postgres: PostgresServer
) -> None:
    url = postgres.fresh_database()
    common = (*link.args, "--db", url)
    with running_server(*common) as a, running_server(*common) as b:
        room = await bot_game(a)
        if link.cluster:  # the room's keys on one shard; the history set wherever it hashes
            cluster = link.client
            assert isinstance(cluster, redis.RedisCluster)
            slots = {cluster.keyslot(k) for k in (lease_key(room), history_key(room))}
            assert len(slots | {cluster.keyslot(record_key(room))}) == 1
        await eventually(lambda: saved(a) == 1, "A stored the game")
        await eventually(lambda: noted_stored(link, room), "Redis notes it stored")
        assert kept_for_the_record(link, room)
        await eventually(lambda: closed(link, a, room), "A closed the room once stored")
        assert await stored(url, room) is not None
        assert waiting(a) == waiting(b) == 0 and saved(b) == 0
        quiet(a, b)


async def test_a_game_whose_owner_died_first_is_stored_by_another_process(
    link: RedisLink, tmp_path: Path
) -> None:
    """The game ends on A while PostgreSQL is down; A is killed and its disk is gone with
    it (its outbox too). B takes the finished room over from Redis and stores the game
    once PostgreSQL is back."""
    with running_postgres() as pg:
        url = pg.fresh_database()
        common = (*link.args, "--db", url, "--lease-ms", "600")
        disk_a, disk_b = tmp_path / "a", tmp_path / "b"
        with (
            running_server(*common, env={"XDG_DATA_HOME": str(disk_a)}) as a,
            running_server(*common, env={"XDG_DATA_HOME": str(disk_b)}) as b,
        ):
            await eventually(lambda: metrics(a)["dicehall_history_writer_up"] == 1, "A up")
            pg.stop()
            room = await bot_game(a)
            await eventually(lambda: waiting(a) == 1, "the game waits on A")
            assert link.client.get(history_key(room)) == b"waiting"
            assert link.client.sismember(HISTORY_WAITING, room)
            assert kept_for_the_record(link, room)
            # Nobody is in the room: A would close it at its next scan (every 75 ms), were
            # its game stored. Its writer tries the game thrice (0.6 s at least): A still
            # holds the room, and Redis its snapshot, for another process to take over.
            tried = metrics(a)["dicehall_history_failures_total"]
            await eventually(
                lambda: metrics(a)["dicehall_history_failures_total"] >= tried + 3, "retries"
            )
            assert metrics(a)["dicehall_rooms"] == 1 and link.client.exists(snap_key(room))
            a.proc.kill()
            a.proc.wait(10)
            shutil.rmtree(disk_a)
            await eventually(lambda: waiting(b) == 1, "B took the game over", timeout=20)
            pg.start()
            await eventually(lambda: waiting(b) == 0, "B stored it", timeout=30)
            await eventually(lambda: noted_stored(link, room), "Redis notes it stored")
            assert saved(b) == 1 and kept_for_the_record(link, room)
            await eventually(lambda: closed(link, b, room), "B closed the room once stored")
            quiet(b)
        assert await stored(url, room) is not None


@pytest.mark.parametrize("db", ["none", "postgresql"])
async def test_processes_sharing_redis_share_their_players(
    link: RedisLink, db: str, postgres: PostgresServer
) -> None:
    """Keys signed with the secret the first process stored in Redis (no database), or
    with the shared database's: either way a key from A is B's player too."""
    url = "none" if db == "none" else postgres.fresh_database()
    common = (*link.args, "--db", url)
    with running_server(*common) as a, running_server(*common) as b:
        player = await hello_player(a)
        assert player is not None and await hello_player(b, player["key"]) == player
    if db == "none":
        assert link.client.get(SECRET) is not None
