"""Hello and idle time-outs, shortened by the operator's flags, on a real server process."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.support.servers import ServerProcess, running_server

HELLO_MS, IDLE_MS = 600, 900


@pytest.fixture(scope="module")
def quick() -> Iterator[ServerProcess]:
    with running_server(
        "--hello-timeout-ms", str(HELLO_MS), "--idle-timeout-ms", str(IDLE_MS)
    ) as server:
        yield server


@contextlib.contextmanager
def opened(server: ServerProcess) -> Iterator[tuple[ClientConnection, dict[str, object]]]:
    with connect(server.ws, subprotocols=["dicehall.v1.json"]) as ws:  # type: ignore[list-item]
        welcome = json.loads(ws.recv(5))
        assert welcome["type"] == "welcome"
        yield ws, welcome


def closed(ws: ClientConnection, within: float) -> tuple[int, list[dict[str, object]]]:
    """Read until the server closes; its close code and what it said before."""
    said = []
    deadline = time.monotonic() + within
    with pytest.raises(ConnectionClosed) as info:
        while True:
            said.append(json.loads(ws.recv(max(0.01, deadline - time.monotonic()))))
    assert info.value.rcvd is not None, "the server closed, with a code"
    return info.value.rcvd.code, said


def test_the_limits_are_announced_in_welcome(quick: ServerProcess) -> None:
    with opened(quick) as (_, welcome):
        limits = welcome["limits"]
    assert isinstance(limits, dict)
    assert (limits["hello_timeout_ms"], limits["idle_timeout_ms"]) == (HELLO_MS, IDLE_MS)


def test_no_hello_in_time_closes_with_4005(quick: ServerProcess) -> None:
    with opened(quick) as (ws, _):
        start = time.monotonic()
        code, said = closed(ws, within=5)
    assert code == 4005
    assert time.monotonic() - start >= HELLO_MS / 1000 - 0.05
    assert [m["type"] for m in said] == ["goodbye"]


def test_silence_after_hello_closes_with_4004_and_pings_keep_it_open(
    quick: ServerProcess,
) -> None:
    with opened(quick) as (ws, _):
        ws.send(json.dumps({"type": "hello", "id": 1, "client": "test"}))
        assert json.loads(ws.recv(5))["ok"] is True
        for rid in range(2, 8):  # 6 x 0.3 s: twice the idle time-out, never silent that long
            time.sleep(0.3)
            ws.send(json.dumps({"type": "ping", "id": rid, "time": 0}))
            assert json.loads(ws.recv(5))["id"] == rid
        start = time.monotonic()
        code, said = closed(ws, within=5)
    assert code == 4004
    assert time.monotonic() - start >= IDLE_MS / 1000 - 0.05
    assert [m["type"] for m in said] == ["goodbye"]
