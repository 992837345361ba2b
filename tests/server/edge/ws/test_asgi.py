"""server/edge/ws/asgi.py: the ASGI app's side of a `WebSocketProtocol` connection, under a
real uvicorn with small apps: the scope, the handshake's answers (accept, close, the
`websocket.http.response` denial, the app's failures), messages both ways and the closes
each side starts, and a `send` to a client that went away."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Subprotocol

from dicehall.server.edge.ws import SOCKET_EXTENSION
from dicehall.server.edge.ws.asgi import Message, Receive, Send
from dicehall.server.edge.ws.protocol import WebSocketProtocol
from tests.support.wait import eventually

from .serving import NO_PROXY, UPGRADE, closed, protocol_of, raw_open, read_to_eof, serving

Scope = MutableMapping[str, Any]


async def refused(url: str) -> InvalidStatus:
    """The handshake's answer to a connection the app does not accept."""
    with pytest.raises(InvalidStatus) as failed:
        async with connect(url, open_timeout=10, **NO_PROXY):
            pass
    return failed.value


async def test_the_scope_says_what_the_client_asked_for() -> None:
    scopes: list[Scope] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        scopes.append(dict(scope))
        await receive()
        await send({"type": "websocket.close"})

    async with serving(app, root_path="/base") as server:
        request = (
            b"GET /a%20b/c?x=1&y=%20 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"X-Name: caf\xe9\r\n"  # (ISO-8859-1, as HTTP/1.1 allows)
            b"Sec-WebSocket-Protocol: one, two\r\nSec-WebSocket-Protocol: three\r\n"
            + UPGRADE
            + b"\r\n"
        )
        client, head = await raw_open(server.port, request)
        await closed(client)
    assert head.startswith(b"HTTP/1.1 403 ")
    [scope] = scopes
    assert scope["type"] == "websocket" and scope["scheme"] == "ws"
    assert scope["asgi"] == {"version": "3.0", "spec_version": "2.4"}
    assert scope["server"] == ("127.0.0.1", server.port)
    assert scope["client"][0] == "127.0.0.1" and isinstance(scope["client"][1], int)
    assert scope["root_path"] == "/base"
    assert scope["path"] == "/base/a b/c"
    assert scope["raw_path"] == b"/base/a%20b/c"
    assert scope["query_string"] == b"x=1&y=%20"
    assert (b"x-name", b"caf\xe9") in scope["headers"]
    assert (b"host", b"127.0.0.1") in scope["headers"]
    assert scope["subprotocols"] == ["one", "two", "three"]
    assert scope["state"] == {}
    assert set(scope["extensions"]) == {"websocket.http.response", SOCKET_EXTENSION}
    assert isinstance(scope["extensions"][SOCKET_EXTENSION]["socket"], WebSocketProtocol)


APP_DATE = "Thu, 01 Jan 1970 00:00:00 GMT"


@pytest.mark.parametrize(
    ("date_header", "app_date"),
    [(True, None), (False, None), (False, APP_DATE)],
    ids=["uvicorns-date", "websockets-date", "apps-date"],
)
async def test_the_accept_carries_the_apps_subprotocol_and_headers_and_one_date(
    date_header: bool, app_date: str | None
) -> None:
    """The 101 has the app's headers after uvicorn's defaults, and one Date: uvicorn's,
    else the app's, else the one `websockets` writes."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        headers = [(b"x-room", b"lobby")]
        if app_date is not None:
            headers.append((b"Date", app_date.encode()))
        await send({"type": "websocket.accept", "subprotocol": "two", "headers": headers})
        await send({"type": "websocket.close"})

    async with serving(app, date_header=date_header) as server:
        protocols = [Subprotocol("one"), Subprotocol("two")]
        async with connect(server.ws, subprotocols=protocols, **NO_PROXY) as ws:
            assert ws.subprotocol == "two"
            response = ws.response
            assert response is not None
            assert response.headers["X-Room"] == "lobby"
            assert response.headers["Server"] == "uvicorn"  # (uvicorn's own default header)
            [date] = response.headers.get_all("Date")
            if app_date is not None:
                assert date == app_date
            with pytest.raises(ConnectionClosed) as ended:
                await ws.recv()
            assert ended.value.rcvd is not None and ended.value.rcvd.code == 1000


async def test_messages_go_both_ways_and_the_clients_close_reaches_the_app() -> None:
    received: list[Message] = []
    after: list[BaseException] = []

    async def echo(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        while True:
            message = await receive()
            received.append(message)
            if message["type"] == "websocket.disconnect":
                break
            if message.get("text") is not None:
                await send({"type": "websocket.send", "text": message["text"].upper()})
            else:
                await send({"type": "websocket.send", "bytes": message["bytes"][::-1]})
        try:
            await send({"type": "websocket.send", "text": "too late"})
        except OSError as exc:  # the spec's exception for a send on a closed connection
            after.append(exc)

    async with serving(echo) as server, connect(server.ws, **NO_PROXY) as ws:
        await ws.send("héllo")
        assert await asyncio.wait_for(ws.recv(), 10) == "HÉLLO"
        await ws.send(b"\x00\x01\x02")
        assert await asyncio.wait_for(ws.recv(), 10) == b"\x02\x01\x00"
        await ws.close(4001, "bye")
        await eventually(lambda: len(after) == 1, "the app's send after the close")
    assert received == [
        {"type": "websocket.receive", "text": "héllo"},
        {"type": "websocket.receive", "bytes": b"\x00\x01\x02"},
        {"type": "websocket.disconnect", "code": 4001, "reason": "bye"},
    ]


async def test_the_apps_close_goes_out_with_its_code_and_later_sends_fail() -> None:
    after: list[Message | BaseException] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": "last words"})
        await send({"type": "websocket.close", "code": 4000, "reason": "done"})
        after.append(await receive())  # a disconnect, at once: no more messages past a close
        try:
            await send({"type": "websocket.send", "text": "after the close"})
        except OSError as exc:
            after.append(exc)

    async with serving(app) as server, connect(server.ws, **NO_PROXY) as ws:
        assert await asyncio.wait_for(ws.recv(), 10) == "last words"
        with pytest.raises(ConnectionClosed) as ended:
            await asyncio.wait_for(ws.recv(), 10)
        assert ended.value.rcvd is not None
        assert (ended.value.rcvd.code, ended.value.rcvd.reason) == (4000, "done")
        await eventually(lambda: len(after) == 2, "the app's receive and send after its close")
    assert after[0] == {"type": "websocket.disconnect", "code": 4000, "reason": "done"}
    assert isinstance(after[1], OSError)


def ends_after_accepting(trouble: Exception | None) -> Callable[..., Awaitable[None]]:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        if trouble is not None:
            raise trouble

    return app


@pytest.mark.parametrize(
    ("trouble", "code", "logged"),
    [
        (None, 1000, None),
        (ValueError("boom"), 1011, "Exception in the ASGI application"),
        (ConnectionResetError("gone"), 1011, "Exception in the ASGI application"),
    ],
    ids=["returns", "raises", "raises-oserror"],
)
async def test_an_app_that_ends_after_accepting_closes_the_connection(
    trouble: Exception | None, code: int, logged: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, "dicehall.websocket")
    async with (
        serving(ends_after_accepting(trouble)) as server,
        connect(server.ws, **NO_PROXY) as ws,
    ):
        with pytest.raises(ConnectionClosed) as ended:
            await asyncio.wait_for(ws.recv(), 10)
    assert ended.value.rcvd is not None and ended.value.rcvd.code == code
    messages = [r.getMessage() for r in caplog.records if r.name == "dicehall.websocket"]
    assert messages == ([] if logged is None else [logged])


@pytest.mark.parametrize("then_raise", [False, True], ids=["returns", "then-raises"])
async def test_a_close_before_the_accept_is_a_403(
    then_raise: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """(An app that fails after refusing keeps its answer: no 500 after the 403.)"""
    caplog.set_level(logging.ERROR, "dicehall.websocket")

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        assert await receive() == {"type": "websocket.connect"}
        await send({"type": "websocket.close", "code": 4003})
        if then_raise:
            raise ValueError("after the answer")

    async with serving(app) as server:
        client, head = await raw_open(server.port)
        try:
            assert head.startswith(b"HTTP/1.1 403 ")
            await read_to_eof(client)  # (nothing after the 403's body)
        finally:
            await closed(client)
        await eventually(lambda: not server.server.server_state.tasks, "the app's end")
    logged = [r.getMessage() for r in caplog.records if r.name == "dicehall.websocket"]
    assert logged == (["Exception in the ASGI application"] if then_raise else [])


async def test_receive_before_the_accept_says_disconnect_rather_than_waiting() -> None:
    """(Nothing can arrive before the handshake is answered: a second `receive` would
    otherwise hang the app.)"""
    seen: list[Message] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(await receive())
        seen.append(await receive())
        await send({"type": "websocket.close"})

    async with serving(app) as server:
        assert (await refused(server.ws)).response.status_code == 403
    assert seen == [
        {"type": "websocket.connect"},
        {"type": "websocket.disconnect", "code": 1006, "reason": ""},
    ]


async def test_a_denial_response_carries_the_apps_status_headers_and_body() -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        start = {"status": 418, "headers": [(b"x-why", b"tea")]}
        await send({"type": "websocket.http.response.start", **start})
        await send({"type": "websocket.http.response.body", "body": b"short ", "more_body": True})
        await send({"type": "websocket.http.response.body", "body": b"and stout"})

    async with serving(app) as server:
        response = (await refused(server.ws)).response
    assert (response.status_code, response.reason_phrase) == (418, "I'm a Teapot")
    assert response.body == b"short and stout"
    headers = response.headers
    assert headers["X-Why"] == "tea"
    assert headers["Content-Length"] == "15"
    assert headers["Content-Type"] == "text/plain; charset=utf-8"
    assert headers["Connection"] == "close"
    assert "Date" in headers


async def test_a_denial_keeps_the_headers_the_app_set_and_an_unknown_status_has_no_phrase() -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        headers = [(b"content-type", b"application/json"), (b"date", b"yesterday")]
        await send({"type": "websocket.http.response.start", "status": 599, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": b"{}"})

    async with serving(app) as server:
        client, head = await raw_open(server.port)
        await closed(client)
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0] == "HTTP/1.1 599 "
    assert "content-type: application/json" in lines and "date: yesterday" in lines
    assert "Content-Length: 2" in lines


Step = Callable[[Send], Awaitable[None]]


async def _raise(send: Send) -> None:
    raise ValueError("before the handshake")


async def _nothing(send: Send) -> None:
    return


async def _send_first(send: Send) -> None:
    await send({"type": "websocket.send", "text": "not accepted yet"})


async def _bad_status(send: Send) -> None:
    await send({"type": "websocket.http.response.start", "status": 999, "headers": []})


async def _accept_midway(send: Send) -> None:
    await send({"type": "websocket.http.response.start", "status": 400, "headers": []})
    await send({"type": "websocket.accept"})


@pytest.mark.parametrize(
    ("step", "logged"),
    [
        (_raise, "Exception in the ASGI application"),
        (_nothing, "The ASGI application returned without answering the handshake"),
        (_send_first, "Exception in the ASGI application"),
        (_bad_status, "Exception in the ASGI application"),
        (_accept_midway, "Exception in the ASGI application"),
    ],
    ids=["raises", "returns", "sends-first", "status-999", "accept-in-a-denial"],
)
async def test_an_app_that_fails_the_handshake_gets_a_500(
    step: Step, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, "dicehall.websocket")

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await step(send)

    async with serving(app) as server:
        assert (await refused(server.ws)).response.status_code == 500
    messages = [r.getMessage() for r in caplog.records if r.name == "dicehall.websocket"]
    assert messages == [logged]


async def test_an_unknown_message_on_an_open_connection_closes_it_with_1011(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, "dicehall.websocket")

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.publish", "text": "?"})

    async with serving(app) as server, connect(server.ws, **NO_PROXY) as ws:
        with pytest.raises(ConnectionClosed) as ended:
            await asyncio.wait_for(ws.recv(), 10)
    assert ended.value.rcvd is not None and ended.value.rcvd.code == 1011
    [record] = [r for r in caplog.records if r.name == "dicehall.websocket"]
    assert record.exc_info is not None and "websocket.publish" in str(record.exc_info[1])


async def test_an_app_whose_send_meets_a_lost_connection_ends_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The `OSError` a send raises on a closed connection may end the app: that is no
    error of the app's (nothing logged)."""
    caplog.set_level(logging.ERROR, "dicehall.websocket")
    steps: list[str] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        socket = protocol_of(scope)
        await receive()
        await send({"type": "websocket.accept"})
        assert (await receive())["type"] == "websocket.disconnect"
        await eventually(lambda: socket.lost, "the connection gone")
        steps.append("sending")
        await send({"type": "websocket.send", "text": "into the void"})
        steps.append("sent")

    async with serving(app) as server:
        async with connect(server.ws, **NO_PROXY) as ws:
            await ws.close()
        await eventually(lambda: not server.server.server_state.tasks, "the app's end")
    assert steps == ["sending"]
    assert [r for r in caplog.records if r.name == "dicehall.websocket"] == []


async def test_sends_held_back_by_a_slow_reader_go_on_once_it_reads() -> None:
    sockets: list[WebSocketProtocol] = []
    count, size = 128, 65536  # (8 MB: more than the kernel's buffers take)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        sockets.append(protocol_of(scope))
        for i in range(count):
            await send({"type": "websocket.send", "bytes": bytes([i]) * size})
        await send({"type": "websocket.close", "code": 4000})

    async with serving(app) as server:
        client, head = await raw_open(server.port, rcvbuf=4096)
        try:
            assert head.startswith(b"HTTP/1.1 101 ")
            await eventually(lambda: bool(sockets), "the accept")
            socket = sockets[0]
            await eventually(lambda: not socket.ready() and not socket.gone(), "writes backing up")
            got = [await client.frame() for _ in range(count)]
            assert got == [(2, bytes([i]) * size) for i in range(count)]
            assert await client.closed_with() == 4000
        finally:
            await closed(client)


async def test_a_send_waits_for_a_slow_reader_and_fails_once_the_client_is_gone() -> None:
    """A client that stops reading holds the app's `send` back (the transport paused
    writing); when it goes away without a close, that `send` fails and `receive` says
    1006."""
    sockets: list[WebSocketProtocol] = []
    sent: list[int] = []
    ends: list[Message | BaseException] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        sockets.append(protocol_of(scope))
        try:
            while True:
                await send({"type": "websocket.send", "bytes": bytes(65536)})
                sent.append(1)
        except OSError as exc:
            ends.append(exc)
        ends.append(await receive())

    async with serving(app) as server:
        client, head = await raw_open(server.port, rcvbuf=4096)
        try:
            assert head.startswith(b"HTTP/1.1 101 ")
            await eventually(lambda: bool(sockets), "the accept")
            socket = sockets[0]
            await eventually(lambda: not socket.ready(), "the writes backing up")
            assert not socket.gone() and not ends
        finally:
            client.writer.transport.abort()  # no close frame, no FIN wait: a reset
        await eventually(lambda: len(ends) == 2, "the app's send failing")
    assert isinstance(ends[0], OSError)
    assert ends[1] == {"type": "websocket.disconnect", "code": 1006, "reason": ""}
