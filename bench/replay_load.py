"""What a replay costs the players: seated players' round trips on a real `dicehall serve`
while other clients hammer `GET /api/games/{id}/replay`.

    python -m bench.replay_load [--games 40] [--game yamb] [--seats 2] [--seconds 20]
                                [--hammers 4] [--players 4]

The server's SQLite history is filled with real games first (randomly played; a 2-seat
Yamb game's replay to its end costs about 25 ms of CPU, a 4-seat Qwixx game's 1.4 ms).
Then `--players` clients each sit in a room of their own (against a house bot, 1-hour
turns, so that the room waits) and ask `legal` for their seat 15 times a second (within
the rate limit); at the same time `--hammers` processes, each on one keep-alive
connection, ask back to back, in one of three ways:

- `same`: one game's last step, over and over (what the issue saw; a cache answers it);
- `varied`: a random step of a random game each time (a cache seldom helps: every answer
  is a replay to compute);
- `ladders`: `GET /api/leaderboards` (no database, no replay) for reference: what any
  request costs the loop at the rate the hammers make it.

Printed per way: the players' round trips (p50, p99, max, from every player's samples),
the requests answered per second, and the server process's CPU over the run. A run without
hammers comes first (`idle`).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import multiprocessing
import random
import tempfile
import time
from pathlib import Path

from dicehall.clients.client import Client
from dicehall.rules import get_game
from dicehall.rules.play import play_out, random_chooser
from dicehall.rules.records import new_record
from dicehall.server.history.store import FinishedGame, HistoryStore, SeatResult
from tests.support.servers import running_server

from .history_load import cpu_seconds

PACE = 1 / 15
"""Seconds between a player's requests: 15 a second, inside the 20 a second limit."""


async def fill(url: str, count: int, name: str, seats: int) -> list[str]:
    rng = random.Random(7)
    rules = get_game(name)
    store = await HistoryStore.open(url)
    ids = []
    try:
        for i in range(count):
            seed = rng.randbytes(16)
            state = rules.new_state(seats, seed=seed)
            names = [f"p{i}-{s}" for s in range(seats)]
            record = new_record(name, rules.resolve_options(), names, state)
            play_out(state, random_chooser(rng), record["log"])
            record["seed"] = seed.hex()
            results = [
                SeatResult(s, n, None, score)
                for s, (n, score) in enumerate(zip(names, state.scores(), strict=True))
            ]
            await store.save(FinishedGame(f"g{i}", name, name, i, record, results))
            ids.append(f"g{i}")
    finally:
        await store.close()
    return ids


def hammer(port: int, ids: list[str], way: str, seconds: float, seed: int, out: object) -> None:
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    done, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        if way == "same":
            path = f"/api/games/{ids[0]}/replay"
        elif way == "ladders":
            path = "/api/leaderboards"
        else:
            path = f"/api/games/{rng.choice(ids)}/replay?step={rng.randrange(2000)}"
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        assert response.status == 200, (path, response.status)
        done += 1
    conn.close()
    out.put(done)  # type: ignore[attr-defined]


async def player(url: str, seconds: float, samples: list[float]) -> None:
    async with Client(url, name="Ada") as client:
        room = (await client.create("qwixx", 2, turn_window=3600)).room
        await client.join(room)
        await client.add_bots(room, "random")
        await client.start(room)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            began = time.perf_counter()
            await client.legal(room)
            samples.append(time.perf_counter() - began)
            await asyncio.sleep(max(0.0, PACE - (time.perf_counter() - began)))


def run(port: int, ws: str, pid: int, ids: list[str], way: str, args: argparse.Namespace) -> str:
    spawn = multiprocessing.get_context("spawn")
    counts = spawn.Queue()
    hammers = [
        spawn.Process(target=hammer, args=(port, ids, way, args.seconds, k, counts))
        for k in range(args.hammers if way != "idle" else 0)
    ]
    cpu = cpu_seconds(pid)
    for proc in hammers:
        proc.start()
    samples: list[float] = []

    async def players() -> None:
        await asyncio.gather(*(player(ws, args.seconds, samples) for _ in range(args.players)))

    asyncio.run(players())
    replays = sum(counts.get() for _ in hammers)
    for proc in hammers:
        proc.join()
    cpu = cpu_seconds(pid) - cpu
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return (
        f"  {way:<7} round trip p50 {ordered[len(ordered) // 2] * 1e3:6.2f} ms"
        f"  p99 {p99 * 1e3:6.2f} ms  max {ordered[-1] * 1e3:6.2f} ms ({len(ordered)} samples)"
        f"   requests {replays / args.seconds:6.1f}/s   server CPU {cpu:5.1f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--game", default="yamb")
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--hammers", type=int, default=4)
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'history.db'}"
        ids = asyncio.run(fill(url, args.games, args.game, args.seats))
        with running_server("--db", url, env={"XDG_DATA_HOME": tmp}) as server:
            for way in ("idle", "same", "varied", "ladders"):
                print(run(server.port, server.ws, server.proc.pid, ids, way, args), flush=True)


if __name__ == "__main__":
    main()
