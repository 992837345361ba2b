"""`WebSocketProtocol`: the WebSocket side of `dicehall serve`, passed to uvicorn as `ws=`.

uvicorn's HTTP protocol hands an upgrade request to the class in its `Config.ws`: it
builds it with `(config, server_state, app_state)`, calls `connection_made` and
`data_received` with the request's bytes, and makes it the transport's protocol; at
shutdown it calls `shutdown()` on every connection in `server_state.connections` and waits
for them to go. That is all this class relies on from uvicorn.

From `websockets` it uses the documented sans-I/O `ServerProtocol`: the opening handshake
(`accept`, `reject`, `send_response`), control frames, the closing handshake and every
protocol error go through it (`receive_data`, `events_received`, `data_to_send`,
`send_*`, `fail`, `state`). Simple data frames take the short way (protocol/wsframes.py): read into
a plain list the endpoint awaits, and written as whole frames, a batch per write.

The ASGI app runs as usual (`websocket.connect`, `accept`, `receive`, `send`, `close`,
and the `websocket.http.response` extension); the endpoint of server/edge/app.py also finds
this object in the scope (`SOCKET_EXTENSION`) and talks to it directly.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, cast

from uvicorn import Config
from uvicorn.server import ServerState
from websockets.frames import Close, Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol

from dicehall.protocol.wsframes import PING, FrameReader, frames, pack_header, text_of

from . import CLOSE_TIMEOUT, SOCKET_EXTENSION
from .asgi import AppRunner, scope_for
from .keepalive import Keepalive

if TYPE_CHECKING:
    from websockets.extensions import ServerExtensionFactory

log = logging.getLogger("dicehall.websocket")


class Place(Protocol):
    """A connection's place among those not yet past `hello` (server/edge/gate.py)."""

    def release(self) -> None: ...


PAUSE_AT = 4
"""Messages waiting for the endpoint before the transport's reads pause: a client that
sends faster than its requests are handled is held back, and holds up only itself."""

IGNORED_LIMIT = 128
"""Frames a connection may send that are ignored (pings and pongs over the rate limit,
anything after the close) before it is dropped without a closing handshake: a flooder
that ignores its close (4002) must not keep a core busy until `CLOSE_TIMEOUT`."""

_PONG = 0x8A
"""The first byte of a whole pong frame (FIN and opcode 0xA)."""


class WebSocketProtocol(asyncio.Protocol):
    """One WebSocket connection: the transport's protocol from the upgrade on; the
    endpoint's `FrameSocket`."""

    def __init__(
        self, config: Config, server_state: ServerState, app_state: dict[str, object] | None = None
    ) -> None:
        if not config.loaded:
            config.load()
        self._config = config
        self._app_state = app_state or {}
        self._runner = AppRunner(
            self, config.loaded_app, server_state.default_headers, server_state.tasks
        )
        self._connections = server_state.connections
        self._loop = asyncio.get_running_loop()
        self._conn = ServerProtocol(
            extensions=_deflate() if config.ws_per_message_deflate else None,
            max_size=config.ws_max_size,
            logger=log.getChild("frames"),
        )
        self._reader = FrameReader(self._deliver, self._forward, config.ws_max_size, self._control)
        self._transport: asyncio.Transport | None = None
        self._pending: list[bytes | str] = []
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False
        self._writes_resume: asyncio.Future[None] | None = None
        """While the transport takes no writes: done when it does again. (A future made on
        pause, not an `asyncio.Event` per connection: its deque is half a KiB.)"""
        self._fragments: list[bytes] = []
        self._fragmented_text = False
        self._close_timer: asyncio.TimerHandle | None = None
        self._keepalive = Keepalive(
            self._loop, config.ws_ping_interval, config.ws_ping_timeout, self._ping, self._dead
        )
        self._request_seen = False
        self._pong: bytes | None = None
        """The payload of the latest ping not answered yet: one pong answers it, sent once
        the transport takes writes (RFC 6455, 5.5.3, lets a pong answer only the latest
        ping), so what a client that pings and never reads costs is bounded."""
        self._ignored = 0
        self._place: Place | None = None
        self.on_control: Callable[[], bool] | None = None
        self.closing = False
        """A close frame was sent or received, or the connection failed."""
        self.lost = False
        self.close_code: int | None = None
        self.close_reason = ""
        self.fast = True
        self.on_shutdown: Callable[[], None] | None = None
        self.heard_at = 0.0

    # --- asyncio.Protocol ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # (uvloop's is no subclass)
        # (uvicorn's annotation lists its own protocol classes; `Config.ws` takes any
        # asyncio.Protocol class, and shutdown only calls `shutdown()` on each member.)
        self._connections.add(self)  # type: ignore[arg-type]

    def data_received(self, data: bytes) -> None:
        if self._request_seen:
            self._reader.feed(data)
            if self._pong is not None:
                self._send_pong()
            return
        conn = self._conn
        conn.receive_data(data)
        for event in conn.events_received():
            if isinstance(event, Request):
                self._request_seen = True
                self._handshake(event)
        self._write_pending()

    def eof_received(self) -> bool | None:
        self._reader.stop()
        self._conn.receive_eof()
        self._after_forward()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._leave()
        self._keepalive.stop()
        if self._close_timer is not None:
            self._close_timer.cancel()
            self._close_timer = None
        self._connections.discard(self)
        if self.close_code is None:
            self.close_code = 1006
        self.resume_writing()  # a paused transport that is lost never resumes
        self._wake()

    def pause_writing(self) -> None:
        if self._writes_resume is None:
            self._writes_resume = self._loop.create_future()

    def resume_writing(self) -> None:
        paused, self._writes_resume = self._writes_resume, None
        if paused is not None and not paused.done():
            paused.set_result(None)
        if self._pong is not None:
            self._send_pong()

    def hold(self, place: Place) -> None:
        """Keep the connection's place among the pending ones until `greeted`."""
        self._place = place

    def greeted(self) -> None:
        self._leave()

    def _leave(self) -> None:
        """Give the connection's place among the pending ones back (once)."""
        place, self._place = self._place, None
        if place is not None:
            place.release()

    def shutdown(self) -> None:
        """uvicorn is shutting down (SIGTERM): the endpoint's goodbye, else 1012."""
        self._keepalive.stop()
        transport = self._transport
        if self.lost or transport is None:
            return
        if not self._runner.accepted:
            self._runner.fail()
            transport.close()
        elif self.closing:
            transport.close()
        elif self.on_shutdown is not None:
            self.on_shutdown()
        else:
            self.close(1012, "")

    # --- the handshake ---------------------------------------------------------------------

    def _handshake(self, request: Request) -> None:
        response = self._conn.accept(request)
        if response.status_code != 101:  # not a valid WebSocket request
            self.respond(response)
            return
        self.fast = not response.headers.get("Sec-WebSocket-Extensions")
        if not self.fast:
            self._reader.stop()  # every frame needs the extension
        transport = self._transport
        assert transport is not None
        extensions = {SOCKET_EXTENSION: {"socket": self}}
        scope = scope_for(request, transport, self._config.root_path, self._app_state, extensions)
        self._runner.start(scope, response)

    def respond(self, response: Response) -> None:
        """Send a handshake response; closes the connection unless it is a 101."""
        self._conn.send_response(response)
        self._write_pending()
        if response.status_code == 101:
            self._keepalive.start()
        else:
            self.closing = True
            if self._transport is not None:
                self._transport.close()

    def reject(self, status: int, text: str) -> Response:
        return self._conn.reject(status, text)

    # --- receiving -------------------------------------------------------------------------

    @property
    def waiting(self) -> bool:
        return bool(self._pending)

    async def receive(self) -> bytes | str | None:
        pending = self._pending
        while not pending:
            if self.closing or self.lost:
                return None
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        data = pending.pop(0)
        if self._paused and not pending:
            self._paused = False
            if self._transport is not None and not self._transport.is_closing():
                self._transport.resume_reading()
        return data

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _deliver(self, data: bytes | str) -> None:
        if self.closing:
            self._ignore()  # past a close: data frames are discarded
            return
        self._pending.append(data)
        self._wake()
        if len(self._pending) >= PAUSE_AT and not self._paused and self._transport is not None:
            self._paused = True
            self._transport.pause_reading()

    def _forward(self, data: bytes) -> None:
        """Bytes the frame reader leaves to `websockets`."""
        self._conn.receive_data(data)
        for event in self._conn.events_received():
            if isinstance(event, Frame):
                self._frame(event)
        self._after_forward()

    def _after_forward(self) -> None:
        self._write_pending()
        if self._conn.state is not State.OPEN and not self.closing:
            # Failed (a protocol error, a limit, EOF): `websockets` sent the close.
            self.closing = True
            self._reader.stop()
            self._wake()

    def _frame(self, frame: Frame) -> None:
        opcode = frame.opcode
        if opcode is Opcode.TEXT or opcode is Opcode.BINARY:
            self._fragmented_text = opcode is Opcode.TEXT
            self._fragments = [bytes(frame.data)]
        elif opcode is Opcode.CONT:
            self._fragments.append(bytes(frame.data))
        elif opcode is Opcode.CLOSE:
            close = Close.parse(bytes(frame.data))
            if not self.closing:
                self.close_code, self.close_reason = close.code, close.reason
            self.closing = True
            self._reader.stop()
            self._wake()
            return
        else:  # (pings and pongs never reach `websockets`: `_control` takes them)
            return
        if not frame.fin:
            return
        data = b"".join(self._fragments)
        self._fragments = []
        self._deliver(text_of(data) if self._fragmented_text else data)

    def _control(self, opcode: int, payload: bytes) -> None:
        """A ping or a pong. Each takes a token of the connection's rate limit (the
        endpoint's `on_control`), as a data frame does: a flood of them is cut (4002) like
        any other, and one over the rate is not answered."""
        if self.closing:
            self._ignore()
            return
        self.heard_at = time.monotonic()
        on_control = self.on_control
        if on_control is not None and not on_control():
            self._ignore()
            return
        if opcode == PING:
            self._pong = payload
        else:
            self._keepalive.pong(payload)

    def _send_pong(self) -> None:
        if self.closing or self.lost:
            self._pong = None
        elif self._writes_resume is None and self._transport is not None:
            payload, self._pong = self._pong or b"", None
            self._transport.write(b"".join((pack_header(_PONG, len(payload)), payload)))

    def _ignore(self) -> None:
        self._ignored += 1
        if self._ignored > IGNORED_LIMIT:
            self._reader.discard()
            self.abort()

    # --- sending ---------------------------------------------------------------------------

    def send(self, payloads: list[bytes], binary: bool) -> None:
        transport = self._transport
        assert transport is not None
        if self.fast:
            transport.write(frames(payloads, binary))
            return
        conn = self._conn
        for data in payloads:
            if binary:
                conn.send_binary(data)
            else:
                conn.send_text(data)
        self._write_pending()

    def write(self, data: bytes) -> None:
        transport = self._transport
        assert transport is not None and self.fast
        transport.write(data)

    def ready(self) -> bool:
        return self._writes_resume is None and not self.gone()

    def gone(self) -> bool:
        transport = self._transport
        return self.closing or self.lost or transport is None or transport.is_closing()

    async def drained(self) -> None:
        if self._writes_resume is not None:
            await asyncio.shield(self._writes_resume)  # (one waiter cancelled leaves the others)

    def close(self, code: int, reason: str) -> None:
        if self.closing or self.lost:
            return
        self.closing = True
        self.close_code, self.close_reason = code, reason
        self._conn.send_close(code, reason)
        self._write_pending()
        self._wake()
        transport = self._transport
        if transport is not None and not transport.is_closing():
            if self._paused:  # read the peer's close frame
                self._paused = False
                transport.resume_reading()
            self._abort_later()

    def abort(self) -> None:
        transport = self._transport
        if transport is not None and not self.lost:
            transport.abort()

    def _abort_later(self) -> None:
        """A closing handshake, or the flush before a TCP close, gets `CLOSE_TIMEOUT`."""
        if self._close_timer is None and not self.lost:
            self._close_timer = self._loop.call_later(CLOSE_TIMEOUT, self.abort)

    def _write_pending(self) -> None:
        """Write what `websockets` has to send; an empty chunk means: close the TCP side."""
        transport = self._transport
        if transport is None:
            return
        for data in self._conn.data_to_send():
            if data:
                transport.write(data)
            else:
                transport.close()
                self._abort_later()  # (a client that reads nothing never lets it flush)

    # --- keepalive ------------------------------------------------------------------------

    def _ping(self, payload: bytes) -> None:
        if not self.closing and not self.lost:
            self._conn.send_ping(payload)
            self._write_pending()

    def _dead(self) -> None:
        if not self.closing and not self.lost:
            self._conn.fail(1011, "keepalive ping timeout")
            self._after_forward()


def _deflate() -> list[ServerExtensionFactory]:
    from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory

    return [
        ServerPerMessageDeflateFactory(
            server_max_window_bits=12, client_max_window_bits=12, compress_settings={"memLevel": 5}
        )
    ]
