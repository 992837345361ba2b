"""The ASGI side of one WebSocket connection: its scope, the app's task, its messages.

Kept apart from protocol.py so that the protocol class is about frames and this module
about the ASGI WebSocket spec (2.4, with the `websocket.http.response` extension): what a
message means before the handshake, after it and after a close.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
from collections.abc import Mapping
from http import HTTPStatus
from typing import Protocol
from urllib.parse import unquote

from starlette import types
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

log = logging.getLogger("dicehall.websocket")

App = types.ASGIApp
Scope = types.Scope
Message = types.Message
Receive = types.Receive
Send = types.Send
"""The ASGI names, as Starlette spells them (its public `starlette.types`)."""


class ConnectionClosed(OSError):
    """An ASGI `send` on a connection that is closed (the spec asks for an OSError)."""


def _header_bytes(value: str) -> bytes:
    """A header value as the client sent it: `websockets` decodes ISO-8859-1 since 17.0
    and ASCII with surrogate escapes before; encoding so undoes either."""
    return value.encode("latin-1", errors="surrogateescape")


def scope_for(
    request: Request,
    transport: asyncio.Transport,
    root_path: str,
    app_state: dict[str, object],
    extensions: Mapping[str, object],
) -> Scope:
    """The ASGI `websocket` scope of a handshake request."""
    raw_path, _, query = request.path.partition("?")
    subprotocols = [
        token.strip()
        for header in request.headers.get_all("Sec-WebSocket-Protocol")
        for token in header.split(",")
        if token.strip()
    ]
    sockname = transport.get_extra_info("sockname")
    peername = transport.get_extra_info("peername")
    tls = transport.get_extra_info("sslcontext") is not None
    return {
        "type": "websocket",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "scheme": "wss" if tls else "ws",
        "server": tuple(sockname[:2]) if isinstance(sockname, tuple) else None,
        "client": tuple(peername[:2]) if isinstance(peername, tuple) else None,
        "root_path": root_path,
        "path": root_path + unquote(raw_path),
        "raw_path": (root_path + raw_path).encode("ascii"),
        "query_string": query.encode("ascii"),
        "headers": [
            (name.lower().encode("ascii"), _header_bytes(value))
            for name, value in request.headers.raw_items()
        ],
        "subprotocols": subprotocols,
        "state": dict(app_state),
        "extensions": {"websocket.http.response": {}, **extensions},
    }


class Socket(Protocol):
    """What the runner drives of its connection (server/edge/ws/protocol.py's
    `WebSocketProtocol`, which makes the runner: named here, so that neither imports the
    other both ways)."""

    closing: bool
    lost: bool
    close_code: int | None
    close_reason: str

    def respond(self, response: Response) -> None: ...
    def reject(self, status: int, text: str) -> Response: ...
    async def receive(self) -> bytes | str | None: ...
    def send(self, payloads: list[bytes], binary: bool) -> None: ...
    async def drained(self) -> None: ...
    def close(self, code: int, reason: str) -> None: ...


class AppRunner:
    """Runs the ASGI app for one connection and answers its messages."""

    def __init__(
        self,
        socket: Socket,
        app: App,
        default_headers: list[tuple[bytes, bytes]],
        tasks: set[asyncio.Task[None]],
    ) -> None:
        self._socket = socket
        self._app = app
        self._default_headers = default_headers
        self._tasks = tasks
        self._connected = False
        self._response: Response | None = None
        self._denial: tuple[int, Headers, bytes] | None = None
        self.accepted = False
        self.answered = False
        """A handshake response went out (101 or not)."""

    def start(self, scope: Scope, response: Response) -> None:
        self._response = response
        task = asyncio.get_running_loop().create_task(self._run(scope))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, scope: Scope) -> None:
        socket = self._socket
        try:
            await self._app(scope, self.receive, self.send)
        except ConnectionClosed:
            pass
        except Exception:
            log.exception("Exception in the ASGI application")
            if self.accepted:
                socket.close(1011, "")
            else:
                self.fail()
            return
        if not self.answered:
            log.error("The ASGI application returned without answering the handshake")
            self.fail()
        elif self.accepted:
            socket.close(1000, "")

    def fail(self) -> None:
        """500 to a handshake not answered yet."""
        if not self.answered:
            self._answer(self._socket.reject(HTTPStatus.INTERNAL_SERVER_ERROR, ""))

    def _answer(self, response: Response) -> None:
        self.answered = True
        self._response = None  # (sent: not kept for the connection's lifetime)
        self._socket.respond(response)

    async def receive(self) -> Message:
        if not self._connected:
            self._connected = True
            return {"type": "websocket.connect"}
        socket = self._socket
        data = await socket.receive() if self.accepted else None
        if data is None:
            return {
                "type": "websocket.disconnect",
                "code": socket.close_code or 1006,
                "reason": socket.close_reason or "",
            }
        if isinstance(data, str):
            return {"type": "websocket.receive", "text": data}
        return {"type": "websocket.receive", "bytes": data}

    async def send(self, message: Message) -> None:
        socket = self._socket
        kind = message["type"]
        if socket.lost:
            raise ConnectionClosed
        if self._denial is not None:
            if kind != "websocket.http.response.body":
                raise RuntimeError(f"expected 'websocket.http.response.body', got {kind!r}")
            self._deny(message)
        elif not self.answered:
            self._handshake(message)
        elif socket.closing:
            raise ConnectionClosed
        elif kind == "websocket.send":
            await socket.drained()
            if socket.lost:
                raise ConnectionClosed
            if message.get("bytes") is not None:
                socket.send([message["bytes"]], binary=True)
            else:
                socket.send([message["text"].encode()], binary=False)
        elif kind == "websocket.close":
            socket.close(message.get("code") or 1000, message.get("reason") or "")
        else:
            raise RuntimeError(f"unexpected ASGI message {kind!r} on an open WebSocket")

    def _handshake(self, message: Message) -> None:
        kind = message["type"]
        if kind == "websocket.accept":
            response = self._response
            assert response is not None
            headers = [*self._default_headers, *message.get("headers", [])]
            if any(name.lower() == b"date" for name, _ in headers):
                del response.headers["Date"]
            for name, value in headers:
                response.headers[name.decode("latin-1")] = value.decode("latin-1")
            if message.get("subprotocol"):
                response.headers["Sec-WebSocket-Protocol"] = message["subprotocol"]
            self.accepted = True
            self._answer(response)
        elif kind == "websocket.close":
            self._answer(self._socket.reject(HTTPStatus.FORBIDDEN, ""))
        elif kind == "websocket.http.response.start":
            status = int(message["status"])
            if not 100 <= status < 600:
                raise RuntimeError(f"invalid HTTP status {status}")
            denial = Headers(
                (name.decode("latin-1"), value.decode("latin-1"))
                for name, value in message.get("headers", [])
            )
            self._denial = (status, denial, b"")
        else:
            raise RuntimeError(f"expected 'websocket.accept' or 'websocket.close', got {kind!r}")

    def _deny(self, message: Message) -> None:
        assert self._denial is not None
        status, headers, body = self._denial
        body += message.get("body", b"")
        self._denial = (status, headers, body)
        if message.get("more_body", False):
            return
        headers.setdefault("Date", email.utils.formatdate(usegmt=True))
        headers.setdefault("Connection", "close")
        headers.setdefault("Content-Length", str(len(body)))
        headers.setdefault("Content-Type", "text/plain; charset=utf-8")
        self._answer(Response(status, _phrase(status), headers, body))


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""
