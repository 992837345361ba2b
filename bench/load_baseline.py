"""dicehall against the bare broadcast baseline, in one run, with the same load generator.

1. A fresh `dicehall serve` process; `dicehall loadtest` plays N rooms x M seats on it.
2. A fresh `bench.broadcast_baseline` process told to send what dicehall delivered: the
   same number of messages per room and second, of the same mean size, to the same
   number of connections; the same load test (same code, same sockets) measures it.
3. The figure of merit: room messages delivered per server CPU-second, dicehall's as a
   ratio of the baseline's (CPU from /proc, so the load generator sharing the machine
   does not count; docs/benchmarks.md, "Load").

    python -m bench.load_baseline --rooms 1000 --duration 60 --out docs/benchmarks/load-1000
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dicehall.clients.loadtest import (
    LoadConfig,
    format_table,
    progress_printer,
    run_loadtest,
    write_outputs,
)
from dicehall.clients.loadtest.config import POLICIES
from dicehall.server.compiled import MODULES

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_listening(proc: subprocess.Popen[bytes], port: int, health: bool) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if health:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                    return
            else:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


def _compiled(port: int) -> str:
    """What the server's /metrics says it runs compiled (a compiled build's figures are
    told apart by it: docs/operations.md, "A compiled build")."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    found = re.search(r"^dicehall_compiled_modules (\S+)$", text, re.M)
    n = int(float(found.group(1))) if found else 0
    return f"{n} of {len(MODULES)} hot modules compiled (mypyc)"


@contextlib.contextmanager
def server(kind: str, **options: Any) -> Iterator[str]:
    """A fresh server process on a free port ("dicehall" or "baseline"); yields its URL."""
    port = free_port()
    if kind == "dicehall":
        cmd = [sys.executable, "-m", "dicehall.clients.cli", "serve", "--port", str(port)]
        # (the rooms' server alone: what keeping history adds is bench/history_load.py's)
        cmd += ["--log-level", "warning", "--db", "none"]
    else:
        cmd = [sys.executable, "-m", "bench.broadcast_baseline", "--port", str(port)]
        for key, value in options.items():
            cmd += [f"--{key}", str(value)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        _wait_listening(proc, port, health=kind == "dicehall")
        if kind == "dicehall":
            print(f"dicehall server: {_compiled(port)}", flush=True)
        yield f"ws://127.0.0.1:{port}/ws"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def config(args: argparse.Namespace, url: str) -> LoadConfig:
    return LoadConfig(
        urls=[url],
        rooms=args.rooms,
        seats=args.seats,
        game=args.game,
        duration=args.duration,
        warmup=args.warmup,
        think=args.think,
        policy=args.policy,
        procs=args.procs,
        encoding=args.encoding,
        turn_window=args.turn_window,
    )


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rooms", type=int, default=1000)
    p.add_argument("--seats", type=int, default=4)
    p.add_argument("--game", default="qwixx")
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--warmup", type=float, default=5.0)
    p.add_argument("--think", type=float, default=0.75)
    p.add_argument("--policy", choices=POLICIES, default="window")
    p.add_argument("--procs", type=int, default=1)
    p.add_argument("--encoding", choices=["msgpack", "json"], default="msgpack")
    p.add_argument("--turn-window", type=int, default=10)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(p)
    p.add_argument("--out", help="path prefix: writes PREFIX.json, PREFIX-{dicehall,baseline}.png")
    args = p.parse_args()
    say = progress_printer()
    with server("dicehall") as url:
        say(f"== dicehall {url}")
        ours = run_loadtest(config(args, url), say)
    print(format_table(ours), flush=True)
    conns = args.rooms * args.seats
    rate = ours["deliveries_per_s"] / conns
    size = round(ours["bytes_per_delivery"])
    with server("baseline", rate=round(rate, 3), size=size) as url:
        say(f"== baseline {url}: {rate:.2f} messages/s per room, {size} bytes")
        base = run_loadtest(config(args, url), say)
    print(format_table(base), flush=True)
    a = ours["server"]["deliveries_per_cpu_s"]
    b = base["server"]["deliveries_per_cpu_s"]
    ratio = a / b if a and b else None
    summary = {
        "dicehall_deliveries_per_cpu_s": a,
        "baseline_deliveries_per_cpu_s": b,
        "ratio": round(ratio, 3) if ratio else None,
        "baseline_rate_per_room_s": round(rate, 3),
        "baseline_message_bytes": size,
    }
    print(json.dumps(summary, indent=1))
    if args.out:
        prefix = args.out
        Path(prefix).parent.mkdir(parents=True, exist_ok=True)
        write_outputs(ours, None, f"{prefix}-dicehall.png")
        write_outputs(base, None, f"{prefix}-baseline.png")
        report = {"summary": summary, "dicehall": ours, "baseline": base}
        Path(f"{prefix}.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {prefix}.json, {prefix}-dicehall.png, {prefix}-baseline.png")


if __name__ == "__main__":
    main()
