"""`dicehall loadtest` as an operator runs it, and what it stands on.

Real processes throughout: a `dicehall serve` (and the bare broadcast baseline of bench/),
the load test as a subprocess writing its JSON and plot. The `timestamps` feature the
fan-out latency is measured with is checked on the wire. No assertion is about speed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import metrics
from tests.e2e.wire import JSON, MSGPACK, RawClient
from tests.support.redis import RedisServer
from tests.support.servers import ROOT, ServerProcess, free_port, running_server

PNG = b"\x89PNG\r\n\x1a\n"
STAMPED = {"room", "event", "window", "window_closed", "game_over"}


@pytest.fixture(scope="module")
def dicehall() -> Iterator[ServerProcess]:
    with running_server() as s:
        yield s


def loadtest(tmp: Path, *args: str, timeout: float = 120) -> tuple[dict[str, Any], str, str]:
    """Run `dicehall loadtest ARGS --out tmp/report.json`; its report, stdout and stderr."""
    out = tmp / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "dicehall.clients.cli", "loadtest", *args, "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return report, proc.stdout, proc.stderr


def check_summary(s: dict[str, Any]) -> None:
    assert s["count"] > 0
    assert 0 <= s["p50"] <= s["p95"] <= s["p99"] <= s["max"]


def test_a_short_run_plays_real_games_and_reports_every_figure(
    dicehall: ServerProcess, tmp_path: Path
) -> None:
    report, stdout, stderr = loadtest(
        tmp_path,
        "--url", dicehall.ws, "--rooms", "3", "--seats", "3", "--duration", "3",
        "--warmup", "1", "--think", "0.2",
    )  # fmt: skip
    assert report["error_count"] == 0 and report["errors"] == {}
    assert report["disconnects"] == {}
    assert report["connections"] == {"wanted": 9, "connected": 9}
    assert report["deliveries"] > 0 and report["deliveries_per_s"] > 0
    assert report["bytes_per_delivery"] > 0
    for summary in (
        report["fanout_ms"],
        report["window_ms"],
        report["resolve_ms"],
        report["requests_ms"]["act"],
        report["requests_ms"]["setup"],
    ):
        check_summary(summary)
    assert report["config"]["policy"] == "window"
    # (asked only for a window already open in the join's snapshot: the last seat to join
    # starts the game; at most once per game)
    assert report["requests_ms"]["legal"]["count"] <= 3 + report["games_finished"]
    assert report["fanout_ms"]["count"] == report["deliveries"], "every room message stamped"
    assert report["windows"] > 0 and report["windows_expired"] == 0
    assert report["rolls_per_room_s"] > 0
    server = report["server"]
    assert server["name"].startswith("dicehall/")
    assert server["source"] == "proc" and server["pids"] == [dicehall.proc.pid]
    assert server["cpu_seconds"] > 0 and server["deliveries_per_cpu_s"] > 0
    assert all(server["rss_bytes"][k] > 0 for k in ("before", "connected", "active", "end"))
    # (a table whose game has just ended leaves its room, which closes once deserted,
    # before it creates the next: a table stopped in between holds no room)
    assert server["rooms_alive"] >= 3 - report["games_finished"]
    assert [row["t"] for row in report["timeline"]] == [1.0, 2.0, 3.0, 4.0]
    assert all(row["server_cpu_percent"] is not None for row in report["timeline"])
    assert report["loadgen"]["clock_offsets"][0]["offset_ms"] == 0.0  # one clock here
    assert (tmp_path / "report.png").read_bytes().startswith(PNG)
    assert "fan-out (server send -> client)" in stdout and "errors             0" in stdout
    assert stderr.count("delivered/s=") == 4, "one progress line per second"


def test_several_processes_and_the_pass_policy_over_json(
    dicehall: ServerProcess, tmp_path: Path
) -> None:
    report, _, _ = loadtest(
        tmp_path,
        "--url", dicehall.ws, "--rooms", "4", "--seats", "2", "--duration", "2",
        "--warmup", "1", "--think", "0.1", "--procs", "2", "--policy", "pass",
        "--encoding", "json", "--no-plot",
    )  # fmt: skip
    assert report["error_count"] == 0 and report["disconnects"] == {}
    assert report["connections"]["connected"] == 8
    assert report["config"]["procs"] == 2
    assert len(report["loadgen"]["clock_offsets"]) == 2
    assert report["requests_ms"]["act"]["count"] > 0
    assert report["requests_ms"]["legal"]["count"] == 0, "pass needs no legal in Qwixx"
    assert not (tmp_path / "report.png").exists()


@pytest.mark.parametrize("policy", ["window", "legal"])
def test_a_yamb_turn_of_several_actions_by_either_policy(
    dicehall: ServerProcess, tmp_path: Path, policy: str
) -> None:
    """Yamb: a seat acts several times in one window. Policy `window` takes each next
    list from the `act` reply (feature `legal_in_window`), `legal` asks after each act."""
    report, _, _ = loadtest(
        tmp_path,
        "--url", dicehall.ws, "--game", "yamb", "--rooms", "2", "--seats", "2",
        "--duration", "3", "--warmup", "1", "--think", "0.4", "--policy", policy, "--no-plot",
    )  # fmt: skip
    assert report["error_count"] == 0 and report["disconnects"] == {}
    assert report["windows"] > 0 and report["windows_expired"] == 0
    acts, asked = report["requests_ms"]["act"]["count"], report["requests_ms"]["legal"]["count"]
    assert acts > report["windows"], "several actions per turn"
    if policy == "window":
        assert asked == 0
    else:
        assert asked >= acts


def test_the_baseline_server_is_driven_by_the_same_load_test(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.broadcast_baseline", "--port", str(port), "--rate", "5"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    try:
        url = f"ws://127.0.0.1:{port}/ws"
        deadline = time.monotonic() + 20
        while not _listening(port):
            assert proc.poll() is None and time.monotonic() < deadline, "baseline did not start"
            time.sleep(0.05)
        report, _, _ = loadtest(
            tmp_path, "--url", url, "--rooms", "2", "--duration", "2", "--warmup", "1",
            "--no-plot",
        )  # fmt: skip
    finally:
        proc.terminate()
        proc.wait(10)
    assert report["error_count"] == 0 and report["disconnects"] == {}
    assert report["server"]["name"] == "broadcast-baseline"
    assert report["server"]["pids"] == [proc.pid]
    assert report["deliveries"] > 0
    assert report["fanout_ms"]["count"] == report["deliveries"]
    assert report["windows"] == 0, "it only broadcasts"


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


# --- the `timestamps` feature -------------------------------------------------------------


async def test_timestamps_are_offered_and_only_turned_on_when_asked(
    dicehall: ServerProcess,
) -> None:
    asked = await RawClient.open(dicehall.ws, hello={"features": ["timestamps", "telepathy"]})
    plain = await RawClient.open(dicehall.ws, MSGPACK)
    offered = [
        "timestamps",
        "legal_without_view",
        "progress",
        "identity",
        "legal_in_window",
        "lobby_pages",
        "epochs",
    ]
    assert asked.welcome["features"] == offered == plain.welcome["features"]
    assert asked.hello["features"] == ["timestamps"], "unknown features are left off"
    assert plain.hello["features"] == []
    await asked.close()
    await plain.close()


@pytest.mark.parametrize("subprotocol", [JSON, MSGPACK])
async def test_live_room_messages_carry_one_stamp_per_message_for_those_who_asked(
    dicehall: ServerProcess, subprotocol: str
) -> None:
    ada = await RawClient.open(dicehall.ws, subprotocol, {"features": ["timestamps"]})
    bo = await RawClient.open(dicehall.ws, subprotocol, {"features": ["timestamps"]})
    cy = await RawClient.open(dicehall.ws, subprotocol)
    room = (await ada.call("create", game="qwixx", seats=2, public=False))["room"]["room"]
    await ada.call("join", room=room, seat=0)
    await bo.call("join", room=room, seat=1)
    await cy.call("spectate", room=room)
    await ada.call("start", room=room)
    before = time.time() * 1e6
    for _ in range(3):  # three windows: both seats pass whenever they are asked
        window = await cy.next("window")
        answer = {"room": room, "window": window["window"], "action": {"type": "pass"}}
        for seat, client in enumerate((ada, bo)):
            if any(a["seat"] == seat for a in window["actors"]):
                await client.call("act", **answer)
        await cy.next(lambda m: m.get("type") == "window_closed")
    for client in (ada, bo, cy):
        await client.sync()
    streams = [c.room_messages(room) for c in (ada, bo, cy)]
    stamped = [{m["seq"]: m for m in s if m["type"] != "snapshot"} for s in streams]
    common = set(stamped[0]) & set(stamped[1]) & set(stamped[2])
    assert len(common) >= 6
    for seq in common:
        a, b, c = (s[seq] for s in stamped)
        assert a["type"] in STAMPED
        assert a["sent_us"] == b["sent_us"], "one stamp per message, shared by its members"
        assert before - 60e6 < a["sent_us"] < time.time() * 1e6 + 1
        assert "sent_us" not in c, "nobody asked on this connection"
        assert {k: v for k, v in a.items() if k != "sent_us"} == c
    assert all("sent_us" not in m for s in streams for m in s if m["type"] == "snapshot")
    for client in (ada, bo, cy):
        await client.close()


@pytest.mark.parametrize("follow", [True, False])
def test_seats_follow_their_room_to_its_process_unless_told_not_to(
    redis_server: RedisServer, tmp_path: Path, follow: bool
) -> None:
    """Two processes advertising their addresses, every table spanning both: following,
    each seat moves to its room's process before it joins, and not one request crosses
    Redis; with `--no-follow` the seats stay where they are and are forwarded."""
    url = redis_server.url_db(redis_server.fresh_db())
    with (
        running_server("--redis", url, advertise=True) as a,
        running_server("--redis", url, advertise=True) as b,
    ):
        report, _, _ = loadtest(
            tmp_path,
            "--url", a.ws, "--url", b.ws, "--rooms", "4", "--seats", "2", "--duration", "2",
            "--warmup", "1", "--think", "0.2",
            *(() if follow else ("--no-follow",)),
        )  # fmt: skip
        forwarded = sum(metrics(s)["dicehall_commands_forwarded_total"] for s in (a, b))
    assert report["error_count"] == 0, report["errors"]
    assert report["disconnects"] == {}
    assert report["windows"] > 0 and report["windows_expired"] == 0
    if follow:
        assert report["moves"] > 0
        assert forwarded == 0
    else:
        assert report["moves"] == 0
        assert forwarded > 0
