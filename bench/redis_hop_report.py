"""The Redis hop's figures: one backend's measurements, and the table and verdict that
compare Redis against memory (issue 18's targets)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TARGETS = {"rooms": (1.30, 1.0), "seats": (1.80, 2.0)}
"""By `--split`: the servers' CPU per delivered event against memory, p50 added (ms)."""


@dataclass
class Result:
    name: str
    near: list[float]
    far: list[float]
    deliveries: int
    cpu: dict[str, float]
    sleeps: dict[str, int]
    seconds: float
    games: int
    by_deadline: int
    rate_limited: int
    load_cpu: float
    """CPU seconds of this process (the clients) in the span: not counted per event."""
    windows: int = 0
    redis_calls: dict[str, int] = field(default_factory=dict)
    """Commands Redis ran in the span, by name (`INFO commandstats`), for the Redis run."""

    @property
    def latencies(self) -> list[float]:
        return self.near + self.far

    def server_cpu(self) -> float:
        return sum(v for k, v in self.cpu.items() if k.startswith("dicehall"))

    def total_cpu(self) -> float:
        return sum(self.cpu.values())

    def server_sleeps(self) -> int:
        return sum(v for k, v in self.sleeps.items() if k.startswith("dicehall"))


def pct(values: list[float], q: float) -> float:
    """The q-quantile in ms (nearest rank)."""
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(memory: Result, redis: Result, split: str) -> tuple[str, dict[str, Any], bool]:
    rows = []
    out: dict[str, Any] = {}
    for r in (memory, redis):
        lat = r.latencies
        per_event = 1e6 * r.server_cpu() / r.deliveries
        with_redis = 1e6 * r.total_cpu() / r.deliveries
        slept = r.server_sleeps() / r.deliveries
        out[r.name] = {
            "windows_timed": len(lat),
            "p50_ms": pct(lat, 0.5),
            "p95_ms": pct(lat, 0.95),
            "p99_ms": pct(lat, 0.99),
            "near_p50_ms": pct(r.near, 0.5) if r.near else None,
            "far_p50_ms": pct(r.far, 0.5) if r.far else None,
            "deliveries": r.deliveries,
            "deliveries_per_s": r.deliveries / r.seconds,
            "games": r.games,
            "closed_by_deadline": r.by_deadline,
            "rate_limited": r.rate_limited,
            "load_generator_cores": r.load_cpu / r.seconds,
            "server_cores": r.server_cpu() / r.seconds,
            "cpu_seconds": r.cpu,
            "server_cpu_us_per_event": per_event,
            "total_cpu_us_per_event": with_redis,
            "server_sleeps_per_event": slept,
            "sleeps": r.sleeps,
            "windows": r.windows,
            "redis_calls_per_window": {
                k: v / max(1, r.windows) for k, v in sorted(r.redis_calls.items())
            },
        }
        o = out[r.name]
        far = f"{o['far_p50_ms']:.2f}" if o["far_p50_ms"] is not None else "-"
        rows.append(
            f"| {r.name} | {len(lat)} | {o['p50_ms']:.2f} | {o['p95_ms']:.2f} | "
            f"{o['near_p50_ms']:.2f} / {far} | {r.deliveries / r.seconds:.0f} | "
            f"{per_event:.1f} | {with_redis:.1f} | {slept:.2f} |"
        )
    m, r = out["memory"], out["redis"]
    p50_added = r["p50_ms"] - m["p50_ms"]
    cpu_ratio = r["server_cpu_us_per_event"] / m["server_cpu_us_per_event"]
    total_ratio = r["total_cpu_us_per_event"] / m["server_cpu_us_per_event"]
    out["ratios"] = {
        "p50_added_ms": p50_added,
        "p50_ratio": r["p50_ms"] / m["p50_ms"],
        "p95_ratio": r["p95_ms"] / m["p95_ms"],
        "server_cpu_per_event_ratio": cpu_ratio,
        "cpu_per_event_ratio_with_redis": total_ratio,
    }
    cpu_target, p50_target = TARGETS[split]
    met = p50_added <= p50_target and cpu_ratio <= cpu_target
    table = "\n".join(
        [
            "| backend | windows timed | p50 (ms) | p95 (ms) | p50 owner's / other process "
            "(ms) | deliveries/s | server CPU/event (µs) | incl. Redis (µs) | "
            "server sleeps/event |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )
    summary = (
        f"Redis hop: p50 +{p50_added:.2f} ms (x{out['ratios']['p50_ratio']:.2f}), "
        f"p95 x{out['ratios']['p95_ratio']:.2f}; CPU per delivered event x{cpu_ratio:.2f} "
        f"(servers), x{total_ratio:.2f} (servers + Redis). Targets: p50 +{p50_target} ms, "
        f"CPU x{cpu_target} (servers): {'met' if met else 'MISSED'}"
    )
    if r["redis_calls_per_window"]:
        per_window = r["redis_calls_per_window"]
        summary += "\nRedis commands per turn window: " + ", ".join(
            f"{k} {v:.2f}" for k, v in sorted(per_window.items(), key=lambda kv: -kv[1])
        )
        summary += f" (total {sum(per_window.values()):.2f}, {r['windows']} windows)"
    return table + "\n\n" + summary, out, met
