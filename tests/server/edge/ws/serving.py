"""uvicorn with dicehall's `WebSocketProtocol` (its `ws=`), in this event loop, around a
small ASGI app a test writes; and a client on a bare TCP stream for the handshake and
frames exactly as a test means them.

The server is the real one `dicehall serve` runs (server/edge/main.py passes the same class to
uvicorn), only with another app in front of it: the protocol's contract with any ASGI app
(server/edge/ws/asgi.py) and its frames, closes and keepalive are tested without the game
server's endpoint, which takes the socket over after the accept.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import uvicorn
from websockets.asyncio.client import connect

from dicehall.server.edge.ws import socket_of
from dicehall.server.edge.ws.asgi import App
from dicehall.server.edge.ws.protocol import WebSocketProtocol
from tests.support.frames import StreamClient
from tests.support.servers import Listener, free_port
from tests.support.wait import eventually

NO_PROXY: dict[str, Any] = (
    {"proxy": None} if "proxy" in inspect.signature(connect).parameters else {}
)
"""`connect` options: never through the environment's proxy (websockets 15 and later use
it unless told not to; 14 has no such parameter), as tests/e2e/wire.py says."""


class Serving(Listener):
    """A running uvicorn: its port, and `stop()` for a test that shuts it down itself."""

    def __init__(self, port: int, server: uvicorn.Server, task: asyncio.Task[None]) -> None:
        super().__init__(port)
        self.server = server
        self.task = task

    async def stop(self) -> None:
        """What SIGTERM does: stop listening, `shutdown()` every connection, wait for them
        (and the apps' tasks) to end."""
        self.server.should_exit = True
        await asyncio.wait_for(asyncio.shield(self.task), 30)


@contextlib.asynccontextmanager
async def serving(app: App, **options: Any) -> AsyncIterator[Serving]:
    """uvicorn on a free loopback port with `ws=WebSocketProtocol`; `options` go to its
    Config (ws_max_size, ws_ping_interval, root_path, ...). Logging is left as it is (no
    `log_config`), so that `caplog` sees the protocol's records."""
    port = free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        ws=WebSocketProtocol,
        lifespan="off",
        log_config=None,
        log_level="warning",
        timeout_graceful_shutdown=10,
        **options,
    )
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve())
    running = Serving(port, server, task)
    try:
        await eventually(lambda: server.started or task.done(), "uvicorn listening")
        if task.done():
            task.result()  # (its error)
            raise RuntimeError("uvicorn stopped before it started")
        yield running
    finally:
        await running.stop()


def protocol_of(scope: MutableMapping[str, Any]) -> WebSocketProtocol:
    """The connection's `WebSocketProtocol`, as the scope's extension offers it."""
    found = socket_of(scope)
    assert isinstance(found, WebSocketProtocol), scope.get("extensions")
    return found


UPGRADE = (
    b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
)


async def raw_open(
    port: int, request: bytes | None = None, rcvbuf: int | None = None
) -> tuple[StreamClient, bytes]:
    """A TCP connection that sent `request` (default: a valid upgrade of `/`): the client
    (for frames) and the response's head, status line to blank line."""
    if request is None:
        request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + UPGRADE + b"\r\n"
    client = await StreamClient.connect(port, rcvbuf)
    try:
        client.writer.write(request)
        head = await asyncio.wait_for(client.reader.readuntil(b"\r\n\r\n"), 10)
    except BaseException:
        client.writer.transport.abort()
        raise
    return client, head


async def closed(client: StreamClient) -> None:
    """Close the client's side and wait until its transport is gone."""
    client.writer.close()
    with contextlib.suppress(OSError):
        await client.writer.wait_closed()


async def read_to_eof(client: StreamClient, timeout: float = 5.0) -> bytes:
    """Everything the server sends until it closes the TCP connection."""
    return await asyncio.wait_for(client.reader.read(), timeout)
