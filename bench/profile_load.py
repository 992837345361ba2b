"""Where a loaded server's CPU goes: py-spy samples a fresh `dicehall serve --db none`
while `dicehall loadtest` plays N rooms on it, and the samples are summed per function.

    python -m bench.profile_load --rooms 1000 --duration 40 [--native] [--out PREFIX]

py-spy reads the process from outside (no instrumentation, so the profile is of the
server as it runs); `--native` adds the C frames (msgspec, uvloop, the kernel's send
path as libc calls). The report lists the functions with the most samples on top of
the stack (self) and anywhere on it (inclusive), as shares of the busy samples; the share
of samples in which the loop waited in epoll (what the server has to spare) is reported
on its own. py-spy counts wall time (a preempted `write` looks busy), so the report adds
what the kernel counted over the same seconds: the server's CPU in user space and in the
kernel, and its write and read system calls a second (`/proc/PID/stat`, `/proc/PID/io`).
`--out PREFIX` keeps PREFIX.txt (collapsed stacks, for flame graph tools) and PREFIX.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from dicehall.clients.loadtest import progress_printer, run_loadtest
from tests.support.servers import running_server

from .load_baseline import add_arguments, config

IDLE = ("epoll_wait", "epoll_pwait", "select (selectors.py)")
"""Top frames of a loop with nothing to do: the wait itself."""


def py_spy(pid: int, seconds: float, out: Path, native: bool) -> subprocess.Popen[bytes]:
    cmd = [str(Path(sys.executable).with_name("py-spy")), "record", "--pid", str(pid)]
    cmd += ["--duration", str(int(seconds)), "--rate", "250", "--format", "raw", "--idle"]
    cmd += ["--output", str(out)]
    # (--native must pause the process for each sample; without it py-spy reads it running)
    cmd.append("--native" if native else "--nonblocking")
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def proc_counters(pid: int) -> dict[str, float]:
    """CPU seconds (user, system) and read/write system calls of `pid` so far."""
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    io = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return {
        "user": int(stat[11]) / tick,
        "system": int(stat[12]) / tick,
        "writes": float(io["syscw"]),
        "reads": float(io["syscr"]),
        "at": time.monotonic(),
    }


def rates(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """Per second between two `proc_counters`: CPU as percent of a core, calls a second."""
    span = after["at"] - before["at"]
    out = {f"{k}_cpu_percent": 100 * (after[k] - before[k]) / span for k in ("user", "system")}
    out.update({f"{k}_per_s": (after[k] - before[k]) / span for k in ("writes", "reads")})
    return {k: round(v, 1) for k, v in out.items()}


def frame_name(frame: str) -> str:
    """`func (file.py)` from `func (path/file.py:line)`: samples of one function add up."""
    head, _, rest = frame.partition(" (")
    if not rest:
        return head
    where = rest.removesuffix(")")
    path, _, line = where.rpartition(":")
    return f"{head} ({Path(path if line.isdigit() else where).name})"


def summarize(collapsed: str) -> dict[str, Any]:
    own: Counter[str] = Counter()
    anywhere: Counter[str] = Counter()
    total = idle = 0
    for line in collapsed.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = [frame_name(f) for f in stack.split(";")]
        total += count
        if frames[-1].startswith(IDLE):
            idle += count
            continue
        own[frames[-1]] += count
        for name in set(frames):
            anywhere[name] += count
    busy = total - idle

    def top(counter: Counter[str]) -> list[tuple[str, float]]:
        return [(name, round(100 * n / busy, 2)) for name, n in counter.most_common(40)]

    return {
        "samples": total,
        "idle_percent": round(100 * idle / total, 2) if total else None,
        "self": top(own),
        "inclusive": top(anywhere),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(p)
    p.add_argument("--native", action="store_true", help="C frames too")
    p.add_argument("--out", help="path prefix: PREFIX.txt (collapsed stacks), PREFIX.json")
    args = p.parse_args()
    say = progress_printer()
    with tempfile.TemporaryDirectory() as tmp, running_server("--db", "none") as server:
        stacks = Path(args.out + ".txt") if args.out else Path(tmp) / "stacks.txt"
        stacks.parent.mkdir(parents=True, exist_ok=True)
        cfg = config(args, server.ws)
        cfg.server_pids = [server.proc.pid]
        spy: list[subprocess.Popen[bytes]] = []
        counted: list[dict[str, float]] = []

        def start_after_warmup() -> None:
            time.sleep(args.warmup + 8)  # (connect, create and join before the warmup)
            counted.append(proc_counters(server.proc.pid))
            spy.append(py_spy(server.proc.pid, args.duration - 4, stacks, args.native))
            time.sleep(args.duration - 8)  # (ends before the load does)
            counted.append(proc_counters(server.proc.pid))

        starter = threading.Thread(target=start_after_warmup, daemon=True)
        starter.start()
        report = run_loadtest(cfg, say)
        starter.join()
        _, err = spy[0].communicate(timeout=60)
        if spy[0].returncode != 0:
            raise SystemExit(f"py-spy failed: {err.decode(errors='replace')}")
    summary = summarize(stacks.read_text(encoding="utf-8"))
    summary["load"] = {
        "rooms": args.rooms,
        "deliveries_per_s": report["deliveries_per_s"],
        "server_cpu_percent": report["server"]["cpu_percent"],
        "cpu_us_per_delivery": report["server"]["cpu_us_per_delivery"],
        "fanout_p99_ms": report["fanout_ms"]["p99"],
        "requests": {k: v["count"] for k, v in report["requests_ms"].items()},
        "kernel_counted": rates(counted[0], counted[1]),
    }
    print(f"{summary['samples']} samples, idle {summary['idle_percent']} %")
    for kind in ("self", "inclusive"):
        print(f"-- {kind}")
        for name, share in summary[kind][:25]:
            print(f"{share:6.2f} %  {name}")
    print(json.dumps(summary["load"]))
    if args.out:
        Path(args.out + ".json").write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
