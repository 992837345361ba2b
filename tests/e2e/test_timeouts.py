"""Hello and idle time-outs, shortened by the operator's flags, on a real server process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.asyncio.client import connect as async_connect
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Subprotocol

from tests.support.frames import StreamClient
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


async def test_silence_after_hello_closes_with_4004_and_protocol_pings_keep_it_open(
    quick: ServerProcess,
) -> None:
    """A client that answers no WebSocket ping (a bare TCP stream) is heard only through
    its frames: `ping` requests keep it open, silence closes it with a goodbye."""
    client = await StreamClient.open(quick.port)
    try:
        client.writer.write(StreamClient.request("hello", 1, client="raw"))
        assert await client.replies(1) == [1]
        for rid in range(2, 8):  # 6 x 0.3 s: twice the idle time-out, never silent that long
            await asyncio.sleep(0.3)
            client.writer.write(StreamClient.request("ping", rid, time=0))
            assert await client.replies(1) == [rid]
        start = time.monotonic()
        said: list[dict[str, Any]] = []
        while True:
            opcode, data = await client.frame()
            if opcode == 8:
                break
            if opcode == 1:
                said.append(json.loads(data))
        assert int.from_bytes(data[:2], "big") == 4004
        assert time.monotonic() - start >= IDLE_MS / 1000 - 0.05
        assert [m["type"] for m in said] == ["goodbye"]
        assert client.pings, "the server pinged, and was not answered"
    finally:
        client.close()


@pytest.mark.parametrize("flags", [(), ("--deflate",)], ids=["fast", "extension"])
async def test_a_client_whose_library_answers_pings_stays_open_while_silent(
    flags: tuple[str, ...],
) -> None:
    """docs/protocol.md: a connection is closed when nothing, no frame and no pong, is
    heard for the idle time-out; the server pings at least three times per time-out."""
    with running_server(
        "--hello-timeout-ms", str(HELLO_MS), "--idle-timeout-ms", str(IDLE_MS), *flags
    ) as server:
        async with async_connect(
            server.ws,
            subprotocols=[Subprotocol("dicehall.v1.json")],
            ping_interval=None,  # (it sends no ping of its own; it answers the server's)
            compression="deflate" if flags else None,
        ) as ws:
            welcome = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert welcome["limits"]["heartbeat_ms"] == IDLE_MS // 3
            await ws.send(json.dumps({"type": "hello", "id": 1, "client": "silent"}))
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["ok"] is True
            await asyncio.sleep(3 * IDLE_MS / 1000)  # three idle time-outs of silence
            await ws.send(json.dumps({"type": "ping", "id": 2, "time": 0}))
            reply = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert reply["type"] == "reply" and reply["id"] == 2 and reply["ok"]
