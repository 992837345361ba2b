"""The statistics a worker keeps and the coordinator merges: histograms and intervals.

A worker fills one `Interval` per second of the run (latency histograms, counts, errors)
and sends it through its pipe as plain data (`to_wire`); the coordinator rebuilds and
merges them (`from_wire`, `merge`) into the timeline and the totals. `Hist` is
log-bucketed so that both filling it (once per delivered message) and merging it stay cheap
while its percentiles stay within 1 %.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

_PER_E = 50
"""Histogram resolution: 50 buckets per factor e, so a percentile is within 1 % of the
sample it stands for."""


class Hist:
    """A log-bucketed histogram of microseconds, cheap to fill and to merge."""

    __slots__ = ("counts", "max", "n", "total")

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.n = 0
        self.max = 0.0
        self.total = 0.0

    def add(self, us: float) -> None:
        b = int(math.log(us) * _PER_E) if us > 1.0 else 0
        counts = self.counts
        counts[b] = counts.get(b, 0) + 1
        self.n += 1
        self.total += us
        if us > self.max:
            self.max = us

    def merge(self, other: Hist) -> None:
        for b, c in other.counts.items():
            self.counts[b] = self.counts.get(b, 0) + c
        self.n += other.n
        self.total += other.total
        self.max = max(self.max, other.max)

    def quantile(self, q: float) -> float:
        if not self.n:
            return 0.0
        rank = q * self.n
        seen = 0
        for b in sorted(self.counts):
            seen += self.counts[b]
            if seen >= rank:
                return min(math.exp((b + 0.5) / _PER_E), self.max)
        return self.max

    def summary_ms(self) -> dict[str, float]:
        """count, mean, p50, p95, p99, max in milliseconds."""
        return {
            "count": self.n,
            "mean": round(self.total / self.n / 1000, 3) if self.n else 0.0,
            "p50": round(self.quantile(0.50) / 1000, 3),
            "p95": round(self.quantile(0.95) / 1000, 3),
            "p99": round(self.quantile(0.99) / 1000, 3),
            "max": round(self.max / 1000, 3),
        }

    def state(self) -> tuple[dict[int, int], int, float, float]:
        return self.counts, self.n, self.max, self.total

    @classmethod
    def from_state(cls, state: tuple[dict[int, int], int, float, float]) -> Hist:
        h = cls()
        h.counts, h.n, h.max, h.total = dict(state[0]), state[1], state[2], state[3]
        return h


HISTS = ("fanout", "window", "resolve", "act", "legal", "setup")
"""fanout: server send -> client receipt of a room message; window: a turn window's
`window` received -> its `window_closed` received (think time included); resolve: the
last answer of a window sent -> its `window_closed` received; act / legal / setup
(create, join, leave, hello): request sent -> reply received."""


class Interval:
    """What one worker saw during one interval of the run."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.hists = {name: Hist() for name in HISTS}
        self.deliveries = 0
        self.bytes = 0
        self.rolls = 0
        self.games = 0
        self.windows = 0
        self.windows_expired = 0
        self.moves = 0
        """Seats moved to the process that runs their next room."""
        self.errors: Counter[str] = Counter()
        self.disconnects: Counter[str] = Counter()

    def to_wire(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "hists": {k: h.state() for k, h in self.hists.items()},
            "deliveries": self.deliveries,
            "bytes": self.bytes,
            "rolls": self.rolls,
            "games": self.games,
            "windows": self.windows,
            "windows_expired": self.windows_expired,
            "moves": self.moves,
            "errors": dict(self.errors),
            "disconnects": dict(self.disconnects),
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Interval:
        iv = cls(data["index"])
        iv.hists = {k: Hist.from_state(v) for k, v in data["hists"].items()}
        keys = ("deliveries", "bytes", "rolls", "games", "windows", "windows_expired", "moves")
        for key in keys:
            setattr(iv, key, data[key])
        iv.errors = Counter(data["errors"])
        iv.disconnects = Counter(data["disconnects"])
        return iv

    def merge(self, other: Interval) -> None:
        for k, h in other.hists.items():
            self.hists[k].merge(h)
        self.deliveries += other.deliveries
        self.bytes += other.bytes
        self.rolls += other.rolls
        self.games += other.games
        self.windows += other.windows
        self.windows_expired += other.windows_expired
        self.moves += other.moves
        self.errors.update(other.errors)
        self.disconnects.update(other.disconnects)
