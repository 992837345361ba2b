"""How fast the history's pages answer with a big history: a leaderboard page of 50, a
player's page of games and a player's ratings (with ranks), from a real `dicehall serve`
over HTTP, with 100,000 stored games of 4-seat Qwixx among 5,000 players, on SQLite and
on PostgreSQL (a cluster started for the run).

    python -m bench.history_board [--games 100000] [--players 5000] [--requests 2000]

Filling goes through `HistoryStore.save` (the writer's own path: ratings move game by
game), with real records (a few hundred played games, reused). Then each page is asked
`--requests` times, one after another on one keep-alive connection, at random offsets
and players; the latencies are wall times at the client.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import random
import statistics
import tempfile
import time
from pathlib import Path

from bench.history_save import games as played_games
from dicehall.server.history.store import FinishedGame, HistoryStore, SeatResult
from tests.support.postgres import running_postgres
from tests.support.servers import running_server


async def fill(url: str, count: int, players: int, rng: random.Random, writers: int) -> float:
    records = [g.record for g in played_games(200, rng)]
    pool = [f"p{i:05}" for i in range(players)]
    store = await HistoryStore.open(url)
    began = time.perf_counter()
    try:
        batch: list[FinishedGame] = []
        for k in range(count):
            seated = rng.sample(pool, 4)
            record = records[k % len(records)]
            seats = [
                SeatResult(i, f"name{p}", p, rng.randint(-10, 120)) for i, p in enumerate(seated)
            ]
            batch.append(FinishedGame(f"g{k:06}", "qwixx", "qwixx", k, record, seats))
            if len(batch) == writers:
                await asyncio.gather(*(store.save(g) for g in batch))
                batch = []
        await asyncio.gather(*(store.save(g) for g in batch))
    finally:
        await store.close()
    return time.perf_counter() - began


def timings(port: int, paths: list[str]) -> list[float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    out = []
    try:
        for path in paths:
            began = time.perf_counter()
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            out.append(time.perf_counter() - began)
            assert response.status == 200, (path, response.status)
    finally:
        conn.close()
    return out


def line(label: str, seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return (
        f"  {label:<34} p50 {statistics.median(ordered) * 1e3:6.2f} ms"
        f"   p99 {p99 * 1e3:6.2f} ms   max {ordered[-1] * 1e3:6.2f} ms"
    )


def measure(name: str, url: str, args: argparse.Namespace, data: Path) -> None:
    rng = random.Random(2)
    # PostgreSQL: a few writers at once, as several processes' would be; SQLite has one
    # writer at a time (more would only queue on its lock).
    writers = 1 if url.startswith("sqlite") else 8
    took = asyncio.run(fill(url, args.games, args.players, rng, writers))
    print(f"{name}: {args.games} games among {args.players} players stored in {took:.0f} s")
    with running_server("--db", url, env={"XDG_DATA_HOME": str(data)}) as server:
        n = args.requests
        boards = [
            f"/api/leaderboards/qwixx?offset={rng.randrange(args.players - 50)}" for _ in range(n)
        ]
        who = [f"p{rng.randrange(args.players):05}" for _ in range(n)]
        timings(server.port, boards[:50])  # (warm: connections, caches)
        print(line("leaderboard page of 50", timings(server.port, boards)))
        print(
            line(
                "a player's games, page of 20",
                timings(server.port, [f"/api/players/{p}/games" for p in who]),
            )
        )
        print(
            line(
                "a player with rank on each ladder",
                timings(server.port, [f"/api/players/{p}" for p in who]),
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--players", type=int, default=5_000)
    parser.add_argument("--requests", type=int, default=2_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        measure("sqlite", f"sqlite:///{Path(tmp) / 'history.db'}", args, Path(tmp) / "data-a")
        with running_postgres() as pg:
            measure("postgresql", pg.fresh_database(), args, Path(tmp) / "data-b")


if __name__ == "__main__":
    main()
