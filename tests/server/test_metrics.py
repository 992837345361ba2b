"""/metrics through prometheus_client: the names served before it, their types, exact
values, and a histogram Prometheus can read (docs/operations.md, "Metrics")."""

from __future__ import annotations

import re
from collections.abc import Mapping

from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from starlette.requests import Request

from dicehall.server.edge.app import create_app
from dicehall.server.edge.app import metrics as metrics_endpoint
from dicehall.server.edge.process import Server
from dicehall.server.edge.settings import Config
from dicehall.server.metrics import FANOUT_BUCKETS, LatencyHistogram, ServerMetrics

DICEHALL = {
    "dicehall_connections": "gauge",
    "dicehall_house_bots": "gauge",
    "dicehall_compiled_modules": "gauge",
    "dicehall_rooms": "gauge",
    "dicehall_rooms_playing": "gauge",
    "dicehall_seats_taken": "gauge",
    "dicehall_windows_closed_by_deadline_total": "counter",
    "dicehall_room_messages_sent_total": "counter",
    "dicehall_fanout_latency_seconds": "histogram",
    "dicehall_slow_consumers_dropped_total": "counter",
    "dicehall_errors_total": "counter",
    "dicehall_websocket_connections_total": "counter",
    "dicehall_commands_forwarded_total": "counter",
    "dicehall_commands_served_total": "counter",
}
"""Every name `ServerMetrics` serves, with its type."""

GATE = {
    "dicehall_connections_pending": "gauge",
    "dicehall_connections_refused_total": "counter",
    "dicehall_connections_dropped_total": "counter",
    "dicehall_requests_timed_out_total": "counter",
}
"""The names the server's gate adds (server/edge/gate.py)."""

STATS = {"rooms": 3, "rooms_playing": 2, "seats_taken": 7, "windows_expired": 0}


def text(metrics: ServerMetrics) -> str:
    return generate_latest(metrics.registry).decode()


def types(exposition: str) -> dict[str, str]:
    """{name as served in `# TYPE`: type}."""
    return dict(re.findall(r"^# TYPE (\S+) (\S+)$", exposition, re.M))


def samples(exposition: str) -> dict[str, float]:
    """{sample name{labels}: value}, parsed by prometheus_client's own parser."""
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(exposition):
        for s in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
            out[s.name + (f"{{{labels}}}" if labels else "")] = s.value
    return out


def standalone(stats: Mapping[str, float] = STATS, connections: int = 0) -> ServerMetrics:
    return ServerMetrics(lambda: connections, lambda: 0, lambda: stats)


def test_a_server_serves_the_same_names_with_their_types() -> None:
    exposition = text(Server(Config()).metrics)
    served = types(exposition)
    assert {n: t for n, t in served.items() if n.startswith("dicehall_")} == DICEHALL | GATE
    others = {n for n in served if not n.startswith("dicehall_")}
    assert {"process_cpu_seconds_total", "process_resident_memory_bytes"} <= others
    assert all(n.startswith("process_") for n in others)  # ProcessCollector's extras
    assert served["process_cpu_seconds_total"] == "counter"
    assert served["process_resident_memory_bytes"] == "gauge"
    assert set(re.findall(r"^# HELP (\S+) ", exposition, re.M)) == set(served)
    # The parser agrees (it names counter families without `_total`).
    parsed = {f.name: f.type for f in text_string_to_metric_families(exposition)}
    assert parsed["dicehall_room_messages_sent"] == "counter"
    assert parsed["dicehall_fanout_latency_seconds"] == "histogram"


def test_sample_names_are_the_same_as_before_without_created() -> None:
    metrics = standalone()
    metrics.errors.labels("no-such-room").inc()
    metrics.transports.labels("fast").inc()
    metrics.fanout_latency.observe(0.002)
    names = {re.sub(r"\{.*", "", key) for key in samples(text(metrics))}
    histogram = "dicehall_fanout_latency_seconds"
    expected = set(DICEHALL) - {histogram}
    expected |= {f"{histogram}_bucket", f"{histogram}_sum", f"{histogram}_count"}
    assert {n for n in names if n.startswith("dicehall_")} == expected
    assert not [n for n in names if n.endswith("_created")]


def test_counters_and_gauges_are_exposed_exactly() -> None:
    stats = {**STATS, "windows_expired": 1_234_567, "commands_forwarded": 12}
    metrics = standalone(stats, connections=1_234_567)
    metrics.slow_dropped.inc(1_234_567)
    metrics.errors.labels("internal").inc(1_234_567)
    metrics.errors.labels("internal").inc()
    metrics.transports.labels("fast").inc(2)
    exposition = text(metrics)
    assert "1.23457e+06" not in exposition  # what `{v:g}` used to print
    values = samples(exposition)
    assert values["dicehall_slow_consumers_dropped_total"] == 1_234_567
    assert values["dicehall_windows_closed_by_deadline_total"] == 1_234_567
    assert values["dicehall_connections"] == 1_234_567
    assert values["dicehall_commands_forwarded_total"] == 12
    assert values["dicehall_commands_served_total"] == 0  # (the memory backend: no hop)
    assert values['dicehall_errors_total{name="internal"}'] == 1_234_568
    assert values['dicehall_websocket_connections_total{transport="fast"}'] == 2
    assert values["dicehall_rooms"] == 3
    assert values["dicehall_rooms_playing"] == 2
    assert values["dicehall_seats_taken"] == 7


def test_the_histogram_is_cumulative_and_counts_room_messages() -> None:
    metrics = standalone()
    observed = [0.0001, 0.0005, 0.0007, 0.003, 0.003, 0.2, 1.0, 4.0]
    for value in observed[:3]:
        metrics.fanout_latency.observe(value)
    metrics.fanout_latency.observe_each(observed[3:])  # (a write's frames: the same counts)
    values = samples(text(metrics))
    name = "dicehall_fanout_latency_seconds"
    buckets = {
        float(key.split('"')[1]): value
        for key, value in values.items()
        if key.startswith(f"{name}_bucket")
    }
    assert sorted(buckets) == [*FANOUT_BUCKETS, float("inf")]
    for bound, count in buckets.items():
        assert count == sum(v <= bound for v in observed), bound  # `le`: bounds included
    assert buckets[0.0005] == 2 and buckets[1.0] == 7 and buckets[float("inf")] == 8
    assert values[f"{name}_count"] == len(observed)
    assert values[f"{name}_sum"] == sum(observed)
    assert values["dicehall_room_messages_sent_total"] == len(observed)


@given(
    st.lists(
        st.lists(
            st.one_of(
                st.sampled_from(FANOUT_BUCKETS),
                st.floats(min_value=-1.0, max_value=10.0, allow_nan=False),
            ),
            max_size=12,
        ),
        max_size=6,
    )
)
def test_a_write_s_frames_observed_together_count_as_one_at_a_time(
    writes: list[list[float]],
) -> None:
    """`observe_each` walks from the last value's bucket: any order, values on the bounds."""
    together, alone = LatencyHistogram(FANOUT_BUCKETS), LatencyHistogram(FANOUT_BUCKETS)
    for values in writes:
        together.observe_each(values)
        for value in values:
            alone.observe(value)
    assert together.family("h", "").samples == alone.family("h", "").samples


def test_an_empty_histogram_still_has_its_buckets() -> None:
    values = samples(text(standalone()))
    assert values['dicehall_fanout_latency_seconds_bucket{le="+Inf"}'] == 0
    assert values["dicehall_fanout_latency_seconds_count"] == 0
    assert values["dicehall_slow_consumers_dropped_total"] == 0


def test_each_server_has_its_own_registry() -> None:
    one, two = Server(Config()), Server(Config())
    one.slow_dropped.inc()
    assert samples(text(one.metrics))["dicehall_slow_consumers_dropped_total"] == 1
    assert samples(text(two.metrics))["dicehall_slow_consumers_dropped_total"] == 0


async def test_the_endpoint_serves_the_registry() -> None:
    server = Server(Config())
    server.slow_dropped.inc(3)
    app = create_app(server=server)
    app.state.server = server  # what the lifespan does
    response = await metrics_endpoint(Request({"type": "http", "app": app, "headers": []}))
    assert response.headers["content-type"] == CONTENT_TYPE_LATEST
    assert samples(bytes(response.body).decode())["dicehall_slow_consumers_dropped_total"] == 3
