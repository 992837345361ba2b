"""server/edge/ws/protocol.py: `WebSocketProtocol` under a real uvicorn, frames written by hand
(tests/support/frames.py): requests that are no WebSocket handshake, fragments, control
frames, protocol errors, the closing handshake from either side, a half-closed client,
reads paused by a burst, keepalive, per-message deflate, and uvicorn's shutdown of every
kind of connection.

The whole server's transport is tested in tests/e2e/test_transport.py; these tests hold
the protocol to its contract with any ASGI app, each case in a fraction of a second."""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from dicehall.protocol.wsframes import frame
from dicehall.server.edge.ws import CLOSE_TIMEOUT
from dicehall.server.edge.ws.asgi import Message, Receive, Send
from dicehall.server.edge.ws.protocol import PAUSE_AT, WebSocketProtocol
from tests.support.frames import StreamClient, client_frame
from tests.support.wait import eventually

from .serving import NO_PROXY, UPGRADE, closed, protocol_of, raw_open, read_to_eof, serving

TEXT, BINARY, CONT, CLOSE, PING, PONG = 0x1, 0x2, 0x0, 0x8, 0x9, 0xA

Scope = MutableMapping[str, Any]


def close_frame(code: int, reason: bytes = b"") -> bytes:
    return client_frame(CLOSE, code.to_bytes(2, "big") + reason)


class Recorder:
    """An ASGI app that accepts, keeps its connection's protocol, and records every
    message it receives until the disconnect."""

    def __init__(self) -> None:
        self.sockets: list[WebSocketProtocol] = []
        self.received: list[Message] = []
        self.called = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.called += 1
        await receive()
        await send({"type": "websocket.accept"})
        self.sockets.append(protocol_of(scope))
        while True:
            message = await receive()
            self.received.append(message)
            if message["type"] == "websocket.disconnect":
                return

    async def socket(self) -> WebSocketProtocol:
        await eventually(lambda: bool(self.sockets), "the accept")
        return self.sockets[-1]

    def data(self) -> list[str | bytes]:
        return [m.get("text", m.get("bytes")) for m in self.received if "text" in m or "bytes" in m]

    def disconnected(self) -> bool:
        return any(m["type"] == "websocket.disconnect" for m in self.received)


async def opened(port: int) -> StreamClient:
    client, head = await raw_open(port)
    assert head.startswith(b"HTTP/1.1 101 "), head
    return client


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        (UPGRADE.replace(b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", b""), b"Key"),
        (UPGRADE.replace(b"Version: 13", b"Version: 8"), b"Version"),
    ],
    ids=["no-key", "old-version"],
)
async def test_an_upgrade_that_is_no_websocket_handshake_is_refused_before_the_app(
    headers: bytes, why: bytes
) -> None:
    app = Recorder()
    async with serving(app) as server:
        request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + b"\r\n"
        client, head = await raw_open(server.port, request)
        try:
            assert head.startswith(b"HTTP/1.1 400 "), head
            body = await read_to_eof(client)  # (then the server closes)
            assert b"Sec-WebSocket-" + why in body, body
        finally:
            await closed(client)
    assert app.called == 0


async def test_fragments_are_joined_around_a_ping_and_the_ping_is_answered() -> None:
    app = Recorder()
    async with serving(app) as server:
        client = await opened(server.port)
        try:
            socket = await app.socket()
            assert socket.heard_at == 0.0
            client.writer.write(
                client_frame(TEXT, "hé".encode()[:2], fin=False)
                + client_frame(PING, b"mid")
                + client_frame(CONT, "hé".encode()[2:] + b"llo")
                + client_frame(BINARY, b"\x00\x01", fin=False)
                + client_frame(CONT, b"\x02", fin=False)
                + client_frame(CONT, b"\x03")
                + client_frame(TEXT, b"whole")
            )
            assert await client.frame() == (PONG, b"mid")
            assert socket.heard_at > 0.0, "a ping is a sign of life"
            await eventually(lambda: len(app.data()) == 3, "three messages")
            assert app.data() == ["héllo", b"\x00\x01\x02\x03", "whole"]
        finally:
            await closed(client)


async def test_text_that_is_not_utf8_reaches_the_app_escaped_whole_or_in_fragments() -> None:
    """(The app answers it: dicehall's endpoint with `malformed`, docs/protocol.md.)"""
    app = Recorder()
    async with serving(app) as server:
        client = await opened(server.port)
        try:
            await app.socket()
            client.writer.write(
                client_frame(TEXT, b"a\xff")
                + client_frame(TEXT, b"b\xfe", fin=False)
                + client_frame(CONT, b"\xfd")
            )
            await eventually(lambda: len(app.data()) == 2, "both messages")
            assert app.data() == ["a\udcff", "b\udcfe\udcfd"]
        finally:
            await closed(client)


async def test_a_pong_the_client_sends_counts_as_a_sign_of_life() -> None:
    app = Recorder()
    async with serving(app) as server:
        client = await opened(server.port)
        try:
            socket = await app.socket()
            client.writer.write(client_frame(PONG, b"unasked"))
            await eventually(lambda: socket.heard_at > 0.0, "the pong counted")
        finally:
            await closed(client)


@pytest.mark.parametrize(
    ("frames", "code"),
    [
        (client_frame(TEXT, b"{}", masked=False), 1002),
        (client_frame(PING, bytes(126)), 1002),  # (a control frame over 125 bytes)
        (client_frame(BINARY, bytes(2000))[:8], 1009),  # (the header says enough)
    ],
    ids=["unmasked", "long-ping", "over-ws-max-size"],
)
async def test_a_frame_that_breaks_a_rule_closes_with_its_code_and_the_app_hears_of_it(
    frames: bytes, code: int
) -> None:
    app = Recorder()
    async with serving(app, ws_max_size=1000) as server:
        client = await opened(server.port)
        try:
            await app.socket()
            client.writer.write(frames)
            assert await client.closed_with() == code
            await eventually(app.disconnected, "the app told")
            assert app.data() == []
        finally:
            await closed(client)


async def test_the_clients_close_is_answered_and_reaches_the_app() -> None:
    app = Recorder()
    async with serving(app) as server:
        client = await opened(server.port)
        try:
            await app.socket()
            client.writer.write(client_frame(TEXT, b"before") + close_frame(4001, b"bye"))
            assert await client.frame() == (CLOSE, (4001).to_bytes(2, "big") + b"bye")
            assert await read_to_eof(client) == b"", "the server closes the TCP connection"
        finally:
            await closed(client)
        await eventually(app.disconnected, "the app told")
    assert app.received == [
        {"type": "websocket.receive", "text": "before"},
        {"type": "websocket.disconnect", "code": 4001, "reason": "bye"},
    ]


async def test_data_after_the_apps_close_is_dropped_until_the_clients_close_arrives() -> None:
    sockets: list[WebSocketProtocol] = []
    go = asyncio.Event()
    after: list[Message] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        sockets.append(protocol_of(scope))
        await send({"type": "websocket.close", "code": 4000, "reason": "done"})
        await go.wait()
        after.append(await receive())

    async with serving(app) as server:
        client = await opened(server.port)
        try:
            assert await client.closed_with() == 4000
            client.writer.write(client_frame(TEXT, b"late") + close_frame(4000))
            assert await read_to_eof(client) == b"", "the closing handshake completed"
            await eventually(lambda: sockets[0].lost, "the connection gone")
            go.set()
            await eventually(lambda: bool(after), "the app's receive")
        finally:
            await closed(client)
    assert after == [{"type": "websocket.disconnect", "code": 4000, "reason": "done"}]


@pytest.mark.parametrize("by", ["app", "protocol-error"])
async def test_a_close_the_client_never_reads_is_dropped_after_the_close_time_out(
    by: str,
) -> None:
    """The client reads nothing: the close frame stays behind what it has not read, and
    the transport's `close()` would wait for ever to flush; so the socket is dropped,
    whether the app closed or a frame that breaks a rule made `websockets` fail it."""
    sockets: list[WebSocketProtocol] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        socket = protocol_of(scope)
        sockets.append(socket)
        while socket.ready():  # until the buffers are full: the client reads nothing
            socket.write(frame(bytes(1 << 16), binary=True))
            await asyncio.sleep(0)
        if by == "app":
            socket.close(4000, "")
        await receive()

    async with serving(app) as server:
        client, _ = await raw_open(server.port, rcvbuf=4096)
        try:
            await eventually(lambda: bool(sockets) and not sockets[0].ready(), "full buffers")
            if by == "protocol-error":
                client.writer.write(client_frame(0x3, b""))  # a reserved opcode: 1002
            await eventually(lambda: sockets[0].closing, "the close")
            closed_at = asyncio.get_running_loop().time()
            await eventually(lambda: sockets[0].lost, "the socket dropped", CLOSE_TIMEOUT + 5)
            assert asyncio.get_running_loop().time() - closed_at >= CLOSE_TIMEOUT - 0.5
        finally:
            client.writer.transport.abort()


async def test_a_client_that_stops_sending_is_closed_and_the_app_told() -> None:
    app = Recorder()
    async with serving(app) as server:
        client = await opened(server.port)
        try:
            await app.socket()
            client.writer.write(client_frame(TEXT, b"last"))
            client.writer.write_eof()  # a half-close, no close frame
            await read_to_eof(client)
            await eventually(app.disconnected, "the app told")
        finally:
            await closed(client)
    assert app.received == [
        {"type": "websocket.receive", "text": "last"},
        {"type": "websocket.disconnect", "code": 1006, "reason": ""},
    ]


class Slow:
    """Accepts, then reads nothing until `go` is set; then reads `count` messages and
    closes with 4000 (or, with `close_first`, closes first)."""

    def __init__(self, count: int, close_first: bool = False) -> None:
        self.count = count
        self.close_first = close_first
        self.go = asyncio.Event()
        self.sockets: list[WebSocketProtocol] = []
        self.received: list[Message] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        self.sockets.append(protocol_of(scope))
        await self.go.wait()
        if self.close_first:
            await send({"type": "websocket.close", "code": 4000})
        for _ in range(self.count):
            self.received.append(await receive())
        await send({"type": "websocket.close", "code": 4000})


async def test_a_burst_pauses_reading_until_the_app_has_caught_up() -> None:
    burst = PAUSE_AT + 2
    app = Slow(burst + 1)
    async with serving(app) as server:
        client = await opened(server.port)
        try:
            await eventually(lambda: bool(app.sockets), "the accept")
            socket = app.sockets[0]
            client.writer.write(b"".join(client_frame(TEXT, b"%d" % i) for i in range(burst)))
            await eventually(lambda: socket._paused, "reads paused")
            assert socket.waiting
            app.go.set()
            await eventually(lambda: len(app.received) == burst, "the burst read")
            # Reading went on once the app had read all: the next frame arrives.
            client.writer.write(client_frame(TEXT, b"next"))
            assert await client.closed_with() == 4000
        finally:
            await closed(client)
    texts = [m["text"] for m in app.received]
    assert texts == [str(i) for i in range(burst)] + ["next"]


async def test_a_close_while_reads_are_paused_still_reads_the_clients_close() -> None:
    app = Slow(0, close_first=True)
    async with serving(app) as server:
        client = await opened(server.port)
        try:
            await eventually(lambda: bool(app.sockets), "the accept")
            socket = app.sockets[0]
            client.writer.write(b"".join(client_frame(TEXT, b"x") for _ in range(PAUSE_AT)))
            await eventually(lambda: socket._paused, "reads paused")
            app.go.set()
            assert await client.closed_with() == 4000
            client.writer.write(close_frame(4000))
            # Read at once, not cut off by the close time-out.
            assert await read_to_eof(client, CLOSE_TIMEOUT / 2) == b""
        finally:
            await closed(client)


async def test_a_client_that_answers_no_ping_is_closed_with_1011() -> None:
    app = Recorder()
    async with serving(app, ws_ping_interval=0.05, ws_ping_timeout=0.1) as server:
        client = await opened(server.port)
        try:
            await app.socket()
            opcode, _ = await client.frame()
            assert opcode == PING
            opcode, data = await client.frame()
            assert (opcode, data) == (CLOSE, (1011).to_bytes(2, "big") + b"keepalive ping timeout")
            await eventually(app.disconnected, "the app told")
        finally:
            await closed(client)


async def test_a_client_that_answers_the_pings_stays_and_each_pong_counts() -> None:
    app = Recorder()
    async with (
        serving(app, ws_ping_interval=0.05, ws_ping_timeout=0.5) as server,
        connect(server.ws, **NO_PROXY) as ws,
    ):
        socket = await app.socket()
        await eventually(lambda: socket.heard_at > 0.0, "a pong")
        first = socket.heard_at
        await eventually(lambda: socket.heard_at > first, "another pong")
        await ws.send("still here")
        await eventually(lambda: app.data() == ["still here"], "the message")
        assert not socket.closing


async def test_with_per_message_deflate_messages_travel_compressed_both_ways() -> None:
    sockets: list[WebSocketProtocol] = []

    async def echo(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        sockets.append(protocol_of(scope))
        while (message := await receive())["type"] != "websocket.disconnect":
            await send({**message, "type": "websocket.send"})

    text = json.dumps({"type": "chat", "text": "words " * 200})
    async with (
        serving(echo, ws_per_message_deflate=True) as server,
        connect(server.ws, compression="deflate", **NO_PROXY) as ws,
    ):
        assert ws.protocol.extensions, "deflate negotiated"
        await ws.send(text)
        assert await asyncio.wait_for(ws.recv(), 10) == text
        await ws.send(b"\x00" * 1000)
        assert await asyncio.wait_for(ws.recv(), 10) == b"\x00" * 1000
        assert not sockets[0].fast


async def test_without_deflate_in_the_config_it_is_not_offered() -> None:
    app = Recorder()
    async with (
        serving(app, ws_per_message_deflate=False) as server,
        connect(server.ws, compression="deflate", **NO_PROXY) as ws,
    ):
        assert not ws.protocol.extensions
        assert (await app.socket()).fast


async def test_a_shutdown_answers_every_connection_by_its_state() -> None:
    """uvicorn's shutdown (SIGTERM) calls `shutdown()` on each connection: a handshake not
    answered yet gets a 500, an open connection is closed with 1012 or handed to its
    `on_shutdown`, one already closing is cut without waiting for the close time-out."""
    said: list[str] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        socket = protocol_of(scope)
        await receive()
        if scope["path"] == "/unanswered":
            said.append("waiting")
            await eventually(lambda: socket.closing, "the shutdown's answer")
            return
        await send({"type": "websocket.accept"})
        if scope["path"] == "/goodbye":

            def goodbye() -> None:
                said.append("goodbye")
                socket.send([b"goodbye"], binary=False)
                socket.close(1001, "see you")

            socket.on_shutdown = goodbye
        elif scope["path"] == "/closing":
            await send({"type": "websocket.close", "code": 4000})
        said.append(scope["path"])
        while (await receive())["type"] != "websocket.disconnect":
            pass

    async with serving(app) as server:
        request = b"GET /unanswered HTTP/1.1\r\nHost: x\r\n" + UPGRADE + b"\r\n"
        unanswered = asyncio.ensure_future(raw_open(server.port, request))
        plain = await connect(server.ws.replace("/ws", "/plain"), **NO_PROXY)
        leaving = await connect(server.ws.replace("/ws", "/goodbye"), **NO_PROXY)
        closing, head = await raw_open(
            server.port, b"GET /closing HTTP/1.1\r\nHost: x\r\n" + UPGRADE + b"\r\n"
        )
        try:
            assert head.startswith(b"HTTP/1.1 101 ")
            assert await closing.closed_with() == 4000  # (and no answer from this client)
            await eventually(lambda: len(said) == 4, "every app running")
            await asyncio.wait_for(server.stop(), CLOSE_TIMEOUT / 2)
            refused, head = await asyncio.wait_for(unanswered, 10)
            await closed(refused)
            assert head.startswith(b"HTTP/1.1 500 ")
            with pytest.raises(ConnectionClosed) as ended:
                await plain.recv()
            assert ended.value.rcvd is not None and ended.value.rcvd.code == 1012
            assert await leaving.recv() == "goodbye"
            with pytest.raises(ConnectionClosed) as ended:
                await leaving.recv()
            assert ended.value.rcvd is not None
            assert (ended.value.rcvd.code, ended.value.rcvd.reason) == (1001, "see you")
            assert await read_to_eof(closing) == b""
        finally:
            await plain.close()
            await leaving.close()
            await closed(closing)
    assert sorted(said) == ["/closing", "/goodbye", "/plain", "goodbye", "waiting"]
