"""The server's metrics, exposed through `prometheus_client`: one registry per `Server`.

Each `Server` has its own `CollectorRegistry` (tests run several servers in one process;
the library's global registry would mix them). What happens once per event (an error
reply, a socket accepted, a slow consumer cut off) is a `prometheus_client.Counter`.
What the server already holds (connections, rooms, the backend's counts) is read when
/metrics is scraped, by a collector, so it can never drift from the truth.

The fan-out latency is observed once per delivered room message, tens of thousands of
times a second, so it stays a lean accumulator (`LatencyHistogram`) exported by that
collector: `prometheus_client.Histogram.observe` takes locks and walks the bounds, 0.67-0.89
µs per call against 0.13-0.18 µs here, on a delivery of ~2.3 µs (docs/benchmarks/journal.md,
"Metrics through prometheus_client"). No lock is needed: observations and scrapes run on
the one event loop.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, ProcessCollector
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from .compiled import MODULES, compiled_modules

FANOUT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
"""Seconds; the p99 alert of docs/operations.md (250 ms) falls on a bound."""


class LatencyHistogram:
    """A histogram's bucket counts, sum and count, and nothing else: the hot path's cost.

    Counts are per bucket (not cumulative) so an observation touches one slot; `family`
    makes them cumulative when scraped. A value equal to a bound falls in that bound's
    bucket (`le`), as Prometheus defines it.
    """

    __slots__ = ("_count", "_counts", "_sum", "bounds")

    def __init__(self, bounds: Iterable[float]) -> None:
        self.bounds = sorted(bounds)
        self._counts = [0] * (len(self.bounds) + 1)
        self._sum = 0.0
        self._count = 0

    def observe(self, value: float) -> None:
        self._counts[bisect_left(self.bounds, value)] += 1
        self._sum += value
        self._count += 1

    def observe_each(self, values: list[float]) -> None:
        """`observe` each of `values` (one call for the frames of one write).

        The frames of one write were made moments apart, so each value's bucket is the
        last one's or next to it: the bucket is walked to from the last, by comparisons,
        not searched for with `bisect` (a call per delivery: 3 % of a compiled server's
        instructions; docs/benchmarks/journal.md, "Cheaper acts")."""
        counts, bounds, total = self._counts, self.bounds, self._sum
        last = len(bounds)
        i = 0
        for value in values:
            while i < last and bounds[i] < value:
                i += 1
            while i and bounds[i - 1] >= value:
                i -= 1
            counts[i] += 1  # (bounds[i - 1] < value <= bounds[i]: `bisect_left`'s slot)
            total += value  # (in order: the same sum as `observe` one at a time)
        self._sum = total
        self._count += len(values)

    @property
    def count(self) -> int:
        return self._count

    def family(self, name: str, doc: str) -> HistogramMetricFamily:
        """The histogram as Prometheus wants it: cumulative buckets up to +Inf, sum."""
        buckets: list[tuple[str, float]] = []
        running = 0
        for bound, n in zip(self.bounds, self._counts, strict=False):
            running += n
            buckets.append((repr(float(bound)), running))  # "0.0005", "1.0": as Histogram
        buckets.append(("+Inf", self._count))
        return HistogramMetricFamily(name, doc, buckets=buckets, sum_value=self._sum)


class _Readings(Collector):
    """Values the server already holds, read at each scrape: gauges of its state, the
    backend's count of expired windows, and the fan-out histogram (whose count is also
    the number of room messages sent)."""

    def __init__(
        self,
        connections: Callable[[], int],
        house_bots: Callable[[], int],
        stats: Callable[[], Mapping[str, float]],
        latency: LatencyHistogram,
    ) -> None:
        self._connections = connections
        self._house_bots = house_bots
        self._stats = stats
        self._latency = latency
        self._compiled = len(compiled_modules())

    def collect(self) -> Iterator[Metric]:
        stats = self._stats()
        yield GaugeMetricFamily(
            "dicehall_compiled_modules",
            f"Hot-path modules running compiled by mypyc, of {len(MODULES)} a compiled build"
            " compiles (0: a pure build).",
            value=self._compiled,
        )
        yield GaugeMetricFamily(
            "dicehall_connections", "Open WebSocket connections.", value=self._connections()
        )
        yield GaugeMetricFamily(
            "dicehall_house_bots", "House bots seated.", value=self._house_bots()
        )
        for key, doc in (
            ("rooms", "Rooms held by this process."),
            ("rooms_playing", "Rooms with a game in progress."),
            ("seats_taken", "Seats held by people or bots."),
        ):
            yield GaugeMetricFamily(f"dicehall_{key}", doc, value=stats[key])
        yield CounterMetricFamily(
            "dicehall_windows_closed_by_deadline_total",
            "Turn windows closed by their deadline rather than by every answer.",
            value=stats["windows_expired"],
        )
        for key, doc in (
            ("commands_forwarded", "Commands sent over Redis to the process that runs the room."),
            ("commands_served", "Commands run for another process (sent over Redis)."),
        ):
            yield CounterMetricFamily(f"dicehall_{key}_total", doc, value=stats.get(key, 0))
        yield CounterMetricFamily(
            "dicehall_room_messages_sent_total",
            "Room messages (events, windows...) written to sockets.",
            value=self._latency.count,
        )
        yield self._latency.family(
            "dicehall_fanout_latency_seconds",
            "From a room message being produced to its frame written to a socket.",
        )


class _WithoutCreated(Collector):
    """`prometheus_client` counters without their `_created` samples.

    The text format turns those into extra `*_created` gauge families: names /metrics has
    never served, that the runbook would have to document and nobody alerts on. The
    library's own switch (`disable_created_metrics`) is global to the process; this keeps
    the choice with the server's registry.
    """

    def __init__(self, counters: Iterable[Counter]) -> None:
        self._counters = tuple(counters)

    def collect(self) -> Iterator[Metric]:
        for counter in self._counters:
            for family in counter.collect():  # fresh objects on every call: ours to trim
                created = family.name + "_created"
                family.samples = [s for s in family.samples if s.name != created]
                yield family


class ServerMetrics:
    """What /metrics serves for one `Server`, and the handles the server updates."""

    def __init__(
        self,
        connections: Callable[[], int],
        house_bots: Callable[[], int],
        stats: Callable[[], Mapping[str, float]],
    ) -> None:
        """`connections`, `house_bots` and `stats` (the backend's `stats()`) are read at
        each scrape."""
        self.registry = CollectorRegistry()
        self.fanout_latency = LatencyHistogram(FANOUT_BUCKETS)
        self.errors = Counter(
            "dicehall_errors_total", "Error replies sent, by error name.", ["name"], registry=None
        )
        self.slow_dropped = Counter(
            "dicehall_slow_consumers_dropped_total",
            "Connections cut off for not reading.",
            registry=None,
        )
        self.transports = Counter(
            "dicehall_websocket_connections_total",
            "WebSocket connections accepted, by how their frames travel: fast (read and"
            " written by dicehall's own protocol), extension (per-message deflate, through"
            " websockets), asgi (another ASGI server: one ASGI message per frame).",
            ["transport"],
            registry=None,
        )
        self.registry.register(_WithoutCreated([self.errors, self.slow_dropped, self.transports]))
        self.registry.register(_Readings(connections, house_bots, stats, self.fanout_latency))
        ProcessCollector(registry=self.registry)  # process_cpu_seconds_total, ..._memory_bytes
