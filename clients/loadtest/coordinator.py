"""The coordinator: start the workers, pace the run, merge what they report.

`run_loadtest` is the whole run, in the calling process and without an event loop: it
starts the worker processes, waits until every socket is connected (sampling the
server's RSS before and after), sends `play`, and then, at each interval's boundary,
samples the server, collects every worker's interval, appends a timeline row and says a
progress line. At the end it stops the workers, gathers their last intervals and CPU
times, and hands everything to `report.build_report`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from .config import LoadConfig, LoadTestError
from .probes import Probe, find_probe, server_gauges
from .report import build_report
from .stats import Interval
from .worker import worker_main


@dataclass
class _Sample:
    t: float
    cpu: float
    rss: float
    wait: float | None


def run_loadtest(cfg: LoadConfig, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the whole load test and return its report (`report.format_table` reads it)."""
    if cfg.rooms < 1 or cfg.seats < 1 or cfg.procs < 1 or not cfg.urls:
        raise LoadTestError("rooms, seats and procs must be at least 1, with at least one URL")
    procs = min(cfg.procs, cfg.rooms)
    cfg = LoadConfig(**{**asdict(cfg), "procs": procs})
    say = progress or (lambda line: None)
    probe = find_probe(cfg)
    load_before = os.getloadavg()
    rss: dict[str, float | None] = {}
    first = probe.sample()
    rss["before"] = first[1] if first else None
    ctx = multiprocessing.get_context("spawn")
    pipes: list[Connection] = []
    children = []
    for i in range(procs):
        ours, theirs = ctx.Pipe()
        child = ctx.Process(target=worker_main, args=(i, cfg, theirs), daemon=True)
        child.start()
        theirs.close()
        pipes.append(ours)
        children.append(child)
    try:
        return _coordinate(cfg, probe, pipes, rss, load_before, say)
    finally:
        for pipe in pipes:
            with contextlib.suppress(OSError):
                pipe.send(("stop",))
        for child in children:
            child.join(15)
            if child.is_alive():
                child.kill()
                child.join(5)


def _coordinate(
    cfg: LoadConfig,
    probe: Probe,
    pipes: list[Connection],
    rss: dict[str, float | None],
    load_before: tuple[float, float, float],
    say: Callable[[str], None],
) -> dict[str, Any]:
    setup = Interval(-1)
    connected = 0
    server_name = ""
    pending = set(pipes)
    deadline = time.monotonic() + 60 + cfg.rooms * cfg.seats / 200
    say(f"connecting {cfg.rooms * cfg.seats} sockets from {len(pipes)} process(es)...")
    while pending:
        ready = wait(list(pending), timeout=max(0.1, deadline - time.monotonic()))
        if not ready:
            raise LoadTestError("workers did not connect in time")
        for pipe in ready:
            assert isinstance(pipe, Connection)
            kind, count, data, name = pipe.recv()
            if kind != "connected":
                raise LoadTestError(f"unexpected {kind!r} from a worker")
            connected += count
            server_name = server_name or name
            setup.merge(Interval.from_wire(data))
            pending.discard(pipe)
    time.sleep(1.0)  # let the server settle before its idle-connection RSS is read
    sample = probe.sample()
    rss["connected"] = sample[1] if sample else None
    start = time.time() + 0.2
    for pipe in pipes:
        pipe.send(("play", start))
    total = cfg.warmup + cfg.duration
    n_intervals = max(1, round(total / cfg.interval))
    measured = range(round(cfg.warmup / cfg.interval), n_intervals)
    samples: dict[int, _Sample] = {}
    got: dict[int, Interval] = {}
    counts: Counter[int] = Counter()
    timeline: list[dict[str, Any]] = []
    totals = Interval(0)
    whole = Interval(0)
    whole.merge(setup)
    k = 0
    while k <= n_intervals:
        boundary = start + k * cfg.interval
        while True:
            left = boundary - time.time()
            if left <= 0:
                break
            ready = wait(pipes, timeout=left)
            for pipe in ready:
                assert isinstance(pipe, Connection)
                _receive(pipe, got, counts)
        s = probe.sample()
        if s is not None:
            samples[k] = _Sample(time.time(), s[0], s[1], probe.waited())
        # the workers close interval k-1 at this boundary: collect it
        if k >= 1:
            _collect(pipes, got, counts, k - 1, len(pipes))
            iv = got.get(k - 1, Interval(k - 1))
            row = _row(cfg, iv, samples.get(k - 1), samples.get(k))
            timeline.append(row)
            if k - 1 in measured:
                totals.merge(iv)
            whole.merge(iv)
            say(_progress_line(row, whole))
        k += 1
    for pipe in pipes:
        pipe.send(("stop",))
    loadgen_cpu = loadgen_wait = 0.0
    offsets: list[dict[str, float]] = []
    for pipe in pipes:
        while True:
            if not pipe.poll(20):
                raise LoadTestError("a worker did not finish")
            kind, *rest = pipe.recv()
            if kind == "interval":
                whole.merge(Interval.from_wire(rest[0]))
            elif kind == "done":
                loadgen_cpu += rest[0]["cpu_seconds"]
                loadgen_wait += rest[0]["wait_seconds"]
                offsets.append(rest[0]["offset"])
                break
    end = probe.sample()
    rss["end"] = end[1] if end else None
    gauges = server_gauges(cfg.urls)
    first_k, last_k = measured.start, measured.stop
    span_cpu = span_wait = None
    if first_k in samples and last_k in samples:
        span_cpu = samples[last_k].cpu - samples[first_k].cpu
        a, b = samples[first_k].wait, samples[last_k].wait
        span_wait = b - a if a is not None and b is not None else None
    rss["active"] = samples[last_k].rss if last_k in samples else None
    rss["max"] = max((s.rss for s in samples.values()), default=None)
    return build_report(
        cfg,
        probe,
        connected,
        setup,
        totals,
        whole,
        timeline,
        span_cpu,
        span_wait,
        rss,
        (loadgen_cpu, loadgen_wait),
        offsets,
        load_before,
        server_name,
        gauges,
    )


def _receive(pipe: Connection, got: dict[int, Interval], counts: Counter[int]) -> None:
    kind, *rest = pipe.recv()
    if kind != "interval":
        raise LoadTestError(f"unexpected {kind!r} from a worker")
    iv = Interval.from_wire(rest[0])
    if iv.index in got:
        got[iv.index].merge(iv)
    else:
        got[iv.index] = iv
    counts[iv.index] += 1


def _collect(
    pipes: list[Connection], got: dict[int, Interval], counts: Counter[int], k: int, n: int
) -> None:
    """Wait (briefly) until every worker has reported interval k."""
    until = time.time() + 2.0
    while counts[k] < n and time.time() < until:
        for pipe in wait(pipes, timeout=max(0.0, until - time.time())):
            assert isinstance(pipe, Connection)
            _receive(pipe, got, counts)


def _row(cfg: LoadConfig, iv: Interval, a: _Sample | None, b: _Sample | None) -> dict[str, Any]:
    fan = iv.hists["fanout"]
    row: dict[str, Any] = {
        "t": round((iv.index + 1) * cfg.interval, 3),
        "deliveries_per_s": round(iv.deliveries / cfg.interval, 1),
        "fanout_ms": {
            "p50": round(fan.quantile(0.5) / 1000, 3),
            "p95": round(fan.quantile(0.95) / 1000, 3),
            "p99": round(fan.quantile(0.99) / 1000, 3),
            "max": round(fan.max / 1000, 3),
        },
        "act_p99_ms": round(iv.hists["act"].quantile(0.99) / 1000, 3),
        "rolls": iv.rolls,
        "games": iv.games,
        "errors": sum(iv.errors.values()),
        "disconnects": sum(iv.disconnects.values()),
        "server_cpu_percent": None,
        "server_wait_percent": None,
        "server_rss_mib": None,
    }
    if a is not None and b is not None and b.t > a.t:
        row["server_cpu_percent"] = round(100 * (b.cpu - a.cpu) / (b.t - a.t), 1)
        if a.wait is not None and b.wait is not None:
            row["server_wait_percent"] = round(100 * (b.wait - a.wait) / (b.t - a.t), 1)
    if b is not None:
        row["server_rss_mib"] = round(b.rss / 2**20, 1)
    return row


def _progress_line(row: dict[str, Any], whole: Interval) -> str:
    errors = sum(whole.errors.values())
    fan = row["fanout_ms"]
    cpu = row["server_cpu_percent"]
    mem = row["server_rss_mib"]
    return (
        f"t={row['t']:5.0f}s  delivered/s={row['deliveries_per_s']:8.0f}  "
        f"fan-out p50={fan['p50']:.2f} p99={fan['p99']:.2f} max={fan['max']:.1f} ms  "
        f"act p99={row['act_p99_ms']:.1f} ms  rolls={row['rolls']}  errors={errors}  "
        f"server cpu={'-' if cpu is None else f'{cpu:.0f}%'} "
        f"rss={'-' if mem is None else f'{mem:.0f}MiB'}"
    )
