"""What storing a finished game costs: CPU and wall time per `HistoryStore.save`, SQLite and
PostgreSQL (a cluster started for the run), with real 4-seat Qwixx records.

    python -m bench.history_save [--games 400]

Also the part the room's process pays when a game ends: writing it to the outbox folder
(the writer process does the save). The CPU is this process's (`time.process_time`): for
SQLite it includes the database engine, which runs inside its client; for PostgreSQL only
the client side (SQLAlchemy, asyncpg), the server's work being in its own processes.
Players are drawn from a pool of 200, so ratings are read and moved as on a live ladder.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

from dicehall.rules import get_game
from dicehall.rules.play import play_out, random_chooser
from dicehall.rules.records import new_record
from dicehall.server.history.outbox import SpoolOutbox
from dicehall.server.history.store import FinishedGame, HistoryStore, SeatResult
from tests.support.postgres import running_postgres


def games(count: int, rng: random.Random) -> list[FinishedGame]:
    qwixx = get_game("qwixx")
    pool = [f"player{i:03}" for i in range(200)]
    out = []
    for i in range(count):
        state = qwixx.new_state(4, seed=rng.randbytes(16))
        names = rng.sample(pool, 4)
        record = new_record("qwixx", qwixx.resolve_options(), names, state)
        play_out(state, random_chooser(rng), record["log"])
        record["seed"] = "00" * 16
        seats = [SeatResult(s, names[s], names[s], score) for s, score in enumerate(state.scores())]
        out.append(FinishedGame(f"g{i}", "qwixx", "qwixx", i, record, seats))
    return out


async def measure(url: str, batch: list[FinishedGame], warm: int = 50) -> tuple[float, float]:
    store = await HistoryStore.open(url)
    try:
        for game in batch[:warm]:
            await store.save(game)
        wall, cpu = time.perf_counter(), time.process_time()
        for game in batch[warm:]:
            await store.save(game)
        n = len(batch) - warm
        return (time.process_time() - cpu) / n, (time.perf_counter() - wall) / n
    finally:
        await store.close()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=400)
    args = parser.parse_args()
    batch = games(args.games, random.Random(1))
    size = sum(len(str(g.record)) for g in batch) / len(batch)
    print(f"{args.games} games of 4-seat Qwixx (records ~{size / 1024:.1f} KiB)")
    with tempfile.TemporaryDirectory() as tmp:
        outbox = SpoolOutbox(Path(tmp) / "pending")
        cpu = time.process_time()
        for game in batch:
            outbox.put(game)
        each = (time.process_time() - cpu) / len(batch)
        print(f"outbox     {each * 1e3:.3f} ms CPU per game (the room's process: one file)")
        cpu, wall = await measure(f"sqlite:///{Path(tmp) / 'history.db'}", batch)
        print(f"sqlite     {cpu * 1e3:.2f} ms CPU, {wall * 1e3:.2f} ms wall per save")
    with running_postgres() as pg:
        cpu, wall = await measure(pg.fresh_database(), batch)
        print(f"postgresql {cpu * 1e3:.2f} ms CPU, {wall * 1e3:.2f} ms wall per save")


if __name__ == "__main__":
    asyncio.run(main())
