"""Seat tokens: issued and verified by the same secret; anything else is no claim."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dicehall.server.connections.tokens import SeatClaim, TokenSigner

SECRET = b"0123456789abcdef0123456789abcdef"


def test_a_token_verifies_to_its_claim() -> None:
    signer = TokenSigner(SECRET)
    nonce = signer.new_nonce()
    token = signer.issue("r7Kx2", 3, nonce)
    assert token.startswith("st1.r7Kx2.3.")
    assert signer.verify(token) == SeatClaim("r7Kx2", 3, nonce)


def test_another_process_with_the_same_secret_accepts_it() -> None:
    token = TokenSigner(SECRET).issue("room", 0, "n")
    assert TokenSigner(SECRET).verify(token) == SeatClaim("room", 0, "n")


def test_another_secret_refuses_it() -> None:
    token = TokenSigner(SECRET).issue("room", 0, "n")
    assert TokenSigner(b"another secret, 16+ bytes").verify(token) is None


@pytest.mark.parametrize("part", [1, 2, 3])
def test_changing_the_room_seat_or_nonce_breaks_the_signature(part: int) -> None:
    signer = TokenSigner(SECRET)
    fields = signer.issue("room", 1, "nonce").split(".")
    fields[part] = {1: "other", 2: "2", 3: "nonce2"}[part]
    assert signer.verify(".".join(fields)) is None


@pytest.mark.parametrize(
    "token",
    ["", "st1", "st1.room.1.nonce", "st2.room.1.nonce.mac", "st1.room.x.nonce.mac", "x" * 300],
)
def test_malformed_tokens_are_no_claim(token: str) -> None:
    assert TokenSigner(SECRET).verify(token) is None


@given(st.text(max_size=300))
def test_garbage_never_raises(token: str) -> None:
    assert TokenSigner(SECRET).verify(token) is None


def test_nonces_are_fresh_and_a_short_secret_is_refused() -> None:
    assert len({TokenSigner.new_nonce() for _ in range(100)}) == 100
    with pytest.raises(ValueError):
        TokenSigner(b"short")
