"""The report: its JSON assembled from the run's figures, its reading, its files.

`build_report` turns what the coordinator gathered (merged intervals, server samples,
workers' CPU times) into the JSON report, the one record of a run that bench/ scripts and
docs/benchmarks.md read; `format_table` is its reading for a person; `write_outputs`
writes the JSON and the plot (`plot.py`, only imported when a plot is asked for);
`progress_printer` prints the coordinator's progress lines.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .config import LoadConfig
from .probes import Probe
from .stats import Interval


def build_report(
    cfg: LoadConfig,
    probe: Probe,
    connected: int,
    setup: Interval,
    totals: Interval,
    whole: Interval,
    timeline: list[dict[str, Any]],
    span_cpu: float | None,
    span_wait: float | None,
    rss: dict[str, float | None],
    loadgen: tuple[float, float],
    offsets: list[dict[str, float]],
    load_before: tuple[float, float, float],
    server_name: str,
    gauges: dict[str, float],
) -> dict[str, Any]:
    conns = cfg.rooms * cfg.seats
    errors = whole.errors  # the whole run counts, setup and warm-up included
    disconnects = whole.disconnects
    per_conn = per_room = None
    if rss.get("before") is not None and rss.get("connected") is not None:
        per_conn = (rss["connected"] - rss["before"]) / max(1, connected) / 1024  # type: ignore[operator]
    per_alive = None
    if rss.get("connected") is not None and rss.get("active") is not None:
        grown = rss["active"] - rss["connected"]  # type: ignore[operator]
        per_room = grown / cfg.rooms / 1024
        if gauges.get("dicehall_rooms"):
            per_alive = grown / gauges["dicehall_rooms"] / 1024
    eps = totals.deliveries / span_cpu if span_cpu else None
    return {
        "config": asdict(cfg),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        },
        "connections": {"wanted": conns, "connected": connected},
        "span": {"start_s": cfg.warmup, "seconds": cfg.duration},
        "fanout_ms": totals.hists["fanout"].summary_ms(),
        "window_ms": totals.hists["window"].summary_ms(),
        "resolve_ms": totals.hists["resolve"].summary_ms(),
        "requests_ms": {
            "act": totals.hists["act"].summary_ms(),
            "legal": totals.hists["legal"].summary_ms(),
            "setup": whole.hists["setup"].summary_ms(),
        },
        "deliveries": totals.deliveries,
        "deliveries_per_s": round(totals.deliveries / cfg.duration, 1),
        "bytes_per_delivery": round(totals.bytes / totals.deliveries, 1)
        if totals.deliveries
        else 0.0,
        "rolls_per_room_s": round(totals.rolls / cfg.rooms / cfg.duration, 3),
        "windows": totals.windows,
        "windows_expired": totals.windows_expired,
        "games_finished": whole.games,
        "moves": whole.moves,
        "errors": dict(errors),
        "error_count": sum(errors.values()),
        "disconnects": dict(disconnects),
        "server": {
            "name": server_name,
            "source": probe.source,
            "pids": getattr(probe, "pids", []),
            "cpu_seconds": round(span_cpu, 3) if span_cpu is not None else None,
            "cpu_percent": round(100 * span_cpu / cfg.duration, 1)
            if span_cpu is not None
            else None,
            "cpu_wait_percent": round(100 * span_wait / cfg.duration, 1)
            if span_wait is not None
            else None,
            "deliveries_per_cpu_s": round(eps, 1) if eps else None,
            "cpu_us_per_delivery": round(1e6 / eps, 2) if eps else None,
            "rss_bytes": {k: v for k, v in rss.items()},
            "rss_per_idle_connection_kib": round(per_conn, 2) if per_conn is not None else None,
            "rss_per_active_room_kib": round(per_room, 2) if per_room is not None else None,
            "rooms_alive": gauges.get("dicehall_rooms"),
            "rss_per_alive_room_kib": round(per_alive, 2) if per_alive is not None else None,
        },
        "loadgen": {
            "cpu_seconds": round(loadgen[0], 3),
            "wait_seconds": round(loadgen[1], 3),
            "clock_offsets": offsets,
        },
        "timeline": timeline,
    }


# --- output -----------------------------------------------------------------------------


def format_table(report: dict[str, Any]) -> str:
    cfg = report["config"]
    server = report["server"]
    lines = [
        f"dicehall loadtest: {cfg['rooms']} rooms x {cfg['seats']} seats of {cfg['game']}, "
        f"{report['span']['seconds']:g} s measured after {report['span']['start_s']:g} s, "
        f"think {cfg['think']:g} s, policy {cfg['policy']}, {cfg['encoding']}, "
        f"{cfg['procs']} load process(es)",
        "",
        f"{'latency (ms)':<34}{'count':>9}{'p50':>9}{'p95':>9}{'p99':>9}{'max':>9}",
    ]
    rows = [
        ("fan-out (server send -> client)", report["fanout_ms"]),
        ("window open -> closed", report["window_ms"]),
        ("last answer -> window closed", report["resolve_ms"]),
        ("request act -> reply", report["requests_ms"]["act"]),
        ("request legal -> reply", report["requests_ms"]["legal"]),
        ("setup requests -> reply", report["requests_ms"]["setup"]),
    ]
    for name, s in rows:
        lines.append(
            f"{name:<34}{s['count']:>9}{s['p50']:>9.2f}{s['p95']:>9.2f}{s['p99']:>9.2f}"
            f"{s['max']:>9.1f}"
        )

    def num(v: float | None, fmt: str) -> str:
        return "-" if v is None else format(v, fmt)

    rss = server["rss_bytes"]
    lines += [
        "",
        f"connections        {report['connections']['connected']}/"
        f"{report['connections']['wanted']}",
        f"delivered          {report['deliveries']} room messages, "
        f"{report['deliveries_per_s']:.0f}/s, {report['bytes_per_delivery']:.0f} B each",
        f"rolls              {report['rolls_per_room_s']:.2f} per room per second; "
        f"{report['games_finished']} games finished; {report['windows_expired']} of "
        f"{report['windows']} windows closed by their deadline",
        f"errors             {report['error_count']} {report['errors'] or ''}",
        f"disconnects        {sum(report['disconnects'].values())} {report['disconnects'] or ''}"
        f"; {report['moves']} seats moved to their room's process",
        f"server             {server['name']} (sampled from {server['source']}): "
        f"cpu {num(server['cpu_percent'], '.1f')}% of a core (waited for one "
        f"{num(server['cpu_wait_percent'], '.1f')}%), "
        f"{num(server['deliveries_per_cpu_s'], ',.0f')} deliveries per cpu-second "
        f"({num(server['cpu_us_per_delivery'], '.1f')} us each)",
        f"server rss         before {_mib(rss.get('before'))}, connected "
        f"{_mib(rss.get('connected'))}, end of span {_mib(rss.get('active'))}, "
        f"max {_mib(rss.get('max'))}",
        f"                   {num(server['rss_per_idle_connection_kib'], '.1f')} KiB per idle "
        f"connection, {num(server['rss_per_active_room_kib'], '.1f')} KiB per active room"
        + (
            f" ({num(server['rss_per_alive_room_kib'], '.1f')} KiB per room held: "
            f"{server['rooms_alive']:.0f} with the finished ones)"
            if server.get("rooms_alive")
            else ""
        ),
        f"load generator     {report['loadgen']['cpu_seconds']:.1f} cpu-seconds, waited "
        f"{report['loadgen']['wait_seconds']:.1f} s for a cpu; load average "
        f"{report['machine']['loadavg_before']} before, {report['machine']['loadavg_after']} "
        "after",
    ]
    return "\n".join(lines)


def _mib(v: float | None) -> str:
    return "-" if v is None else f"{v / 2**20:.1f} MiB"


def write_outputs(report: dict[str, Any], out: str | None, plot: str | None) -> list[str]:
    """The JSON file and the plot; returns the paths written."""
    written = []
    if out:
        Path(out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        written.append(out)
    if plot:
        from .plot import plot_report

        plot_report(report, plot)
        written.append(plot)
    return written


def progress_printer(stream: Any = None) -> Callable[[str], None]:
    stream = stream or sys.stderr

    def say(line: str) -> None:
        print(line, file=stream, flush=True)

    return say
