"""Redis across a delayed link: bench.redis_load and bench.redis_hop with redis-server a
data centre's hop away instead of on loopback (issue 35).

    python -m bench.redis_delayed [--rooms 300] [--duration 20] [--warmup 5]
                                  [--delay-ms 0.5] [--durability seen,behind]
                                  [--hop-rooms 8] [--hop-seconds 10] [--json FILE]

redis-server runs in a network namespace of its own behind a veth pair, `--delay-ms` away
each way: `tc netem` on the pair when the kernel has it, else a delaying relay inside the
namespace (bench/delayed_link.py, which makes the link and tears it down). The output
says which, and the PING round trip measured across the link and across the bare pair;
with the relay, also how late it sent chunks during each Redis run (its own queueing on a
busy machine, which an idle PING does not show).

Then, as bench.redis_load does, the same `dicehall loadtest` (Qwixx, 4 seats, about a roll
a second per room, `--rooms` rooms) against (a) one memory `dicehall serve` and (b) two
`dicehall serve --redis` processes that advertise their addresses, each seat following its
room to the process that runs it: server CPU per delivered message (with Redis's added;
the relay's CPU is the network's and is not counted), fan-out and act p50/p99. (b) runs
once per `--durability` value given (each passed to `dicehall serve --durability`; none
given: the server's default, and the flag is not passed).

Last, bench.redis_hop's light load (`--hop-rooms` rooms, seats alternating between the two
processes, so half of every room's commands and messages cross Redis): the latency from a
window's last answer to each seat's `window_closed`, p50/p95/p99, and the p50 at the seats
on the room's process and on the other one. `--hop-seconds 0` leaves it out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.delayed_link import DelayedRedis, exit_on_sigterm, redis_behind_delay
from bench.processes import dicehall_server
from bench.redis_hop import measure
from bench.redis_hop_report import report
from bench.redis_load import figures, load

AOF = ("--appendonly", "yes", "--appendfsync", "everysec")
"""As deploy/compose.yaml runs Redis (and bench.processes.redis_server)."""


def durability_supported() -> bool:
    cmd = [sys.executable, "-m", "dicehall.clients.cli", "serve", "--help"]
    return "--durability" in subprocess.run(cmd, capture_output=True, text=True).stdout


@contextlib.contextmanager
def redis_pair(
    redis: DelayedRedis, db: int, mode: str | None, advertise: bool
) -> Iterator[tuple[list[str], dict[str, int]]]:
    """Two `dicehall serve --redis` on database `db`; their URLs and pids."""
    extra = ("--durability", mode) if mode else ()
    url = redis.url_db(db)
    with (
        dicehall_server("--redis", url, *extra, advertise=advertise) as (a, pid_a),
        dicehall_server("--redis", url, *extra, advertise=advertise) as (b, pid_b),
    ):
        yield [a, b], {"dicehall-a": pid_a, "dicehall-b": pid_b}


def hop(args: argparse.Namespace, name: str, urls: list[str], pids: dict[str, int]) -> Any:
    return asyncio.run(
        measure(name, urls, pids, args.hop_rooms, 4, "qwixx", 0.1, 5.0, args.hop_seconds, True)
    )


def run(args: argparse.Namespace, redis: DelayedRedis) -> dict[str, Any]:
    modes: list[str | None] = list(args.durability.split(",")) if args.durability else [None]
    out: dict[str, Any] = {"load": {}, "hop": {}, "relay_lateness_us": {}}
    with dicehall_server() as (url, _):
        out["load"]["memory"] = figures(load(args, [url], args.rooms)[0])
    if args.hop_seconds > 0:
        with dicehall_server() as (url, pid):
            memory_hop = hop(args, "memory", [url], {"dicehall": pid})
    for db, mode in enumerate(modes, start=1):
        name = f"redis {mode or 'default'}"
        with redis_pair(redis, db, mode, advertise=True) as (urls, _):
            redis.relay_lateness()  # (from now on)
            report_, redis_cpu = load(args, urls, args.rooms, redis.pid)
            out["load"][name] = figures(report_, redis_cpu)
            out["relay_lateness_us"][name] = redis.relay_lateness()
        if args.hop_seconds > 0:
            with redis_pair(redis, db + len(modes), mode, advertise=False) as (urls, pids):
                far = hop(args, "redis", urls, {**pids, "redis": redis.pid})
            _, both, _ = report(memory_hop, far, "seats")
            out["hop"].setdefault("memory", both["memory"])
            out["hop"][name] = both["redis"]
    return out


def tables(args: argparse.Namespace, out: dict[str, Any]) -> str:
    lines = [
        f"{args.rooms} rooms of Qwixx, 4 seats, seats following their rooms; "
        f"{args.duration:g} s measured after {args.warmup:g} s",
        "",
        "| backend | delivered/s | fan-out p50 / p99 (ms) | act p50 / p99 (ms) "
        "| µs per delivery | incl. Redis | errors |",
        "|---|---:|---|---|---:|---:|---:|",
    ]
    for name, f in out["load"].items():
        lines.append(
            f"| {name} | {f['deliveries_per_s']:,} "
            f"| {f['fanout_p50_ms']:.2f} / {f['fanout_p99_ms']:.2f} "
            f"| {f['act_p50_ms']:.2f} / {f['act_p99_ms']:.2f} "
            f"| {f['us_per_delivery']:.1f} | {f['us_per_delivery_with_redis']:.1f} "
            f"| {f['errors']} |"
        )
    for name, late in out["relay_lateness_us"].items():
        if late is not None:
            lines.append(
                f"\n{name}: the relay sent {late['n']:.0f} chunks, late by p50 "
                f"{late['p50']:.0f} µs, p99 {late['p99']:.0f} µs, max {late['max']:.0f} µs "
                "(whole run, warm-up included)"
            )
    if out["hop"]:
        lines += [
            "",
            f"Hop: {args.hop_rooms} rooms x 4 seats alternating between the processes, "
            f"think 100 ms, {args.hop_seconds:g} s; last answer to `window_closed`",
            "",
            "| backend | windows | p50 / p95 / p99 (ms) | p50 owner's / other process (ms) |",
            "|---|---:|---|---|",
        ]
        for name, h in out["hop"].items():
            far = f"{h['far_p50_ms']:.2f}" if h["far_p50_ms"] is not None else "-"
            lines.append(
                f"| {name} | {h['windows_timed']} "
                f"| {h['p50_ms']:.2f} / {h['p95_ms']:.2f} / {h['p99_ms']:.2f} "
                f"| {h['near_p50_ms']:.2f} / {far} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--rooms", type=int, default=300)
    p.add_argument("--duration", type=float, default=20.0)
    p.add_argument("--warmup", type=float, default=5.0)
    p.add_argument("--delay-ms", type=float, default=0.5, help="each way (default 0.5)")
    p.add_argument(
        "--durability",
        help="comma-separated values of `dicehall serve --durability` to compare "
        "(default: not passed, the server's default)",
    )
    p.add_argument("--hop-rooms", type=int, default=8)
    p.add_argument("--hop-seconds", type=float, default=10.0, help="0: no hop latency")
    p.add_argument("--json", help="also write the figures here")
    args = p.parse_args(argv)
    args.follow = True  # (bench.redis_load's load: seats follow their rooms)
    if args.durability and not durability_supported():
        p.error("this `dicehall serve` has no --durability yet")
    exit_on_sigterm()
    with (
        tempfile.TemporaryDirectory(prefix="dicehall-bench-") as tmp,
        redis_behind_delay(Path(tmp), args.delay_ms, *AOF) as redis,
    ):
        print(redis.summary(), flush=True)
        out = run(args, redis)
        out["link"] = {
            "method": redis.method,
            "delay_ms": args.delay_ms,
            "rtt_ms": redis.rtt_ms,
            "bare_rtt_ms": redis.bare_rtt_ms,
            "added_one_way_ms": redis.added_rtt_ms / 2,
        }
    print(tables(args, out), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
