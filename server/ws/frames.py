"""WebSocket frames on the hot path (RFC 6455): framed for sending, split on receipt.

Why here and not in `websockets`: its sans-I/O parser builds a generator chain and a
`Frame` per frame, and its `send_*` a `Frame` per message; at thousands of requests and
tens of thousands of deliveries a second that was a measurable share of the server's CPU
(docs/benchmarks.md, "Load" and "Supported seams"). The common case is simple enough to
own: a whole, masked, unfragmented text or binary frame within the size limit. Pings and
pongs are read here too, so that the connection decides how often to answer them (a ping
flood: server/ws/protocol.py). Everything else (close frames, fragments, reserved bits or
opcodes, unmasked or oversized frames, data frames once the connection is closing) is
forwarded byte for byte, frame boundaries kept, to a parser that owns the rules:
`websockets.server.ServerProtocol`, driven through its public `receive_data` by
server/ws/protocol.py. So the closing handshake, the limits and the error close codes stay
the library's.

Sans-I/O: `FrameReader.feed(bytes)` calls back with payloads and forwarded bytes; nothing
here touches a socket. The header arithmetic and the unmasking are protocol/wsframes.py's,
shared with the load generator's client, which frames the other way round.
"""

from __future__ import annotations

from collections.abc import Callable

from dicehall.protocol.wsframes import (
    BINARY,
    CONTINUATION,
    FIN,
    MASKED,
    PING,
    PONG,
    TEXT,
    mask,
    pack_header,
    parse_header,
)

DATA = (TEXT, BINARY)
CONTROL = (PING, PONG)
MAX_CONTROL = 125
"""The longest payload a control frame may have (RFC 6455, 5.5)."""


def frames(payloads: list[bytes], binary: bool) -> bytes:
    """Whole server frames for the payloads, ready for one write."""
    parts: list[bytes] = []
    for data in payloads:
        parts.append(pack_header(0x82 if binary else 0x81, len(data)))
        parts.append(data)
    return b"".join(parts)


def frame(payload: bytes | str, binary: bool) -> bytes:
    """One whole server frame (a text payload as UTF-8): what `FrameSocket.write` takes,
    made once per room message and view for all the members that receive it."""
    data = payload.encode() if isinstance(payload, str) else payload
    # (join, not +: mypy 1.20's mypyc leaks the left operand of bytes + bytes, mypyc#1192)
    return b"".join((pack_header(0x82 if binary else 0x81, len(data)), data))


def text_of(payload: bytes) -> str:
    """A text frame's payload as a str. Bytes that are not UTF-8 are kept as lone
    surrogates (`surrogateescape`), for the protocol to answer `malformed` (1001) rather
    than the connection to fail (RFC 6455 would close with 1007): docs/protocol.md."""
    try:
        return payload.decode()
    except UnicodeDecodeError:
        return payload.decode("utf-8", "surrogateescape")


class FrameReader:
    """Splits the client's byte stream: simple data frames to `deliver`, pings and pongs
    to `control`, the rest to `forward` (from the frame's header on, its payload's bytes as
    they come; frames forwarded back to back go in one call).

    `deliver` gets a `str` for a text frame (`text_of`) and `bytes` for a binary one;
    `control` the opcode (PING or PONG) and the unmasked payload of a whole, masked
    control frame of at most 125 bytes (anything else about a control frame is a protocol
    error, the other parser's to answer). Once a fragmented message has begun, its data
    frames are forwarded up to its last fragment, so the other parser sees the whole
    sequence. After `stop()` data frames are forwarded too (the connection is closing, or
    an extension such as per-message deflate is in use); pings and pongs never are: how
    often they are answered, and whether at all, is the connection's to decide (a ping
    flood must not become a flood of pongs queued by another parser).
    """

    __slots__ = (
        "_buffer",
        "_control",
        "_deliver",
        "_forward",
        "_fragmented",
        "_left",
        "_max_size",
        "discarding",
        "stopped",
    )

    def __init__(
        self,
        deliver: Callable[[bytes | str], None],
        forward: Callable[[bytes], None],
        max_size: int | None,
        control: Callable[[int, bytes], None],
    ) -> None:
        self._deliver = deliver
        self._forward = forward
        self._control = control
        self._max_size = max_size
        self._buffer = bytearray()
        self._left = 0
        """Bytes of a forwarded frame's payload not received yet."""
        self._fragmented = False
        self.stopped = False
        self.discarding = False

    def stop(self) -> None:
        """Forward data frames from now on (pings and pongs still go to `control`)."""
        self.stopped = True

    def discard(self) -> None:
        """Read nothing more, not even the rest of the bytes being fed (the connection is
        being dropped: what its client sends is no longer worth parsing)."""
        self.discarding = True
        self._buffer = bytearray()
        self._left = 0

    def feed(self, data: bytes) -> None:
        if self.discarding:
            return
        if self._left:
            if len(data) <= self._left:
                self._left -= len(data)
                self._forward(data)
                return
            self._forward(data[: self._left])
            data = data[self._left :]
            self._left = 0
        if self._buffer:
            self._buffer += data
            pos = self._split(self._buffer)
            del self._buffer[:pos]
            return
        # The common case: whole frames, nothing held from the last read.
        pos = self._split(data)
        if pos < len(data):
            self._buffer = bytearray(data[pos:])

    def _split(self, buf: bytes | bytearray) -> int:
        """Hand on every whole frame in `buf`; the position of the first byte left."""
        size = len(buf)
        pos = 0
        max_size = self._max_size
        deliver = self._deliver
        passed = -1
        """Where frames to forward began, while they run back to back (-1: none)."""
        while True:
            header = parse_header(buf, pos, size)
            if header is None:
                break
            first, second, head, end = header
            opcode = first & 0x0F
            # FIN set, no reserved bit, masked (a client must mask).
            if first & 0xF0 == FIN and second & MASKED:
                # A data opcode, no fragmented message open, within the limit: a simple
                # frame, read here.
                if (
                    opcode in DATA
                    and not self._fragmented
                    and not self.stopped
                    and (max_size is None or end - head <= max_size)
                ):
                    if size < end:
                        break
                    if passed >= 0:
                        self._forward(bytes(buf[passed:pos]))
                        passed = -1
                    if not self.stopped:  # (what was just forwarded may have stopped it)
                        payload = mask(buf[head:end], buf[head - 4 : head])
                        deliver(payload if opcode == BINARY else text_of(payload))
                        pos = end
                        continue
                if opcode in CONTROL and end - head <= MAX_CONTROL:
                    if size < end:
                        break
                    if passed >= 0:
                        self._forward(bytes(buf[passed:pos]))
                        passed = -1
                    self._control(opcode, mask(buf[head:end], buf[head - 4 : head]))
                    if self.discarding:
                        return size
                    pos = end
                    continue
            # Anything else is the other parser's, from its header on, as it comes.
            if opcode in DATA or opcode == CONTINUATION:
                self._fragmented = not first & FIN
            if passed < 0:
                passed = pos
            if end > size:
                self._forward(bytes(buf[passed:size]))
                self._left = end - size
                return size
            pos = end
        if passed >= 0:
            self._forward(bytes(buf[passed:pos]))
        return pos
