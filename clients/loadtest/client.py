"""A lean WebSocket client for the load tester: thousands of sockets in one process.

The client library (clients/client.py) reconnects, resumes, paces and types every
message; that costs tens of microseconds per frame, which on a shared 2-core machine
would be taken from the server being measured. Here a socket is a bare `asyncio.Protocol`
that stamps each read with the time it arrived and hands whole messages to a sink (the
seat, which decodes them: messages.py). Its frames are protocol/wsframes.py's, the
framing the server's own fast path uses: headers parsed and written there, its frames
masked there; what is left here is the client's side of RFC 6455 (the opening
handshake, fragments joined, pings answered, the closing handshake).

Plain `ws://` (and `wss://`), no extensions; frames from the client are masked as the RFC
requires.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import ssl
import struct
import time
from random import getrandbits
from typing import Protocol, cast
from urllib.parse import urlsplit

from dicehall.protocol.wsframes import (
    BINARY,
    CLOSE,
    CONTINUATION,
    FIN,
    MASKED,
    PING,
    PONG,
    TEXT,
    masked_frame,
    parse_header,
)

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_DATA = (CONTINUATION, TEXT, BINARY)
_MAX_HEADER = 16384


class Sink(Protocol):
    def on_message(self, data: bytes, now_us: int) -> None:
        """One whole message (the payload of a text or binary frame)."""

    def on_closed(self, code: int | None) -> None:
        """The socket is gone: the close code the server sent, None when it just dropped."""


class HandshakeError(ConnectionError):
    pass


class WsClient(asyncio.Protocol):
    """One client socket: the opening handshake, then frames in and out."""

    def __init__(self, host: str, path: str, subprotocol: str, sink: Sink) -> None:
        self.sink = sink
        self._host = host
        self._path = path
        self._subprotocol = subprotocol
        self._key = base64.b64encode(os.urandom(16))
        self._buf = bytearray()
        self._open = False
        self._frag: list[bytes] = []
        self.transport: asyncio.Transport | None = None
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.close_code: int | None = None
        self.closed = False

    # --- asyncio.Protocol ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.transport.write(
            b"GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
            b"Sec-WebSocket-Protocol: %s\r\n\r\n"
            % (self._path.encode(), self._host.encode(), self._key, self._subprotocol.encode())
        )

    def data_received(self, data: bytes) -> None:
        now_us = time.time_ns() // 1000
        buf = self._buf
        if buf or not self._open:
            # Bytes held from an earlier read (or the handshake): parsed on once the first
            # frame is all there (a large frame that comes in many reads is not copied at
            # each). Otherwise, the common case, frames are read straight from `data`.
            buf += data
            if not self._open and not self._handshake(buf):
                return
            header = parse_header(buf, 0, len(buf))
            if header is None or (header[3] > len(buf) and not header[1] & MASKED):
                return  # (a masked frame is refused at once, in `_frames`)
            data = bytes(buf)
            buf.clear()
        pos = self._frames(data, now_us)
        if pos < len(data) and not self.closed:
            buf += data[pos:]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionError("closed during the handshake"))
        self._end()

    # --- sending ------------------------------------------------------------------------

    def send(self, payload: bytes, binary: bool) -> None:
        if not self.closed:
            self._send_frame(BINARY if binary else TEXT, payload)

    def close(self, code: int = 1000) -> None:
        """Start the closing handshake; the server answers and drops the socket."""
        if not self.closed and self.transport is not None:
            self._send_frame(CLOSE, struct.pack("!H", code))

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def _send_frame(self, op: int, payload: bytes) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        # A fresh key per frame, as RFC 6455 asks, from `random` rather than the system's
        # entropy: masking keeps a hostile page's bytes off proxies' caches, which a load
        # generator's frames are not, and a system call per frame would be measured.
        transport.write(masked_frame(FIN | op, payload, getrandbits(32).to_bytes(4, "big")))

    # --- internals ----------------------------------------------------------------------

    def _frames(self, data: bytes, now_us: int) -> int:
        """Act on every whole frame in `data`: the position of the first byte left."""
        pos, n = 0, len(data)
        while (header := parse_header(data, pos, n)) is not None:
            first, second, start, end = header
            if second & MASKED:
                self._fail("the server masked a frame")
                return n
            if end > n:
                break
            payload = data[start:end]
            pos = end
            op = first & 0x0F
            if op in _DATA:
                if not first & FIN:
                    self._frag.append(payload)
                    continue
                if self._frag:
                    payload = b"".join([*self._frag, payload])
                    self._frag.clear()
                self.sink.on_message(payload, now_us)
            elif op == PING:
                self._send_frame(PONG, payload)
            elif op == CLOSE:
                self.close_code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                self._send_frame(CLOSE, payload[:2])
                self._end()
                return n
        return pos

    def _handshake(self, buf: bytearray) -> bool:
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > _MAX_HEADER:
                self._fail("handshake response too long")
            return False
        head = bytes(buf[:end]).decode("latin-1").split("\r\n")
        del buf[: end + 4]
        status = head[0].split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head[1:])}
        accept = base64.b64encode(hashlib.sha1(self._key + _GUID).digest()).decode()
        if len(status) < 2 or status[1] != "101":
            self._fail(f"handshake refused: {head[0]}")
        elif headers.get("sec-websocket-accept") != accept:
            self._fail("bad Sec-WebSocket-Accept")
        elif headers.get("sec-websocket-protocol") != self._subprotocol:
            self._fail(f"the server did not take {self._subprotocol}")
        else:
            self._open = True
            self.opened.set_result(None)
            return True
        return False

    def _fail(self, why: str) -> None:
        if not self.opened.done():
            self.opened.set_exception(HandshakeError(why))
        self.abort()

    def _end(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()
        if self._open:
            self.sink.on_closed(self.close_code)


async def open_socket(url: str, subprotocol: str, sink: Sink, timeout: float = 10.0) -> WsClient:
    """Connect and finish the opening handshake, or raise (OSError, HandshakeError...)."""
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss") or parts.hostname is None:
        raise ValueError(f"not a ws:// or wss:// URL: {url}")
    secure = parts.scheme == "wss"
    port = parts.port or (443 if secure else 80)
    host = parts.netloc
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    loop = asyncio.get_running_loop()
    context = ssl.create_default_context() if secure else None
    async with asyncio.timeout(timeout):
        _, client = await loop.create_connection(
            lambda: WsClient(host, path, subprotocol, sink), parts.hostname, port, ssl=context
        )
    async with asyncio.timeout(timeout):
        await asyncio.shield(client.opened)
    return client
