"""The WebSocket transport of `dicehall serve`: uvicorn's `ws=` protocol class, our own.

uvicorn takes a protocol class for WebSockets (its `Config(ws=...)`), and `websockets`
offers a public sans-I/O `ServerProtocol`. `WebSocketProtocol` (protocol.py) is built on
those two seams only: the handshake, control frames, the closing handshake and every
error are `ServerProtocol`'s; simple data frames are read and written here (framed by
protocol/wsframes.py), and the endpoint reaches the connection through the ASGI scope's
extension `SOCKET_EXTENSION`, as a `FrameSocket`. Under any other ASGI server the
extension is absent and the endpoint uses plain ASGI messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from starlette.types import Scope

SOCKET_EXTENSION = "dicehall.socket"
"""Scope extension that carries the connection's `FrameSocket` (key "socket")."""

CLOSE_TIMEOUT = 10.0
"""Seconds a closing handshake may take before the socket is dropped (`abort`), as
`websockets`' own `close_timeout`: a client that reads nothing can never take our close
frame, and the transport's own `close()` would wait for ever to flush what is before it."""


class FrameSocket(Protocol):
    """What the endpoint needs of a WebSocket once it is accepted."""

    on_shutdown: Callable[[], None] | None
    """Called when the server shuts down, instead of closing with 1012 at once: the
    endpoint says goodbye and closes itself."""

    on_control: Callable[[], bool] | None
    """Called for each ping or pong the client sends; False refuses it (over the rate
    limit: a ping then gets no pong). Control frames count against the rate limit like
    any other frame, so that a ping flood is cut as a flood of requests is."""

    heard_at: float
    """`time.monotonic()` when the client last sent a control frame (a pong answering the
    server's keepalive ping, or a ping): a sign of life the idle time-out counts."""

    @property
    def fast(self) -> bool:
        """Frames are read and written here, not by an extension (per-message deflate)."""

    @property
    def waiting(self) -> bool:
        """Messages are waiting to be received (a burst)."""

    async def receive(self) -> bytes | str | None:
        """The next message (bytes: binary, str: text); None once closing or closed."""

    def send(self, payloads: list[bytes], binary: bool) -> None:
        """Messages of one kind written in one go; only when `ready()`."""

    def write(self, data: bytes) -> None:
        """Whole frames (protocol/wsframes.py's `frame`, joined) written as they are; only when
        `ready()` and `fast`."""

    def ready(self) -> bool:
        """Writes are taken now (not paused, not closing)."""

    def gone(self) -> bool:
        """Closing or closed: nothing more may be written."""

    async def drained(self) -> None:
        """Until the transport takes writes again (or the connection is lost)."""

    def close(self, code: int, reason: str) -> None:
        """Start the closing handshake; `receive` returns None from now on. The socket is
        dropped if the handshake has not ended `CLOSE_TIMEOUT` later."""

    def abort(self) -> None:
        """Drop the connection now, with whatever is still unsent (no closing handshake)."""

    def greeted(self) -> None:
        """The client is past `hello`: it no longer counts among the connections waiting
        at the door (server/edge/gate.py)."""


def socket_of(scope: Scope) -> FrameSocket | None:
    """The scope's `FrameSocket`, when the server is `WebSocketProtocol`."""
    extension = (scope.get("extensions") or {}).get(SOCKET_EXTENSION)
    if extension is None:
        return None
    socket: FrameSocket = extension["socket"]
    return socket
