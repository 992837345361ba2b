"""Failover soak: owners killed (`kill -9`) at random moments, many times, in each
durability mode, across the four games; every client's stream is held against the log.

    python -m bench.failover_soak [--kills 50] [--modes seen,behind] [--games ...] [--seed N]

Three `dicehall serve --redis` processes advertise their addresses (short leases); games
of three seats and a spectator run one after the other, the game cycling through the four
games. During each, the room's owner is killed at random moments, up to `--per-game`
times, and started anew on its port. At each game's end, every stream must be exactly the
room's log (`--durability seen`: nothing any client saw is lost), or, written behind,
exactly the log but for what the dead owner showed after its last written seq, which a
snapshot of the next epoch took back (docs/protocol.md, "Epochs"). For that mode the
report also says how much was taken back: messages per kill, and how long before the kill
the oldest of them reached a client (what a room made after its last completed write:
docs/protocol.md, "Epochs").
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import uvloop

from dicehall.server.backends.redis.keys import process_key
from tests.support.redis import (
    Player,
    RedisServer,
    check_rewound_stream,
    check_stream,
    closing,
    committed_log,
    free_redis_port,
    lease_owner,
    seat_players,
    written_seq,
)
from tests.support.servers import ServerProcess, free_port, running_server
from tests.support.wait import eventually

GAMES = ("qwinto", "qwixx", "qwirkle", "yamb")
LEASE = ("--lease-ms", "600")


@dataclass
class Tally:
    mode: str
    kills: int = 0
    games: int = 0
    lost: list[int] = field(default_factory=list)
    """Messages taken back, per kill (written behind)."""
    ages: list[float] = field(default_factory=list)
    """Per kill that took something back: seconds from the oldest such message's arrival
    at a client to the kill."""
    failures: list[str] = field(default_factory=list)


async def one_game(
    tally: Tally, game: str, redis: RedisServer, rng: random.Random, per_game: int
) -> None:
    db = redis.fresh_db()
    url, r = redis.url_db(db), redis.client(db)
    mode = ("--durability", tally.mode)
    ports = [free_port() for _ in range(3)]
    with contextlib.ExitStack() as stack:

        def start(port: int) -> ServerProcess:
            flags = ("--redis", url, *LEASE, *mode)
            return stack.enter_context(running_server(*flags, advertise=True, port=port))

        servers = {p: start(p) for p in ports}
        urls = [servers[p].ws for p in ports]
        room, players = await seat_players(
            lambda i: urls[i:] + urls[:i], game, 3, turn_window=10, think=0.05
        )
        watcher = Player(urls[::-1], "watcher", game)
        await watcher.connect()
        await watcher.join(room)
        everyone = [*players, watcher]
        began: dict[int, int] = {}
        kills: list[float] = []
        async with closing(everyone):
            await players[0].client.start(room)
            while len(kills) < per_game and not watcher.over():
                await watcher.until_seq(watcher.last_seq + 2, timeout=60)
                await asyncio.sleep(rng.uniform(0.0, 0.5))  # a random moment, on purpose
                owner = lease_owner(r, room)
                address = r.get(process_key(owner)) if owner else None
                if not isinstance(address, bytes) or watcher.over():
                    continue  # between owners, or over
                port = int(address.decode().rsplit(":", 1)[1].split("/", 1)[0])
                servers[port].proc.kill()
                servers[port].proc.wait(10)
                kills.append(time.monotonic())
                began[len(kills)] = written_seq(r, room)
                servers[port] = start(port)
            overs = await asyncio.gather(*(p.finish(180) for p in everyone))
            end = watcher.last_seq  # (written behind: the end reaches Redis a period later)
            await eventually(lambda: written_seq(r, room) >= end, "the end written", 30)
        tally.kills += len(kills)
        tally.games += 1
        assert len({o.seed for o in overs}) == 1, "two games"
        log = committed_log(r, room)
        if tally.mode == "seen":
            ends = {check_stream(p, log) for p in players}
            ends.add(check_stream(watcher, log, spectator=True))
            assert len(ends) == 1, f"streams end at {ends}"
            return
        lost: dict[int, list[tuple[int, float]]] = {}  # kill -> (seq, arrival)
        ends = set()
        for p in everyone:
            end, taken = check_rewound_stream(p, log, began, spectator=p is watcher)
            ends.add(end)
            for seen in taken:
                k = sum(1 for at in kills if at < seen.at) + 1  # the kill after it
                lost.setdefault(k, []).append((seen.message.seq, seen.at))
        assert len(ends) == 1, f"streams end at {ends}"
        for k, at in enumerate(kills, 1):
            back = lost.get(k, [])
            tally.lost.append(len({seq for seq, _ in back}))
            if back:
                tally.ages.append(at - min(arrival for _, arrival in back))


async def soak(mode: str, kills: int, per_game: int, seed: int, games: list[str]) -> Tally:
    tally = Tally(mode)
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="dicehall-soak-") as tmp:
        redis = RedisServer(free_redis_port(), Path(tmp), ())
        redis.start()
        try:
            while tally.kills < kills:
                game = games[tally.games % len(games)]
                try:
                    await one_game(tally, game, redis, rng, per_game)
                except (AssertionError, TimeoutError) as exc:
                    tally.failures.append(f"{game}: {exc!r}"[:300])
                    tally.games += 1
                print(f"{mode}: {tally.games} games, {tally.kills} kills", flush=True)
        finally:
            redis.stop()
    return tally


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--kills", type=int, default=50, help="kills per mode, at least")
    p.add_argument("--per-game", type=int, default=4, help="kills per game, at most")
    p.add_argument("--modes", default="seen,behind")
    p.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    p.add_argument("--games", default=",".join(GAMES), help="the games, in turn")
    a = p.parse_args(argv)
    print(f"seed {a.seed}")
    print("| mode | games | kills | failures | taken back per kill (max) | oldest taken back |")
    failed = False
    for mode in a.modes.split(","):
        t = uvloop.run(soak(mode, a.kills, a.per_game, a.seed, a.games.split(",")))
        back = f"{sum(t.lost) / max(1, len(t.lost)):.1f} ({max(t.lost, default=0)})"
        age = f"{max(t.ages) * 1000:.0f} ms before the kill" if t.ages else "-"
        if mode == "seen":
            back, age = "0 (nothing may be)", "-"
        print(
            f"| {mode} | {t.games} | {t.kills} | {len(t.failures)} | {back} | {age} |", flush=True
        )
        failed = failed or bool(t.failures)
        for failure in t.failures:
            print(f"  {mode}: {failure}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
