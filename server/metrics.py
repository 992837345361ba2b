"""Prometheus text exposition without a dependency: counters, gauges, histograms.

Only what /metrics needs; label sets are small and fixed, so children live in a dict.
"""

from __future__ import annotations

import bisect
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable


def _labels(names: tuple[str, ...], values: tuple[str, ...], extra: str = "") -> str:
    parts = [f'{n}="{_escape(v)}"' for n, v in zip(names, values, strict=True)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class _Metric(ABC):
    kind = ""

    def __init__(self, name: str, doc: str, labels: Iterable[str] = ()) -> None:
        self.name = name
        self.doc = doc
        self.label_names = tuple(labels)

    def header(self) -> list[str]:
        return [f"# HELP {self.name} {self.doc}", f"# TYPE {self.name} {self.kind}"]

    @abstractmethod
    def render(self) -> list[str]: ...


class Counter(_Metric):
    kind = "counter"

    def __init__(self, name: str, doc: str, labels: Iterable[str] = ()) -> None:
        super().__init__(name, doc, labels)
        self._values: dict[tuple[str, ...], float] = {}

    def inc(self, *labels: str, amount: float = 1.0) -> None:
        self._values[labels] = self._values.get(labels, 0.0) + amount

    def value(self, *labels: str) -> float:
        return self._values.get(labels, 0.0)

    def render(self) -> list[str]:
        lines = self.header()
        if not self._values and not self.label_names:
            lines.append(f"{self.name} 0")
        for key, v in sorted(self._values.items()):
            lines.append(f"{self.name}{_labels(self.label_names, key)} {v:g}")
        return lines


class Gauge(_Metric):
    """A value read when scraped, so it can never drift from the truth."""

    kind = "gauge"

    def __init__(self, name: str, doc: str, read: Callable[[], float]) -> None:
        super().__init__(name, doc)
        self._read = read

    def render(self) -> list[str]:
        return [*self.header(), f"{self.name} {self._read():g}"]


class Histogram(_Metric):
    kind = "histogram"

    def __init__(self, name: str, doc: str, buckets: Iterable[float]) -> None:
        super().__init__(name, doc)
        self.bounds = sorted(buckets)
        self._counts = [0] * (len(self.bounds) + 1)
        self._sum = 0.0
        self._count = 0

    def observe(self, value: float) -> None:
        self._counts[bisect.bisect_left(self.bounds, value)] += 1
        self._sum += value
        self._count += 1

    @property
    def count(self) -> int:
        return self._count

    def render(self) -> list[str]:
        lines = self.header()
        running = 0
        for bound, n in zip(self.bounds, self._counts, strict=False):
            running += n
            lines.append(f'{self.name}_bucket{{le="{bound:g}"}} {running}')
        lines.append(f'{self.name}_bucket{{le="+Inf"}} {self._count}')
        lines.append(f"{self.name}_sum {self._sum:g}")
        lines.append(f"{self.name}_count {self._count}")
        return lines


class Registry:
    def __init__(self) -> None:
        self._metrics: list[_Metric] = []

    def add(self, metric: _Metric) -> _Metric:
        self._metrics.append(metric)
        return metric

    def counter(self, name: str, doc: str, labels: Iterable[str] = ()) -> Counter:
        m = Counter(name, doc, labels)
        self.add(m)
        return m

    def gauge(self, name: str, doc: str, read: Callable[[], float]) -> Gauge:
        m = Gauge(name, doc, read)
        self.add(m)
        return m

    def histogram(self, name: str, doc: str, buckets: Iterable[float]) -> Histogram:
        m = Histogram(name, doc, buckets)
        self.add(m)
        return m

    def render(self) -> str:
        return "\n".join(line for m in self._metrics for line in m.render()) + "\n"
