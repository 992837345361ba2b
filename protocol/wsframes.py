"""RFC 6455 frames, both directions, here and only here: headers written and parsed,
payloads masked, server frames written whole, and the server's reader of a client's stream.

Two hot paths frame WebSocket messages themselves instead of going through `websockets`'
`Frame` objects: the server's (`dicehall serve`, server/edge/ws/: its sans-I/O parser builds a
generator chain and a `Frame` per frame, and its `send_*` a `Frame` per message; at
thousands of requests and tens of thousands of deliveries a second that was a measurable
share of the server's CPU, docs/benchmarks.md, "Load" and "Supported seams") and the load
generator's (clients/loadtest/client.py: it must cost less than the server it measures, on
the same cores). A server writes unmasked frames and reads masked ones; a client the other
way round; the header arithmetic (RFC 6455, 5.2: 7-, 16- and 64-bit lengths, the mask bit
and key) and the masking (5.3: the same XOR masks and unmasks) are the same, so they live in
protocol/, the layer both may import.

Sans-I/O: bytes in, bytes or numbers out, or callbacks (`FrameReader.feed`); nothing here
touches a socket. The choice of masking keys stays with the sender, and which frames a
client accepts with the client; the server's rules are `FrameReader`'s (below).

Both paths are hot (a header per delivery on the server's send path, one per frame read on
either side), so each function is one call on plain ints, shaped for it: no flag tested
per frame, no object built but the tuple `parse_header` returns.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Final

CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
"""The opcodes (RFC 6455, 5.2): the low 4 bits of a frame's first byte."""
FIN = 0x80
"""The first byte's high bit: the last (or only) frame of a message."""
MASKED = 0x80
"""The second byte's high bit: a masking key follows the length (every client frame)."""

_PACK16 = struct.Struct("!BBH").pack
_PACK64 = struct.Struct("!BBQ").pack
_UNPACK64 = struct.Struct("!Q").unpack_from


_SHORT_HEADERS: Final = {first: [bytes((first, n)) for n in range(126)] for first in (0x81, 0x82)}
"""The two-byte headers of whole text and binary frames, made once: most room messages
are shorter than 126 bytes, and `bytes((first, size))` is a generic call per delivery."""


def pack_header(first: int, size: int) -> bytes:
    """The header of an unmasked frame (a server's) whose first byte is `first` (FIN,
    RSV1-3, opcode) and whose payload is `size` bytes long, in the shortest length
    encoding."""
    if size < 126:
        short = _SHORT_HEADERS.get(first)
        return short[size] if short is not None else bytes((first, size))
    if size < 65536:
        return _PACK16(first, 126, size)
    return _PACK64(first, 127, size)


def pack_masked_header(first: int, size: int) -> bytes:
    """`pack_header` with the mask bit set (a client's frame): its 4-byte masking key, not
    written here, goes right after. (Two functions, not a flag: the server's send path
    would pay for the flag on every frame.)"""
    if size < 126:
        return bytes((first, MASKED | size))
    if size < 65536:
        return _PACK16(first, MASKED | 126, size)
    return _PACK64(first, MASKED | 127, size)


def parse_header(buf: bytes | bytearray, pos: int, end: int) -> tuple[int, int, int, int] | None:
    """The header of the frame that starts at `buf[pos]`, the bytes up to `end` read so far:
    `(first byte, second byte, payload start, payload end)`, or None while the header is
    not all there. A masked frame's payload starts past its key (the 4 bytes before the
    start). The payload end may lie past `end`: the rest of the frame is still to come.

    One tuple, not a `Frame`: callers unpack it at once (`first & 0x0F` is the opcode,
    `first & FIN` the last fragment, `second & MASKED` the mask bit)."""
    if end - pos < 2:
        return None
    second = buf[pos + 1]
    size = second & 0x7F
    start = pos + 2
    if size > 125:
        if size == 126:
            start = pos + 4
            if start > end:
                return None
            size = buf[pos + 2] << 8 | buf[pos + 3]
        else:
            start = pos + 10
            if start > end:
                return None
            (size,) = _UNPACK64(buf, pos + 2)
    if second & MASKED:
        start += 4
        if start > end:
            return None
    return buf[pos], second, start, start + size


def mask(data: bytes | bytearray, key: bytes | bytearray) -> bytes:
    """`data` XORed with the 4-byte masking `key` repeated (RFC 6455, 5.3): a client's
    payload masked, or a client's frame unmasked by the server (the XOR is its own
    inverse). One XOR of two big integers, in documented Python only: about 0.6 us more
    per 80-byte frame than websockets' undocumented C `speedups.apply_mask`, about 1 % of
    the load generator's work per delivery (it sends a frame per 6 to 12 it reads)."""
    size = len(data)
    repeated = (key * ((size >> 2) + 1))[:size]  # (bytes or bytearray alike: no copy first)
    return (int.from_bytes(data, "little") ^ int.from_bytes(repeated, "little")).to_bytes(
        size, "little"
    )


def masked_frame(first: int, payload: bytes, key: bytes) -> bytes:
    """A whole client frame: its header (`first` as in `pack_header`), the 4-byte `key`
    and `payload` masked with it. The key is the caller's: RFC 6455 wants a fresh,
    unpredictable one per frame, and how unpredictable is the sender's to weigh."""
    return b"".join((pack_masked_header(first, len(payload)), key, mask(payload, key)))


# --- the server's side: whole frames written, a client's stream read --------------------
#
# The common case is simple enough to own: a whole, masked, unfragmented text or binary
# frame within the size limit. Pings and pongs are read here too, so that the connection
# decides how often to answer them (a ping flood: server/edge/ws/protocol.py). Everything else
# (close frames, fragments, reserved bits or opcodes, unmasked or oversized frames, data
# frames once the connection is closing) is forwarded byte for byte, frame boundaries kept,
# to a parser that owns the rules: `websockets.server.ServerProtocol`, driven through its
# public `receive_data` by server/edge/ws/protocol.py. So the closing handshake, the limits and
# the error close codes stay the library's.

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
