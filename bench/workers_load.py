"""Rooms held at fan-out p99 <= 50 ms by 1 and by N worker processes on this machine.

    python -m bench.workers_load [--workers 1,2] [--steps 600,800,1000,1200] [--duration 20]
        [--durability seen|behind]

One worker is the embedded `dicehall serve` (no Redis: one process's best). N > 1 is
`dicehall serve --workers N --redis URL` with a fresh redis-server: the load test connects
to the shared port and follows each room to the worker that owns it, as a client of that
deployment would. The load generator, the workers and Redis all share this machine's cores
(the figure is for that: see docs/benchmarks/journal.md, "One worker and two on this
machine", on what a machine without the load generator on it would give). Per step, a fresh
deployment; the ladder of a worker count stops at the first step whose p99 passes
`--limit-ms` or that saw an error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.history_load import children
from bench.processes import cpu_seconds, redis_server, stop
from dicehall.clients.loadtest import LoadConfig, progress_printer, run_loadtest
from tests.support.servers import ROOT, free_port


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
            return bool(r.status == 200)
    except OSError:
        return False


@contextlib.contextmanager
def deployment(
    workers: int, durability: str = "seen"
) -> Iterator[tuple[str, list[int], int | None]]:
    """The deployment's shared URL, the pids that serve rooms, and redis-server's pid."""
    with contextlib.ExitStack() as stack:
        port = free_port()
        cmd = [sys.executable, "-m", "dicehall.clients.cli", "serve", "--port", str(port)]
        cmd += ["--db", "none", "--log-level", "warning"]
        redis_pid = None
        ports = [port]
        if workers > 1:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            url, redis_pid = stack.enter_context(redis_server(tmp))
            first = free_port()
            cmd += ["--workers", str(workers), "--redis", url, "--worker-ports", str(first)]
            cmd += ["--durability", durability]
            ports += [first + i for i in range(workers)]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not all(_answers(p) for p in ports):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the deployment did not start ({proc.returncode})")
                time.sleep(0.2)
            pids = children(proc.pid) if workers > 1 else [proc.pid]
            yield f"ws://127.0.0.1:{port}/ws", pids, redis_pid
        finally:
            stop(proc, 40)


def step(args: argparse.Namespace, workers: int, rooms: int) -> dict[str, Any]:
    say = progress_printer()
    with deployment(workers, args.durability) as (url, pids, redis_pid):
        cfg = LoadConfig(
            urls=[url],
            rooms=rooms,
            seats=4,
            game="qwixx",
            duration=args.duration,
            warmup=args.warmup,
            server_pids=pids,
        )
        redis_before = cpu_seconds(redis_pid) if redis_pid else 0.0
        say(f"== {workers} worker(s), {rooms} rooms")
        report = run_loadtest(cfg, say)
        redis_cpu = cpu_seconds(redis_pid) - redis_before if redis_pid else 0.0
    server = report["server"]
    return {
        "workers": workers,
        "rooms": rooms,
        "rolls_per_room_s": report["rolls_per_room_s"],
        "deliveries_per_s": round(report["deliveries_per_s"]),
        "fanout_p50_ms": report["fanout_ms"]["p50"],
        "fanout_p99_ms": report["fanout_ms"]["p99"],
        "act_p99_ms": report["requests_ms"]["act"]["p99"],
        "workers_cpu_percent": server["cpu_percent"],
        "us_per_delivery": server["cpu_us_per_delivery"],
        "redis_cpu_s": round(redis_cpu, 1),
        "loadgen_cpu_s": round(report["loadgen"]["cpu_seconds"], 1),
        "errors": report["error_count"],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", default="1,2", help="worker counts")
    p.add_argument("--steps", default="600,800,1000,1200", help="room counts")
    p.add_argument("--duration", type=float, default=20.0)
    p.add_argument("--warmup", type=float, default=5.0)
    p.add_argument("--limit-ms", type=float, default=50.0)
    p.add_argument("--json", help="also write the rows here")
    p.add_argument("--durability", default="seen", help="the workers' --durability (N > 1)")
    args = p.parse_args()
    rows: list[dict[str, Any]] = []
    held: dict[int, int] = {}
    for workers in (int(w) for w in args.workers.split(",")):
        for rooms in (int(r) for r in args.steps.split(",")):
            row = step(args, workers, rooms)
            rows.append(row)
            print(json.dumps(row), flush=True)
            if row["errors"] or row["fanout_p99_ms"] > args.limit_ms:
                break
            held[workers] = rooms
    print(json.dumps({"rooms_held_at_limit": held, "limit_ms": args.limit_ms}))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
