"""The fair-chance derivation is public (docs/records.md): pin it with an independent copy."""

from __future__ import annotations

import hashlib
import struct
from collections import Counter

import pytest

from dicehall.rules.fair import Draw, commitment, new_seed


def reference_dice(seed: bytes, n: int, count: int) -> list[int]:
    """The derivation exactly as docs/records.md states it."""
    out: list[int] = []
    k = 0
    while len(out) < count:
        block = hashlib.sha256(seed + b"dicehall" + struct.pack(">QI", n, k)).digest()
        k += 1
        for b in block:
            if b < 252 and len(out) < count:
                out.append(b % 6 + 1)
    return out


def test_dice_follow_the_documented_derivation() -> None:
    for seed in (bytes(32), b"\xff" * 32, bytes(range(32))):
        for n in (0, 1, 7, 2**40):
            assert Draw(seed, n).dice(40) == reference_dice(seed, n, 40)


def test_choices_follow_the_documented_derivation() -> None:
    seed = b"q" * 32
    block = hashlib.sha256(seed + b"dicehall" + struct.pack(">QI", 5, 0)).digest()
    u = int.from_bytes(block[:4], "big")
    m = 108
    assert u < 2**32 - 2**32 % m  # this seed needs no rejection, so the first word decides
    assert Draw(seed, 5).below(m) == u % m


def test_commitment_is_sha256_of_the_seed() -> None:
    seed = new_seed()
    assert len(seed) == 32
    assert commitment(seed) == hashlib.sha256(seed).hexdigest()
    assert new_seed() != seed


def test_dice_are_uniform_enough() -> None:
    seed = b"u" * 32
    counts = Counter(d for n in range(2000) for d in Draw(seed, n).dice(6))
    expected = 12000 / 6
    chi2 = sum((counts[f] - expected) ** 2 / expected for f in range(1, 7))
    assert set(counts) == set(range(1, 7))
    assert chi2 < 25.7  # p = 0.0001 for 5 degrees of freedom


def test_below_rejects_bad_ranges() -> None:
    with pytest.raises(ValueError):
        Draw(bytes(32), 0).below(0)
    assert all(0 <= Draw(bytes(32), i).below(3) < 3 for i in range(200))
