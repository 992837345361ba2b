"""WebSocket frames as a client sends them, written by hand (RFC 6455, 5.2): any opcode,
fragment, mask or reserved bit a test means, including the ones a library would refuse."""

from __future__ import annotations

import os
import struct


def client_frame(
    opcode: int, payload: bytes, fin: bool = True, masked: bool = True, rsv: int = 0
) -> bytes:
    first = (0x80 if fin else 0) | rsv << 4 | opcode
    size = len(payload)
    bit = 0x80 if masked else 0
    if size < 126:
        head = bytes((first, bit | size))
    elif size < 65536:
        head = bytes((first, bit | 126)) + struct.pack("!H", size)
    else:
        head = bytes((first, bit | 127)) + struct.pack("!Q", size)
    if not masked:
        return head + payload
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
