"""Client data frames read straight from the transport (the receive side of `RawSocket`).

Why: under `dicehall serve` every client frame used to go through uvicorn's
`data_received`, the generic `websockets` parser (a generator chain and a `Frame` per
frame), an ASGI message dict, an `asyncio.Queue`, Starlette's `receive` and a pause and
resume of the transport's reads, before reaching `Connection.receive`
(docs/benchmarks.md, "Load": the cost is per request). `RawReader` sits in front of
uvicorn's websockets-sansio protocol (`transport.set_protocol`) once the handshake is
done, and hands each whole, masked, unfragmented text or binary frame's payload to the
endpoint task through a plain list and one future.

Everything else still goes to uvicorn and `websockets`, unchanged, so that the rules of
the protocol stay theirs:

- ping and pong frames are passed on one by one (exactly the frame's bytes), and the
  reader carries on: uvicorn answers pings and tracks its keepalive as before;
- anything else (a close frame, a fragment, reserved bits or opcodes, an unmasked frame, a
  frame over the size limit, a text frame that is not UTF-8) is passed on with every byte
  after it, and the reader steps aside for good ("handoff"): the closing handshake, the
  limits and the error close codes are uvicorn's and websockets' own. The endpoint drains
  what the reader holds, then reads the ASGI way (`receive` returns None), so requests stay
  in order.

Only when `RawSocket` applies (uvicorn's own protocol, no extension negotiated) and the
protocol holds nothing yet at the install: no queued message, no buffered byte, its
parser between frames. Otherwise `install` returns None and frames take the ASGI path.
Reads pause when `PAUSE_AT` payloads wait (uvicorn pauses after every one) and resume when
the endpoint has taken them all, so a client that sends faster than its requests are
handled is held back as before; each connection keeps its own task, so a slow request
holds up only its own connection.
"""

from __future__ import annotations

import asyncio
from typing import Any

try:
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover - the C extension is missing
    from websockets.utils import apply_mask

PAUSE_AT = 4
"""Payloads waiting for the endpoint before the transport's reads pause."""

_TEXT, _BINARY, _PING, _PONG = 0x1, 0x2, 0x9, 0xA


def _between_frames(protocol: Any) -> bool:
    """Whether uvicorn's `websockets` parser waits for the first byte of a frame."""
    conn = protocol.conn
    if conn.reader.buffer or conn.current_size is not None:
        return False
    gen = conn.parser
    while getattr(gen, "gi_yieldfrom", None) is not None:
        gen = gen.gi_yieldfrom
    return getattr(getattr(gen, "gi_code", None), "co_name", None) == "at_eof"


class RawReader(asyncio.Protocol):
    """The transport's protocol after the handshake; uvicorn's protocol behind it."""

    __slots__ = (
        "_buffer",
        "_inner",
        "_loop",
        "_max_size",
        "_paused",
        "_pending",
        "_transport",
        "_waiter",
        "handoff",
    )

    def __init__(self, protocol: Any) -> None:
        self._inner = protocol
        self._transport: asyncio.Transport = protocol.transport
        self._loop = asyncio.get_running_loop()
        self._max_size: int | None = protocol.conn.max_message_size
        self._buffer = bytearray()
        self._pending: list[bytes | str] = []
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False
        self.handoff = False
        """True once uvicorn reads everything again (and after the connection is lost)."""

    @classmethod
    def install(cls, send: object) -> RawReader | None:
        """Put a reader in front of the protocol whose ASGI `send` this is, if it may."""
        protocol: Any = getattr(send, "__self__", None)
        if type(protocol).__name__ != "WebSocketsSansIOProtocol":
            return None
        try:
            transport = protocol.transport
            conn = protocol.conn
            if conn.extensions or not protocol.handshake_complete:
                return None
            if protocol.close_sent or protocol.disconnected or transport.is_closing():
                return None
            if protocol.read_paused or not protocol.queue.empty() or protocol.frames:
                return None
            if not _between_frames(protocol) or transport.get_protocol() is not protocol:
                return None
            reader = cls(protocol)
        except AttributeError:  # another uvicorn or websockets than the one this knows
            return None
        transport.set_protocol(reader)
        return reader

    # --- the endpoint's side ---------------------------------------------------------------

    @property
    def waiting(self) -> bool:
        """Frames are waiting to be received (a burst)."""
        return bool(self._pending)

    async def receive(self) -> bytes | str | None:
        """The next payload, in order; None once uvicorn's ASGI queue has the rest."""
        pending = self._pending
        while not pending:
            if self.handoff:
                return None
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        data = pending.pop(0)
        if self._paused and not pending:
            self._paused = False
            if not self._transport.is_closing():
                self._transport.resume_reading()
        return data

    def release(self) -> None:
        """The app sent `websocket.close`: uvicorn queued the disconnect the endpoint
        waits for, and reads the rest (the peer's close reply) as it did before."""
        if not self.handoff:
            self._hand_off(self._buffer)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _deliver(self, data: bytes | str) -> None:
        if self._inner.close_sent:
            return  # past `websocket.close`: uvicorn discards messages too
        self._pending.append(data)
        self._wake()
        if len(self._pending) >= PAUSE_AT and not self._paused:
            self._paused = True
            self._transport.pause_reading()

    def _hand_off(self, data: bytes | bytearray) -> None:
        self.handoff = True
        self._buffer = bytearray()
        self._wake()
        if data:  # whole frames went before it: uvicorn's parser is between frames
            self._inner.data_received(bytes(data))

    # --- the transport's side --------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        if self.handoff:
            self._inner.data_received(data)
            return
        buf: bytes | bytearray
        if self._buffer:
            self._buffer += data
            buf = self._buffer
        else:
            buf = data
        size = len(buf)
        pos = 0
        max_size = self._max_size
        while size - pos >= 2:
            first = buf[pos]
            second = buf[pos + 1]
            length = second & 0x7F
            head = pos + 2
            if length == 126:
                if size - pos < 4:
                    break
                length = int.from_bytes(buf[head : head + 2], "big")
                head += 2
            elif length == 127:
                if size - pos < 10:
                    break
                length = int.from_bytes(buf[head : head + 8], "big")
                head += 8
            opcode = first & 0x0F
            # FIN set, no reserved bits, masked (clients must mask): else uvicorn's.
            plain = first & 0xF0 == 0x80 and second & 0x80
            if plain and opcode in (_TEXT, _BINARY):
                if max_size is None or length <= max_size:
                    end = head + 4 + length
                    if size < end:
                        break
                    payload = apply_mask(buf[head + 4 : end], buf[head : head + 4])
                    if opcode == _TEXT:
                        try:
                            text = payload.decode()
                        except UnicodeDecodeError:
                            self._hand_off(buf[pos:])
                            return
                        self._deliver(text)
                    else:
                        self._deliver(payload)
                    pos = end
                    continue
            elif plain and opcode in (_PING, _PONG) and length <= 125:
                end = head + 4 + length
                if size < end:
                    break
                self._inner.data_received(bytes(buf[pos:end]))
                pos = end
                if self._inner.close_sent or not self._inner.queue.empty():
                    self._hand_off(buf[pos:])  # uvicorn took it further than a pong
                    return
                continue
            self._hand_off(buf[pos:])
            return
        if buf is self._buffer:
            del self._buffer[:pos]
        elif pos < size:
            self._buffer = bytearray(buf[pos:])

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()  # type: ignore[no-any-return]

    def connection_lost(self, exc: Exception | None) -> None:
        self.handoff = True
        self._wake()
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()
