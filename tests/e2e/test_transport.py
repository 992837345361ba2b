"""The WebSocket transport under `dicehall serve` (server/edge/ws/): frames as a client sends
them, written by hand, and which path each connection took (`/metrics`).

The fast path must be the one taken: an upgrade of uvicorn or websockets that turned it
off would fail here rather than quietly cost CPU in production.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Subprotocol

from dicehall.server.edge.ws import socket_of
from tests.support.frames import StreamClient, client_frame
from tests.support.servers import running_server

from .helpers import metrics

TRANSPORTS = ("fast", "extension", "asgi")


def transports(server: Any) -> dict[str, float]:
    """dicehall_websocket_connections_total by transport."""
    seen = metrics(server)
    return {
        t: seen.get(f'dicehall_websocket_connections_total{{transport="{t}"}}', 0.0)
        for t in TRANSPORTS
    }


async def test_under_dicehall_serve_every_connection_takes_the_fast_path() -> None:
    with running_server() as server:
        for encoding in ("json", "msgpack"):
            async with connect(
                server.ws, subprotocols=[Subprotocol(f"dicehall.v1.{encoding}")]
            ) as ws:
                await asyncio.wait_for(ws.recv(), 10)  # the welcome
                hello = {"type": "hello", "id": 1, "client": "transport-test"}
                if encoding == "json":
                    await ws.send(json.dumps(hello))
                    reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
                else:
                    await ws.send(msgpack.packb(hello))
                    reply = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 10))
                assert reply["type"] == "reply" and reply["ok"], reply
        assert transports(server) == {"fast": 2.0, "extension": 0.0, "asgi": 0.0}


def test_frames_take_the_asgi_path_unless_the_scope_offers_a_socket() -> None:
    assert socket_of({"type": "websocket"}) is None
    assert socket_of({"type": "websocket", "extensions": {"websocket.http.response": {}}}) is None


async def test_with_per_message_deflate_frames_still_arrive_in_order() -> None:
    """Deflate needs the extension on every frame: websockets frames those connections."""
    with running_server("--deflate") as server:
        async with connect(
            server.ws, subprotocols=[Subprotocol("dicehall.v1.json")], compression="deflate"
        ) as ws:
            assert ws.protocol.extensions, "deflate was negotiated"
            ids = itertools.count(1)

            async def call(kind: str, **fields: Any) -> Any:
                rid = next(ids)
                await ws.send(json.dumps({"type": kind, "id": rid, **fields}))
                while True:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 10))
                    seen.append(message)
                    if message.get("type") == "reply" and message["id"] == rid:
                        assert message["ok"], message
                        return message["result"]

            seen: list[dict[str, Any]] = []
            await call("hello", client="deflate-test")
            room = (await call("create", game="qwixx", seats=2, public=False))["room"]["room"]
            await call("join", room=room, seat=0)
            await call("add_bots", room=room)
            await call("start", room=room)
            for i in range(5):
                await call("chat", room=room, text=f"line {i}")
            await call("ping")
        live = [m for m in seen if m.get("room") == room and m["type"] != "snapshot"]
        seqs = [m["seq"] for m in live]
        assert len(seqs) >= 7 and seqs == list(range(seqs[0], seqs[0] + len(seqs)))
        assert [m["text"] for m in live if m["type"] == "chat"] == [f"line {i}" for i in range(5)]
        assert transports(server) == {"fast": 0.0, "extension": 1.0, "asgi": 0.0}


async def test_a_url_without_a_path_reaches_the_server_and_other_paths_get_403() -> None:
    with running_server() as server:
        bare = f"ws://127.0.0.1:{server.port}"
        async with connect(bare, subprotocols=[Subprotocol("dicehall.v1.json")]) as ws:
            assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "welcome"
        with pytest.raises(InvalidStatus) as refused:
            async with connect(f"{bare}/nowhere", subprotocols=[Subprotocol("dicehall.v1.json")]):
                pass
        assert refused.value.response.status_code == 403


async def test_requests_stay_in_order_however_the_bytes_arrive() -> None:
    with running_server() as server:
        client = await StreamClient.open(server.port)
        try:
            client.writer.write(StreamClient.request("hello", 1, client="raw"))
            assert await client.replies(1) == [1]
            # Many requests in one write (reads pause, then resume), then one split at every
            # byte, then one with a 16-bit length.
            client.writer.write(b"".join(StreamClient.request("ping", i) for i in range(2, 30)))
            data = StreamClient.request("ping", 30)
            for i in range(len(data)):
                client.writer.write(data[i : i + 1])
                await client.writer.drain()
                await asyncio.sleep(0.001)
            client.writer.write(client_frame(1, b'{"type": "ping", "id": 31}' + b" " * 300))
            assert await client.replies(30) == list(range(2, 32))
            # A ping between requests is answered, and reads go on the fast way.
            client.writer.write(
                StreamClient.request("ping", 32)
                + client_frame(9, b"are you there")
                + StreamClient.request("ping", 33)
            )
            assert await client.replies(2) == [32, 33]
            assert client.pongs == [b"are you there"]
            client.writer.write(client_frame(10, b"unasked"))  # an unsolicited pong
            client.writer.write(StreamClient.request("ping", 34))
            assert await client.replies(1) == [34]
            # A fragmented message goes to websockets' parser, still in order.
            text = json.dumps({"type": "ping", "id": 35}).encode()
            client.writer.write(
                client_frame(1, text[:5], fin=False)
                + client_frame(9, b"mid")
                + client_frame(0, text[5:])
                + StreamClient.request("ping", 36)
            )
            assert await client.replies(2) == [35, 36]
            assert client.pongs == [b"are you there", b"mid"]
            # The closing handshake is websockets'.
            client.writer.write(client_frame(8, (1000).to_bytes(2, "big")))
            assert await client.closed_with() == 1000
            assert await asyncio.wait_for(client.reader.read(), 10) == b""
        finally:
            client.close()


async def test_a_text_frame_that_is_not_utf8_is_answered_malformed_and_logs_nothing() -> None:
    """docs/protocol.md: error 1001 `malformed`, the connection stays open (only
    `too-large` closes), whether the frame came whole or in fragments."""
    with running_server() as server:
        client = await StreamClient.open(server.port)
        try:
            client.writer.write(StreamClient.request("hello", 1, client="raw"))
            assert await client.replies(1) == [1]
            bad = b'{"type": "ping", "id": 2, "x": "\xff"}'
            client.writer.write(client_frame(1, bad))
            client.writer.write(client_frame(1, bad[:9], fin=False) + client_frame(0, bad[9:]))
            for _ in range(2):
                opcode, data = await client.frame()
                error = json.loads(data)
                assert opcode == 1 and error["type"] == "error", error
                assert (error["error"]["code"], error["error"]["name"]) == (1001, "malformed")
            client.writer.write(StreamClient.request("ping", 3))
            assert await client.replies(1) == [3], "still open"
        finally:
            await client.aclose()
        assert server.terminate() == 0
        assert server.output() == "", "nothing logged at --log-level warning"


async def test_errors_and_limits_are_websockets_own() -> None:
    """Each frame that breaks a rule closes with the code it closed with before."""
    cases = {
        # (only the header: the server refuses on it, and closing with the rest of a frame
        # still unread would reset the connection before the close frame is read)
        "over uvicorn's size limit": (client_frame(2, bytes(70_000))[:14], 1009),
        "over dicehall's frame limit": (client_frame(1, b" " * 20_000), 1009),
        "unmasked": (client_frame(1, b"{}", masked=False), 1002),
        "reserved bits": (client_frame(1, b"{}", rsv=4), 1002),
        "unknown opcode": (client_frame(3, b""), 1002),
        "continuation first": (client_frame(0, b"{}"), 1002),
        "ping too long": (client_frame(9, bytes(126)), 1002),
    }
    with running_server() as server:
        for name, (frame, code) in cases.items():
            client = await StreamClient.open(server.port)
            try:
                client.writer.write(StreamClient.request("hello", 1, client="raw"))
                assert await client.replies(1) == [1], name
                client.writer.write(frame)
                assert await client.closed_with() == code, name
            finally:
                client.close()


async def test_a_connection_the_server_closes_is_let_go_without_waiting_for_the_peer() -> None:
    """The endpoint leaves at `websocket.close`, as on the ASGI path, not when the peer
    answers the close (here it never does) or the close time-out cuts the socket."""
    with running_server() as server:
        client = await StreamClient.open(server.port)
        try:
            client.writer.write(StreamClient.request("hello", 1, client="raw"))
            assert await client.replies(1) == [1]
            assert "dicehall_connections 1" in server.get("/metrics")[1]
            client.writer.write(client_frame(1, b" " * 20_000))  # over max_frame
            assert await client.closed_with() == 1009
            deadline = time.monotonic() + 3
            while "dicehall_connections 0" not in server.get("/metrics")[1]:
                assert time.monotonic() < deadline, "the endpoint waits for the peer"
                await asyncio.sleep(0.05)
        finally:
            client.close()
