"""Scale-out failover with real processes: two `dicehall serve --redis` and one Redis.

The room is created through process A, so A owns it. Players and spectators sit on both
processes. A dies (`kill -9`) or is told to go (SIGTERM) mid-game; B takes the room over
from its snapshot and log, A's clients reconnect to B and resume, the game finishes, and
every client's stream holds each committed message exactly once, as committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Iterator

import pytest

from dicehall.server.backends.redis.keys import process_key
from tests.support.redis import (
    Player,
    RedisServer,
    check_rewound_stream,
    check_stream,
    closing,
    committed_log,
    committed_seq,
    lease_owner,
    seat_players,
    written_seq,
)
from tests.support.servers import ServerProcess, free_port, running_server
from tests.support.servers import dicehall_bot as bot
from tests.support.wait import eventually

LEASE_S = 2.0
"""The default lease (`--lease-ms` 2000)."""


@contextlib.contextmanager
def two_servers(url: str, *extra: str) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    with running_server("--redis", url, *extra) as a, running_server("--redis", url, *extra) as b:
        yield a, b


@pytest.fixture
def db(redis_server: RedisServer) -> int:
    return redis_server.fresh_db()


async def watch(urls: list[str], room: str, game: str) -> Player:
    watcher = Player(urls, "watcher", game)
    try:
        await watcher.connect()
        await watcher.join(room)
    except BaseException:
        await watcher.close()
        raise
    return watcher


async def test_kill_9_of_the_owner_mid_game(redis_server: RedisServer, db: int) -> None:
    r = redis_server.client(db)
    with two_servers(redis_server.url_db(db)) as (a, b):
        # Seats 0 and 2 start on A (the owner), seat 1 on B; a spectator on each.
        room, players = await seat_players(
            lambda i: [a.ws, b.ws] if i % 2 == 0 else [b.ws, a.ws], "qwixx", 3
        )
        watchers = [await watch([b.ws, a.ws], room, "qwixx")]
        watchers.append(await watch([a.ws, b.ws], room, "qwixx"))
        async with closing(players + watchers):
            first_owner = lease_owner(r, room)
            assert first_owner is not None
            await players[0].client.start(room)
            await watchers[0].until_seq(committed_seq(r, room) + 8)

            a.proc.kill()
            killed = time.monotonic()
            a.proc.wait(10)
            before = committed_seq(r, room)  # the last commit of the dead owner
            overs = await asyncio.gather(*(p.finish() for p in players + watchers))

            # B took the room over within the lease, and the game went on at once.
            new_owner = lease_owner(r, room)
            assert new_owner not in (None, first_owner)
            resumed = [
                s.at - killed for p in players + watchers for s in p.seen if s.message.seq > before
            ]
            assert 0 < min(resumed) <= 3.0, f"first message after the kill: {min(resumed)} s"

            # A's clients came back through B and resumed from where they were.
            for p in (players[0], players[2], watchers[1]):
                assert p.client.reconnects == 1 and p.client.url == b.ws
            for p in (players[0], players[2]):
                assert [x.mode for x in p.client.resumes] == ["events"]
            assert players[1].client.reconnects == 0 and watchers[0].client.reconnects == 0

            log = committed_log(r, room)
            ends = {check_stream(p, log) for p in players + watchers[:1]}
            ends.add(check_stream(watchers[1], log, spectator=True))
            assert len(ends) == 1 and len({o.seed for o in overs}) == 1
            status, body = b.get(f"/api/rooms/{room}/record")
            assert status == 200 and json.loads(body)["seed"] == overs[0].seed


async def test_kill_9_of_a_written_behind_owner_goes_back_to_its_written_point(
    redis_server: RedisServer, db: int
) -> None:
    """`--durability behind` with a long write period, so that the owner dies with
    messages shown and not written: B goes on from the last written point in epoch 1,
    A's clients resume into it, and every stream is the log but for what A showed after
    that point (docs/protocol.md, "Epochs")."""
    r = redis_server.client(db)
    behind = ("--durability", "behind", "--write-behind-ms", "1500")
    with two_servers(redis_server.url_db(db), *behind) as (a, b):
        room, players = await seat_players(
            lambda i: [a.ws, b.ws] if i % 2 == 0 else [b.ws, a.ws], "qwixx", 3
        )
        watchers = [await watch([b.ws, a.ws], room, "qwixx")]
        watchers.append(await watch([a.ws, b.ws], room, "qwixx"))
        async with closing(players + watchers):
            await players[0].client.start(room)
            # (the seats written first: a rewind past a `join` frees its seat)
            started = players[0].last_seq
            await eventually(lambda: written_seq(r, room) >= started, "the start written")
            await players[0].until_seq(written_seq(r, room) + 6)  # shown, not written
            assert players[0].last_seq > written_seq(r, room)
            a.proc.kill()
            a.proc.wait(10)
            written = written_seq(r, room)
            overs = await asyncio.gather(*(p.finish() for p in players + watchers))
            end = watchers[0].last_seq
            await eventually(lambda: written_seq(r, room) >= end, "the game's end written")

            log = committed_log(r, room)
            began = {1: written}
            results = [check_rewound_stream(p, log, began) for p in players + watchers[:1]]
            results.append(check_rewound_stream(watchers[1], log, began, spectator=True))
            assert len({end for end, _ in results}) == 1 and len({o.seed for o in overs}) == 1
            assert results[0][1], "seat 0 saw what was never written: it was taken back"
            for p in (players[0], players[2]):  # A's seats: resumed past the written point
                assert [(x.mode, x.epoch) for x in p.client.resumes] == [("snapshot", 1)]


class HeldSeat(Player):
    """A seat that acts only while `go` is set: the game cannot end while it is clear."""

    def __init__(self, urls: list[str], name: str, game: str) -> None:
        super().__init__(urls, name, game)
        self.go = asyncio.Event()
        self.go.set()

    async def _play(self, window: int) -> None:
        await self.go.wait()
        await super()._play(window)


async def test_sigterm_hands_the_rooms_over_and_players_only_pause(
    redis_server: RedisServer, db: int
) -> None:
    """`dicehall bot` takes two seats of a room created through A; A is told to stop
    mid-game. Its clients get 1001 and resume on B, B owns the room once A released it, the
    game ends and the bot command reports no error at all (exit status 0, dice verified).

    The test's own seat holds the game while A's spectator comes back: a spectator that
    reconnects after the game ended gets a snapshot of the end, not its `game_over`."""
    r = redis_server.client(db)
    with two_servers(redis_server.url_db(db)) as (a, b):
        async with closing([]) as clients:
            host = HeldSeat([a.ws, b.ws], "host", "qwixx")
            clients.append(host)
            await host.connect()
            info = await host.client.create(
                "qwixx", 3, turn_window=30, public=False, autostart=True
            )
            room = info.room
            owner = lease_owner(r, room)
            assert owner is not None
            await host.join(room, 0)
            watchers = [await watch([b.ws], room, "qwixx")]
            clients.append(watchers[0])
            watchers.append(await watch([a.ws, b.ws], room, "qwixx"))
            clients.append(watchers[1])
            with bot("--url", a.ws, "--url", b.ws, "--game", "qwixx", "--room", room) as proc:
                await watchers[0].until_seq(committed_seq(r, room) + 10, timeout=60)
                assert b"playing" in r.hget("dh:lobby", room)

                host.go.clear()
                assert await asyncio.to_thread(a.terminate) == 0
                await eventually(
                    lambda: watchers[1].client.reconnects == 1 and watchers[1].client.connected,
                    "A's spectator watching again on B",
                )
                host.go.set()
                out, err = await asyncio.to_thread(proc.communicate, timeout=60)
                assert proc.returncode == 0, err
                [line] = [json.loads(text) for text in out.splitlines()]
                assert line["room"] == room and line["seed_verified"] is True

            await asyncio.gather(*(p.finish() for p in [host, *watchers]))
            assert lease_owner(r, room) not in (None, owner)
            log = committed_log(r, room)
            check_stream(host, log)
            check_stream(watchers[0], log)
            check_stream(watchers[1], log, spectator=True)
            assert host.client.reconnects == 1 and host.client.url == b.ws
            assert [x.mode for x in host.client.resumes] == ["events"]
            assert watchers[0].client.reconnects == 0
            goodbye = watchers[1].client.goodbye
            assert goodbye is not None and goodbye.code == 1001
            assert watchers[1].client.reconnects == 1 and watchers[1].client.url == b.ws


async def test_owners_killed_at_random_moments_lose_nothing_any_client_saw(
    redis_server: RedisServer, db: int
) -> None:
    """Three processes advertise their addresses; one game's owner is killed (SIGKILL) at
    random moments, again and again, each time started anew on its port. Each new owner
    loads the snapshot, runs the journal again and announces the open window again; the
    game ends, and every stream holds each committed message once, as committed: what a
    failover may lose (answers a window held, docs/protocol.md) was answered again."""
    url, r = redis_server.url_db(db), redis_server.client(db)
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    ports = [free_port() for _ in range(3)]
    lease = ("--lease-ms", "600")
    with contextlib.ExitStack() as stack:
        servers = {
            p: stack.enter_context(running_server("--redis", url, *lease, advertise=True, port=p))
            for p in ports
        }
        urls = [servers[p].ws for p in ports]
        # Qwinto: a roll, then every seat answers it in one window (answers held)
        room, players = await seat_players(
            lambda i: urls[i:] + urls[:i], "qwinto", 3, turn_window=10, think=0.1
        )
        watcher = await watch(urls[::-1], room, "qwinto")
        kills = 0
        async with closing([*players, watcher]):
            await players[0].client.start(room)
            while kills < 6 and not watcher.over():
                await watcher.until_seq(committed_seq(r, room) + 2)
                await asyncio.sleep(rng.uniform(0.0, 0.5))  # a random moment, on purpose
                owner = lease_owner(r, room)
                address = r.get(process_key(owner)) if owner else None
                if address is None or watcher.over():
                    continue  # between owners, or over
                port = int(address.decode().rsplit(":", 1)[1].split("/", 1)[0])
                servers[port].proc.kill()  # SIGKILL: no drain, no hand-over
                servers[port].proc.wait(10)
                kills += 1
                servers[port] = stack.enter_context(
                    running_server("--redis", url, *lease, advertise=True, port=port)
                )
            overs = await asyncio.gather(*(p.finish(120) for p in [*players, watcher]))
        assert kills >= 3, f"the game ended after {kills} kills (seed {seed})"
        assert len({o.seed for o in overs}) == 1
        log = committed_log(r, room)
        ends = {check_stream(p, log) for p in players}
        ends.add(check_stream(watcher, log, spectator=True))
        assert len(ends) == 1, f"seed {seed}"
