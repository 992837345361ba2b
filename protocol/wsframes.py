"""RFC 6455 frames, both directions: headers written and parsed, payloads masked, here
and only here.

Two hot paths frame WebSocket messages themselves instead of going through `websockets`'
`Frame` objects: the server's (server/ws/frames.py says why: per-frame objects were a
measurable share of its CPU) and the load generator's (clients/loadtest/client.py: it must
cost less than the server it measures, on the same cores). A server writes unmasked frames
and reads masked ones; a client the other way round; the header arithmetic (RFC 6455, 5.2:
7-, 16- and 64-bit lengths, the mask bit and key) and the masking (5.3: the same XOR
masks and unmasks) are the same, so they live in protocol/, the layer both may import.

Sans-I/O and payload-blind: bytes in, bytes or numbers out. Every rule about which frames
are acceptable stays with the side that reads them, as does the choice of masking keys.

Both paths are hot (a header per delivery on the server's send path, one per frame read on
either side), so each function is one call on plain ints, shaped for it: no flag tested
per frame, no object built but the tuple `parse_header` returns.
"""

from __future__ import annotations

import struct
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
