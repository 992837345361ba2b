"""How many rooms one dicehall process holds: raise the rooms until fan-out p99 > 100 ms.

Each step is a fresh `dicehall serve` process and a full `dicehall loadtest` (same
options as bench/load_baseline.py); the ladder stops at the first step whose p99 fan-out
latency passes the limit, or that saw an error. The load generator shares the machine.

    python -m bench.load_ceiling --steps 1000,1500,2000,2500,3000 --duration 30
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from dicehall.clients.loadtest import progress_printer, run_loadtest

from .load_baseline import add_arguments, config, server


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(p)
    p.add_argument("--steps", default="1000,1500,2000,2500,3000,4000", help="room counts")
    p.add_argument("--limit-ms", type=float, default=100.0, help="p99 fan-out limit (100)")
    p.add_argument("--out", help="JSON file for the table")
    args = p.parse_args()
    say = progress_printer()
    rows: list[dict[str, Any]] = []
    for rooms in [int(x) for x in args.steps.split(",")]:
        args.rooms = rooms
        with server("dicehall") as url:
            say(f"== {rooms} rooms")
            report = run_loadtest(config(args, url), say)
        fan = report["fanout_ms"]
        srv = report["server"]
        row = {
            "rooms": rooms,
            "connections": report["connections"]["connected"],
            "deliveries_per_s": report["deliveries_per_s"],
            "rolls_per_room_s": report["rolls_per_room_s"],
            "fanout_p50_ms": fan["p50"],
            "fanout_p99_ms": fan["p99"],
            "fanout_max_ms": fan["max"],
            "act_p99_ms": report["requests_ms"]["act"]["p99"],
            "server_cpu_percent": srv["cpu_percent"],
            "server_wait_percent": srv["cpu_wait_percent"],
            "cpu_us_per_delivery": srv["cpu_us_per_delivery"],
            "rss_mib": round((srv["rss_bytes"]["active"] or 0) / 2**20, 1),
            "errors": report["error_count"],
            "loadgen_cpu_s": report["loadgen"]["cpu_seconds"],
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
        if fan["p99"] > args.limit_ms or report["error_count"]:
            break
    passing = [r["rooms"] for r in rows if r["fanout_p99_ms"] <= args.limit_ms and not r["errors"]]
    result = {"limit_ms": args.limit_ms, "ceiling_rooms": max(passing, default=None), "steps": rows}
    print(json.dumps({"ceiling_rooms": result["ceiling_rooms"]}))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
