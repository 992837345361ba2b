"""Provably fair chance: every outcome is derived from a secret seed and a counter.

The room commits to sha256(seed) before the game, reveals the seed after it, and anyone
can recompute every roll and draw from the record. The derivation is documented in
docs/records.md so that it can be checked in any language:

    block(seed, n, k) = sha256(seed || b"dicehall" || u64be(n) || u32be(k))

Chance event n reads the bytes of block(n, 0), block(n, 1), ... in order. A die takes
one byte b, rejecting b >= 252, and is b % 6 + 1. A choice among m items (m <= 2**32)
takes four bytes big-endian u, rejecting u >= 2**32 - 2**32 % m, and is u % m.
"""

from __future__ import annotations

import hashlib
import secrets
import struct

SEED_BYTES = 32
_TAG = b"dicehall"
_U32 = 1 << 32


def new_seed() -> bytes:
    return secrets.token_bytes(SEED_BYTES)


def commitment(seed: bytes) -> str:
    """The public SHA-256 commitment to a seed, as lower-case hex."""
    return hashlib.sha256(seed).hexdigest()


class Draw:
    """The byte stream of one chance event; hands out dice and choices."""

    __slots__ = ("_block", "_buf", "_n", "_pos", "_seed")

    def __init__(self, seed: bytes, n: int) -> None:
        self._seed = seed
        self._n = n
        self._block = 0
        self._buf = b""
        self._pos = 0

    def _byte(self) -> int:
        if self._pos >= len(self._buf):
            # (join, not +: mypy 1.20's mypyc leaks the left operand of bytes + bytes, mypyc#1192)
            block = struct.pack(">QI", self._n, self._block)
            self._buf = hashlib.sha256(b"".join((self._seed, _TAG, block))).digest()
            self._block += 1
            self._pos = 0
        b = self._buf[self._pos]
        self._pos += 1
        return b

    def die(self) -> int:
        while True:
            b = self._byte()
            if b < 252:
                return b % 6 + 1

    def dice(self, count: int) -> list[int]:
        return [self.die() for _ in range(count)]

    def below(self, m: int) -> int:
        """A uniform integer in [0, m)."""
        if not 0 < m <= _U32:
            raise ValueError("choice out of range")
        limit = _U32 - _U32 % m
        while True:
            u = (self._byte() << 24) | (self._byte() << 16) | (self._byte() << 8) | self._byte()
            if u < limit:
                return u % m
