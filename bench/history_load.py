"""What keeping history costs a loaded server: `dicehall loadtest` (1,000 rooms of 4 bot
seats, about a roll per room per second, a new room as each game ends) against a fresh
`dicehall serve` with `--db none`, a SQLite file and PostgreSQL, alternating, in one run.

    python -m bench.history_load [--rooms 1000] [--duration 60] [--rounds 2]

Per run: fan-out p50/p99/max, the server process's CPU (what the rooms' loop pays:
the outbox file per finished game, nothing else) and per delivery, the games finished and
stored, and the history writer's CPU (its own process: the saves). The load generator
shares the machine's two cores with both.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from dicehall.clients.loadtest import progress_printer, run_loadtest
from tests.support.postgres import running_postgres
from tests.support.servers import ServerProcess, running_server

from .load_baseline import add_arguments, config

TICK = 100
"""Clock ticks per second of /proc's CPU times (Linux's USER_HZ)."""


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


def saved(server: ServerProcess) -> int:
    _, text = server.get("/metrics")
    for line in text.splitlines():
        if line.startswith("dicehall_history_saved_total "):
            return int(float(line.split()[1]))
    return 0


def one_run(kind: str, db: str, args: argparse.Namespace, data: Path) -> dict[str, Any]:
    say = progress_printer()
    with running_server("--db", db, env={"XDG_DATA_HOME": str(data)}) as server:
        writers = children(server.proc.pid)
        writer_cpu = sum(cpu_seconds(w) for w in writers)
        cfg = config(args, server.ws)
        cfg.server_pids = [server.proc.pid]
        say(f"== {kind}")
        report = run_loadtest(cfg, say)
        time.sleep(2)  # (the last games' saves: counted, not awaited by anything)
        stored = saved(server)
        writer_cpu = sum(cpu_seconds(w) for w in writers) - writer_cpu
    fan, srv = report["fanout_ms"], report["server"]
    return {
        "db": kind,
        "fanout_p50_ms": fan["p50"],
        "fanout_p99_ms": fan["p99"],
        "fanout_max_ms": fan["max"],
        "server_cpu_percent": srv["cpu_percent"],
        "cpu_us_per_delivery": srv["cpu_us_per_delivery"],
        "deliveries_per_s": report["deliveries_per_s"],
        "games_finished": report["games_finished"],
        "games_stored": stored,
        "writer_cpu_s": round(writer_cpu, 2),
        "errors": report["error_count"],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(p)
    p.add_argument("--rounds", type=int, default=2, help="alternations of the three (2)")
    p.add_argument("--out", help="JSON file for the rows")
    args = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, running_postgres() as pg:
        for r in range(args.rounds):
            for kind in ("none", "sqlite", "postgresql"):
                data = Path(tmp) / f"{kind}-{r}"
                db = {"none": "none", "sqlite": f"sqlite:///{data / 'history.db'}"}.get(kind)
                row = one_run(kind, db or pg.fresh_database(), args, data)
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
