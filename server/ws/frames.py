"""WebSocket frames on the hot path (RFC 6455): framed for sending, split on receipt.

Why here and not in `websockets`: its sans-I/O parser builds a generator chain and a
`Frame` per frame, and its `send_*` a `Frame` per message; at thousands of requests and
tens of thousands of deliveries a second that was a measurable share of the server's CPU
(docs/benchmarks.md, "Load" and "Supported seams"). The common case is simple enough to
own: a whole, masked, unfragmented text or binary frame within the size limit. Everything
else (control frames, fragments, reserved bits or opcodes, unmasked or oversized frames,
anything once the connection is closing) is forwarded byte for byte, frame boundaries kept,
to a parser that owns the rules: `websockets.server.ServerProtocol`, driven through its
public `receive_data` by server/ws/protocol.py. So the closing handshake, the limits and
the error close codes stay the library's.

Sans-I/O: `FrameReader.feed(bytes)` calls back with payloads and forwarded bytes; nothing
here touches a socket. The header arithmetic itself is protocol/wsframes.py's, shared with
the load generator's client, which reads and writes the same headers the other way round.
"""

from __future__ import annotations

from collections.abc import Callable

from protocol.wsframes import BINARY, CONTINUATION, FIN, MASKED, TEXT, pack_header, parse_header

DATA = (TEXT, BINARY)


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


def unmask(data: bytes | bytearray, mask: bytes | bytearray) -> bytes:
    """A client frame's payload, unmasked (RFC 6455, 5.3): one XOR of two big integers."""
    size = len(data)
    key = (mask * ((size >> 2) + 1))[:size]  # (bytes or bytearray alike: no copy first)
    return (int.from_bytes(data, "little") ^ int.from_bytes(key, "little")).to_bytes(size, "little")


class FrameReader:
    """Splits the client's byte stream: simple data frames to `deliver`, the rest to
    `forward` (from the frame's header on, its payload's bytes as they come).

    `deliver` gets a `str` for a text frame (`text_of`) and `bytes` for a binary one.
    Once a fragmented message has begun, every frame is forwarded up to its last fragment,
    so the other parser sees the whole sequence. After `stop()` everything is forwarded
    (the connection is closing, or an extension such as per-message deflate is in use).
    """

    __slots__ = (
        "_buffer",
        "_deliver",
        "_feeding",
        "_forward",
        "_fragmented",
        "_left",
        "_max_size",
        "stopped",
    )

    def __init__(
        self,
        deliver: Callable[[bytes | str], None],
        forward: Callable[[bytes], None],
        max_size: int | None,
    ) -> None:
        self._deliver = deliver
        self._forward = forward
        self._max_size = max_size
        self._buffer = bytearray()
        self._left = 0
        """Bytes of a forwarded frame's payload not received yet."""
        self._fragmented = False
        self._feeding = False
        self.stopped = False

    def stop(self) -> None:
        """Forward everything from now on (what is buffered first)."""
        if self.stopped:
            return
        self.stopped = True
        if not self._feeding and self._buffer:  # (inside `feed`, `feed` forwards the rest)
            rest, self._buffer = bytes(self._buffer), bytearray()
            self._forward(rest)

    def _halted(self) -> bool:
        return self.stopped

    def feed(self, data: bytes) -> None:
        if self._buffer or self._left or self.stopped:
            self._feed_rest(data)
            return
        # The common case: whole frames, nothing held from the last read.
        self._feeding = True
        pos = self._split(data)
        self._feeding = False
        if pos < len(data):
            if self._halted():  # (forwarding may stop the reader)
                self._forward(data[pos:])
            else:
                self._buffer = bytearray(data[pos:])

    def _feed_rest(self, data: bytes) -> None:
        """`feed` when a frame is being forwarded, bytes are held, or the reader stopped."""
        if self.stopped:
            self._forward(data)
            return
        if self._left:
            if len(data) <= self._left:
                self._left -= len(data)
                self._forward(data)
                return
            self._forward(data[: self._left])
            data = data[self._left :]
            self._left = 0
            if self._halted():
                self._forward(data)
                return
            if not self._buffer:
                self.feed(data)
                return
        self._buffer += data
        self._feeding = True
        pos = self._split(self._buffer)
        self._feeding = False
        if self._halted():
            rest = bytes(self._buffer[pos:])
            self._buffer = bytearray()
            if rest:
                self._forward(rest)
        else:
            del self._buffer[:pos]

    def _split(self, buf: bytes | bytearray) -> int:
        """Hand on every whole frame in `buf`; the position of the first byte left."""
        size = len(buf)
        pos = 0
        max_size = self._max_size
        deliver = self._deliver
        while not self.stopped:
            header = parse_header(buf, pos, size)
            if header is None:
                break
            first, second, head, end = header
            opcode = first & 0x0F
            # FIN set, no reserved bit, masked (a client must mask), a data opcode, no
            # fragmented message open, within the limit: a simple frame, read here.
            if (
                first & 0xF0 == FIN
                and second & MASKED
                and opcode in DATA
                and not self._fragmented
                and (max_size is None or end - head <= max_size)
            ):
                if size < end:
                    break
                payload = unmask(buf[head:end], buf[head - 4 : head])
                if opcode == BINARY:
                    deliver(payload)
                    pos = end
                    continue
                deliver(text_of(payload))
                pos = end
                continue
            # Anything else is the other parser's, from its header on, as it comes.
            if opcode in DATA or opcode == CONTINUATION:
                self._fragmented = not first & FIN
            self._forward(bytes(buf[pos : min(end, size)]))
            if end > size:
                self._left = end - size
                return size
            pos = end
        return pos
