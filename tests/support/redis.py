"""Real Redis for tests: a `redis-server` on a free loopback port, or a 3-master cluster;
and players that keep every room message they were sent, to hold against the room's log.

Never a fake: the scale-out backend is only proven against the server it will meet. The
binary comes from the project's own setup (`make redis` installs it when missing); without
it every test that asks for Redis fails, in CI and everywhere else, and says how to fix it.
Data lives in memory only (`--save ''`, no AOF), so a restart starts empty, which is what
the "Redis lost its data" tests want.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import redis
from redis.exceptions import RedisError

from dicehall.clients.botrunner import JOIN_TIMEOUT, SeatBot
from dicehall.clients.client import Client
from dicehall.protocol.messages.server import GameOver, RoomMessage, Snapshot
from dicehall.server.backends.redis.connect import connect
from dicehall.server.backends.redis.keys import lease_key, log_key, snap_key
from dicehall.server.backends.redis.link import Link
from dicehall.server.backends.redis.packing import unpack_outgoing
from dicehall.server.backends.redis.urls import parse_redis_url
from dicehall.server.rooms.outgoing import Outgoing
from tests.support.servers import bindable
from tests.support.tls import Certs

DATABASES = 256
"""Logical databases per standalone server: one fresh database per test module."""


def redis_binary(name: str = "redis-server") -> str:
    path = shutil.which(name)
    if path is None:
        raise RuntimeError(f"{name} is not installed; `make redis` installs it (apt-get)")
    return path


def free_redis_port(bus: bool = False) -> int:
    """A free loopback port below the kernel's ephemeral range, so that no outgoing
    connection can take it while the server is down for a restart; with `bus`, port +
    10000 (the cluster bus) is free and below that range too."""
    try:
        text = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text()
        ephemeral = int(text.split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral = 32768
    for _ in range(200):
        port = random.randint(10000, ephemeral - 10001)
        if bindable(port) and (not bus or bindable(port + 10000)):
            return port
    raise RuntimeError("no free port pair for redis-server")


@dataclass
class RedisServer:
    """One `redis-server` process; `start()` after `stop()` brings it back, empty, on the
    same port."""

    port: int
    workdir: Path
    extra: tuple[str, ...] = ()
    proc: subprocess.Popen[bytes] | None = None
    tls: Certs | None = None
    """Set: TLS only (`--tls-port`, no plain port), clients must show a certificate."""
    log: Path = field(init=False)
    _databases: Iterator[int] = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.workdir / f"redis-{self.port}.log"
        self._databases = iter(range(1, DATABASES))

    def fresh_db(self) -> int:
        """A logical database nobody has used yet: a test or module of its own."""
        db = next(self._databases, None)
        if db is None:
            raise RuntimeError(f"all {DATABASES} Redis databases are used: raise DATABASES")
        return db

    @property
    def url(self) -> str:
        """(With TLS: `rediss://` and the client's certificate files.)"""
        return self._url("")

    def url_db(self, db: int) -> str:
        return self._url(f"/{db}")

    def _url(self, path: str) -> str:
        if self.tls is None:
            return f"redis://127.0.0.1:{self.port}{path}"
        return f"rediss://127.0.0.1:{self.port}{path}{self.tls.query()}"

    def client(self, db: int = 0) -> redis.Redis:
        if self.tls is None:
            return redis.Redis(port=self.port, db=db, socket_timeout=5)
        return redis.Redis(
            host="127.0.0.1",  # (the name in the certificate)
            port=self.port,
            db=db,
            socket_timeout=5,
            ssl=True,
            ssl_ca_certs=str(self.tls.ca),
            ssl_certfile=str(self.tls.client_cert),
            ssl_keyfile=str(self.tls.client_key),
        )

    def cli(self, *args: str) -> str:
        tls = self.tls.cli_args() if self.tls is not None else ()
        out = subprocess.run(
            [redis_binary("redis-cli"), "-p", str(self.port), *tls, *args],
            check=True,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return out.stdout

    def start(self) -> None:
        listen: tuple[str, ...] = ("--port", str(self.port))
        if self.tls is not None:
            listen = ("--port", "0", "--tls-port", str(self.port), *self.tls.server_args())
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [
                    redis_binary(),
                    *listen,
                    *("--bind", "127.0.0.1"),
                    *("--save", "", "--appendonly", "no"),
                    *("--dir", str(self.workdir), "--databases", str(DATABASES)),
                    *self.extra,
                ],
                cwd=self.workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 20
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited: {self.log.read_text()[-2000:]}")
            with contextlib.suppress(redis.RedisError), self.client() as r:
                if r.ping():
                    return
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not answer PING")
            time.sleep(0.02)

    def stop(self) -> None:
        """Kill at once (no save, no goodbye): as if the machine running it had gone."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait(10)


@contextlib.contextmanager
def running_redis(*extra: str, tls: Certs | None = None) -> Iterator[RedisServer]:
    with tempfile.TemporaryDirectory(prefix="dicehall-redis-") as tmp:
        server = RedisServer(free_redis_port(), Path(tmp), extra, tls=tls)
        try:
            server.start()
            yield server
        finally:
            server.stop()


@dataclass
class RedisClusterNodes:
    """A real Redis Cluster of `masters` loopback nodes, no replicas."""

    nodes: list[RedisServer]

    @property
    def url(self) -> str:
        """One seed node: cluster clients discover the others from it."""
        return self.nodes[0].url

    def client(self) -> redis.RedisCluster:
        return redis.RedisCluster(host="127.0.0.1", port=self.nodes[0].port, socket_timeout=5)


@contextlib.contextmanager
def running_cluster(masters: int = 3) -> Iterator[RedisClusterNodes]:
    with tempfile.TemporaryDirectory(prefix="dicehall-cluster-") as tmp:
        nodes: list[RedisServer] = []
        try:
            for i in range(masters):
                workdir = Path(tmp) / f"node{i}"
                workdir.mkdir()
                port = free_redis_port(bus=True)
                node = RedisServer(
                    port,
                    workdir,
                    ("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"),
                )
                nodes.append(node)
                node.start()
            subprocess.run(
                [
                    redis_binary("redis-cli"),
                    "--cluster",
                    "create",
                    *(f"127.0.0.1:{n.port}" for n in nodes),
                    *("--cluster-replicas", "0", "--cluster-yes"),
                ],
                check=True,
                capture_output=True,
                timeout=60,
            )
            deadline = time.monotonic() + 30
            while not all("cluster_state:ok" in n.cli("cluster", "info") for n in nodes):
                if time.monotonic() > deadline:
                    raise RuntimeError("the Redis Cluster never reached cluster_state:ok")
                time.sleep(0.1)
            yield RedisClusterNodes(nodes)
        finally:
            for node in nodes:
                node.stop()


# --- players that keep what they were sent ------------------------------------------------


@dataclass(frozen=True)
class Seen:
    at: float
    """time.monotonic() when `messages()` delivered it."""
    message: RoomMessage


class Player:
    """A seat played by a bot policy (or a spectator) through the project's `Client`.

    The playing is the bot runner's `SeatBot` (one loop, proven by both): it answers
    `unavailable` the way docs/protocol.md says (retry in a moment), asking `legal` again
    before deciding, since the action it sent may or may not have been applied. On top,
    the player keeps every room message the client delivered, in order, with its arrival
    time, to hold against the room's log.
    """

    def __init__(
        self, urls: list[str], name: str, game: str, kind: str = "random", think: float = 0.0
    ) -> None:
        self.client = Client(urls, name=name, backoff=(0.05, 0.5), reconnect_timeout=30.0)
        self.bot = SeatBot(self.client, kind, game, think=think, on_message=self._keep)
        self.seen: list[Seen] = []
        self._arrived = asyncio.Event()
        """Set by every message kept; `until_seq` clears it before it waits again."""
        self.task: asyncio.Task[GameOver] | None = None

    @property
    def seat(self) -> int | None:
        return self.bot.seat

    @property
    def unavailable(self) -> int:
        """`unavailable` answers met (each retried)."""
        return self.bot.unavailable

    @property
    def lost(self) -> int:
        """Requests that failed with `ConnectionLost` (each retried)."""
        return self.bot.lost

    async def connect(self) -> Player:
        await self.client.connect()
        return self

    async def join(self, room: str, seat: int | None = None) -> None:
        """Sit down (or watch, with `seat` None), then play until the game is over."""
        if seat is None:
            await self.bot.watch(room)
        else:
            await self.bot.join(room, seat)
        self.task = asyncio.get_running_loop().create_task(self.bot.run())
        await asyncio.wait_for(self.bot.joined.wait(), JOIN_TIMEOUT)

    @property
    def last_seq(self) -> int:
        return self.seen[-1].message.seq if self.seen else 0

    async def until_seq(self, seq: int, timeout: float = 30.0) -> None:
        async with asyncio.timeout(timeout):
            while self.last_seq < seq:
                self._arrived.clear()
                await self._arrived.wait()

    def over(self) -> bool:
        """The game ended (or the player's task did)."""
        return self.task is not None and self.task.done()

    async def finish(self, timeout: float = 60.0) -> GameOver:
        assert self.task is not None
        return await asyncio.wait_for(self.task, timeout)

    async def close(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        await self.client.close()

    def stream(self) -> list[RoomMessage]:
        return [s.message for s in self.seen]

    def _keep(self, message: RoomMessage) -> None:
        self.seen.append(Seen(time.monotonic(), message))
        self._arrived.set()


async def seat_players(
    urls: Callable[[int], list[str]],
    game: str,
    seats: int,
    turn_window: int = 10,
    think: float = 0.0,
) -> tuple[str, list[Player]]:
    """A private room created by seat 0's client, every seat a `Player` whose client
    connects to `urls(seat)` first; not started yet."""
    players = [await Player(urls(i), f"p{i}", game, think=think).connect() for i in range(seats)]
    info = await players[0].client.create(game, seats, turn_window=turn_window, public=False)
    for i, player in enumerate(players):
        await player.join(info.room, i)
    return info.room, players


def committed_log(r: redis.Redis | redis.RedisCluster, room: str) -> dict[int, Outgoing]:
    """The room's durable log, by seq: every message from seq 1 on (tests play games short
    enough that none is trimmed), each under the stream id `seq-1`."""
    log: dict[int, Outgoing] = {}
    entries: list[tuple[bytes, dict[bytes, bytes]]] = r.xrange(log_key(room))  # type: ignore[assignment]
    for raw_id, fields in entries:
        out = unpack_outgoing(fields[b"m"])
        assert raw_id.decode() == f"{out.seq}-1"
        log[out.seq] = out
    assert list(log) == list(range(1, len(log) + 1)), f"the log of {room} has holes"
    return log


def committed_seq(r: redis.Redis | redis.RedisCluster, room: str) -> int:
    """The seq of the room's last committed message: its log's last entry."""
    top: list[tuple[bytes, object]] = r.xrevrange(log_key(room), "+", "-", count=1)  # type: ignore[assignment]
    assert top, f"no log of {room}"
    seq = int(top[0][0].split(b"-", 1)[0])
    return seq


def written_seq(r: redis.Redis | redis.RedisCluster, room: str) -> int:
    """`committed_seq`, or 0 while the room has written no message (written behind)."""
    return committed_seq(r, room) if r.exists(log_key(room)) else 0


def snapshot_seq(r: redis.Redis | redis.RedisCluster, room: str) -> int:
    raw: bytes | None = r.get(snap_key(room))  # type: ignore[assignment]
    assert raw is not None, f"no snapshot of {room}"
    seq: int = msgspec.msgpack.decode(raw)["seq"]
    return seq


def lease_owner(r: redis.Redis | redis.RedisCluster, room: str) -> str | None:
    raw: bytes | None = r.get(lease_key(room))  # type: ignore[assignment]
    return raw.decode() if raw is not None else None


def check_stream(player: Player, log: dict[int, Outgoing], spectator: bool = False) -> int:
    """The player's stream is one snapshot, then every seq after it up to `game_over`,
    each exactly the committed message (as its seat sees it): nothing lost, nothing
    twice, nothing that differs from the log. Returns the `game_over` seq.

    A `spectator` has no seat to resume: after a reconnect it watches again and gets a
    new snapshot, which must not go back in time; the stream goes on after it."""
    stream = player.stream()
    name = player.client.name
    assert stream, f"{name} received nothing"
    assert isinstance(stream[0], Snapshot), f"{name} began with {stream[0]!r}"
    assert isinstance(stream[-1], GameOver), f"{name} ended with {stream[-1]!r}"
    seq = stream[0].seq
    for message in stream[1:]:
        if isinstance(message, Snapshot):
            assert spectator, f"{name} got a second snapshot: {message!r}"
            assert message.seq >= seq, f"{name}: a snapshot at {message.seq} after {seq}"
            seq = message.seq
            continue
        assert message.seq == seq + 1, f"{name} got seq {message.seq} after {seq}"
        seq = message.seq
        assert seq in log, f"seq {seq} is not in the room's log"
        committed = log[seq].for_seat(player.seat)
        assert message == committed, f"{name} saw {message!r}, the log says {committed!r}"
    return seq


def check_rewound_stream(
    player: Player, log: dict[int, Outgoing], began: dict[int, int], spectator: bool = False
) -> tuple[int, list[Seen]]:
    """`check_stream` for a room written behind whose owners died (docs/protocol.md,
    "Epochs"): `began[e]` is the last written seq when epoch `e` began (a kill). A
    snapshot of a later epoch takes the stream back, and what the player saw after that
    point in the earlier epoch is lost; everything else is exactly the log. Returns the
    `game_over` seq and what was lost."""
    stream = player.seen
    name = player.client.name
    assert stream and isinstance(stream[0].message, Snapshot), f"{name} began otherwise"
    assert isinstance(stream[-1].message, GameOver), f"{name} ended with {stream[-1]!r}"
    first = stream[0].message
    seq, epoch = first.seq, first.epoch
    lost: list[Seen] = []
    kept: list[Seen] = []
    for seen in stream[1:]:
        message = seen.message
        if isinstance(message, Snapshot):
            if message.epoch > epoch:  # taken back: the earlier epoch's tail is lost
                point = min(began[e] for e in range(epoch + 1, message.epoch + 1))
                lost += [s for s in kept if s.message.seq > point]
                kept = [s for s in kept if s.message.seq <= point]
                assert message.seq >= point, f"{name}: back to {message.seq} < {point}"
            else:
                assert spectator or message.seq == seq, f"{name}: a snapshot at {message.seq}"
                assert message.seq >= seq, f"{name}: a snapshot at {message.seq} after {seq}"
            seq, epoch = message.seq, message.epoch
            continue
        assert message.seq == seq + 1, f"{name} got seq {message.seq} after {seq}"
        seq = message.seq
        kept.append(seen)
    for seen in kept:
        message = seen.message
        assert message.seq in log, f"seq {message.seq} is not in the room's log"
        committed = log[message.seq].for_seat(player.seat)
        assert message == committed, f"{name} saw {message!r}, the log says {committed!r}"
    return seq, lost


async def backend_connections(
    url: str,
    cluster: bool = False,
    on_message: Callable[[bytes, bytes], None] | None = None,
    on_down: Callable[[], None] | None = None,
    on_up: Callable[[], None] | None = None,
    reply_timeout: float = 1.0,
) -> tuple[Any, Link]:
    """redis-py's client and the hot link for `url`, built as the backend builds them (the
    caller closes both)."""
    return await connect(
        parse_redis_url(url, cluster),
        on_message or (lambda channel, data: None),
        on_down or (lambda: None),
        on_up or (lambda: None),
        cluster=cluster,
        reply_timeout=reply_timeout,
        patience=5.0,
    )


async def until_redis_answers(attempt: Callable[[], Any], timeout: float = 30.0) -> Any:
    """The result of the first `attempt()` that does not raise `RedisError` (a connection
    Redis cut fails what was in flight; the next attempt reconnects)."""
    async with asyncio.timeout(timeout):
        while True:
            try:
                return await attempt()
            except RedisError:
                await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def closing(players: list[Player]) -> AsyncIterator[list[Player]]:
    """The players, closed at the end whatever happened."""
    try:
        yield players
    finally:
        await asyncio.gather(*(p.close() for p in players), return_exceptions=True)
