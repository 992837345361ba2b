"""The Redis hop under `dicehall loadtest`: many rooms, memory against two Redis processes.

    python -m bench.redis_load [--rooms 100,250] [--duration 20] [--warmup 5] [--json FILE]
        [--durability seen,behind] [--per-process] [--no-follow]

For each number of rooms, one after the other with the same load (`dicehall loadtest`,
Qwixx, 4 seats, a roll about every second per room, policy `legal`):

(a) memory: one fresh `dicehall serve`, every seat on it;
(b) redis: a fresh redis-server (append-only file, fsync every second, as
    deploy/compose.yaml runs it) and two fresh `dicehall serve --redis` processes that
    advertise their addresses (`--public-url`). The load tester puts seat i of every table
    on process i mod 2 and then follows each new room to its owner, so every seat plays
    on the process that runs its room and Redis carries the commits (the normal case).
    With `--no-follow` the processes advertise nothing and the seats stay split: half of
    every room's commands and messages cross Redis (clients that cannot follow).

Reported per step and backend: server CPU per delivered room message (utime+stime of the
server processes from /proc over the measured span, divided by the messages delivered;
with redis-server's CPU added for (b)), fan-out p50/p99, act request p50/p99, errors. The
ratio (b)/(a) is issue 6's "CPU per delivered event" figure at that load (bench.redis_hop
gives it at a light load with its own clients and latency probe). (b) runs once per
`--durability` given. With `--per-process` the memory process runs half the rooms, as
many as each process of the pair: a process's CPU per delivery falls as its load rises
(more of the work of each wake-up is shared), so at the same total load the pair pays
for running two half-loaded processes as well as for Redis.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
from pathlib import Path
from typing import Any

from bench.processes import cpu_seconds, dicehall_server, redis_server
from dicehall.clients.loadtest import LoadConfig, run_loadtest


def load(
    args: argparse.Namespace, urls: list[str], rooms: int, redis_pid: int | None = None
) -> tuple[dict[str, Any], float]:
    """The load test's report, and redis-server's CPU seconds over its measured span (read
    when the progress line of the span's first and last second comes)."""
    cfg = LoadConfig(
        urls=urls,
        rooms=rooms,
        seats=4,
        game="qwixx",
        duration=args.duration,
        warmup=args.warmup,
        follow=args.follow,
    )
    marks: dict[str, float] = {}

    def progress(line: str) -> None:
        if redis_pid is None or not line.startswith("t="):
            return
        t = float(line[2:].split("s", 1)[0])
        if t >= args.warmup and "start" not in marks:
            marks["start"] = cpu_seconds(redis_pid)
        if t >= args.warmup + args.duration and "end" not in marks:
            marks["end"] = cpu_seconds(redis_pid)

    report: dict[str, Any] = run_loadtest(cfg, progress)
    return report, marks.get("end", 0.0) - marks.get("start", 0.0)


def figures(report: dict[str, Any], extra_cpu: float = 0.0) -> dict[str, Any]:
    server = report["server"]
    delivered = report["deliveries_per_s"] * report["span"]["seconds"]
    return {
        "rolls_per_room_s": report["rolls_per_room_s"],
        "deliveries_per_s": round(report["deliveries_per_s"]),
        "fanout_p50_ms": report["fanout_ms"]["p50"],
        "fanout_p99_ms": report["fanout_ms"]["p99"],
        "act_p50_ms": report["requests_ms"]["act"]["p50"],
        "act_p99_ms": report["requests_ms"]["act"]["p99"],
        "server_cpu_percent": server["cpu_percent"],
        "us_per_delivery": server["cpu_us_per_delivery"],
        "us_per_delivery_with_redis": round(
            (server["cpu_seconds"] + extra_cpu) / delivered * 1e6, 2
        ),
        "errors": report["error_count"],
        "moves": report.get("moves", 0),
    }


def step(args: argparse.Namespace, rooms: int) -> dict[str, Any]:
    """One memory process, then the pair in each `--durability`, one after the other."""
    alone = rooms // 2 if args.per_process else rooms
    with dicehall_server() as (url, _):
        memory = figures(load(args, [url], alone)[0])
    result: dict[str, Any] = {"rooms": rooms, "memory_rooms": alone, "memory": memory}
    for mode in args.durability.split(","):
        with contextlib.ExitStack() as stack:
            tmp = stack.enter_context(tempfile.TemporaryDirectory())
            redis_url, rpid = stack.enter_context(redis_server(Path(tmp)))
            flags = ("--redis", redis_url, "--durability", mode)
            a, _ = stack.enter_context(dicehall_server(*flags, advertise=args.follow))
            b, _ = stack.enter_context(dicehall_server(*flags, advertise=args.follow))
            report, redis_cpu = load(args, [a, b], rooms, rpid)
            redis = figures(report, redis_cpu)
        redis["cpu_ratio"] = round(redis["us_per_delivery"] / memory["us_per_delivery"], 2)
        redis["cpu_ratio_with_redis"] = round(
            redis["us_per_delivery_with_redis"] / memory["us_per_delivery"], 2
        )
        result[f"redis {mode}"] = redis
    return result


def row(rooms: int, name: str, f: dict[str, Any]) -> str:
    ratio = ""
    if "cpu_ratio" in f:
        ratio = f" (x{f['cpu_ratio']:.2f})"
    return (
        f"| {rooms} | {name} | {f['rolls_per_room_s']:.2f} | {f['deliveries_per_s']:,} "
        f"| {f['fanout_p50_ms']:.2f} / {f['fanout_p99_ms']:.2f} "
        f"| {f['act_p50_ms']:.2f} / {f['act_p99_ms']:.2f} "
        f"| {f['server_cpu_percent']:.1f} % | {f['us_per_delivery']:.1f}{ratio} "
        f"| {f['us_per_delivery_with_redis']:.1f}"
        + (f" (x{f['cpu_ratio_with_redis']:.2f})" if ratio else "")
        + f" | {f['errors']} |"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--rooms", default="100,250", help="comma-separated room counts")
    p.add_argument("--duration", type=float, default=20.0)
    p.add_argument("--warmup", type=float, default=5.0)
    p.add_argument("--json", help="also write the figures here")
    p.add_argument(
        "--no-follow",
        dest="follow",
        action="store_false",
        help="seats stay on the process they connected to (forwarding over Redis)",
    )
    p.add_argument(
        "--durability",
        default="seen",
        help="the Redis-backed processes' --durability: seen, behind, or both (seen,behind)",
    )
    p.add_argument(
        "--per-process",
        action="store_true",
        help="the memory process runs half the rooms: as many as each of the pair",
    )
    args = p.parse_args(argv)
    if not set(args.durability.split(",")) <= {"seen", "behind"}:
        p.error("--durability: seen, behind, or both")
    results = []
    print(
        "| rooms | backend | rolls/room/s | delivered/s | fan-out p50 / p99 (ms) "
        "| act p50 / p99 (ms) | server CPU | µs per delivery (ratio) | incl. Redis | errors |"
    )
    print("|---:|---|---:|---:|---|---|---:|---:|---:|---:|")
    for rooms in (int(n) for n in args.rooms.split(",")):
        result = step(args, rooms)
        results.append(result)
        print(row(result["memory_rooms"], "memory", result["memory"]), flush=True)
        for mode in args.durability.split(","):
            print(row(rooms, f"redis {mode}", result[f"redis {mode}"]), flush=True)
    if args.json:
        with contextlib.suppress(OSError):
            Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
