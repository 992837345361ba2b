"""Seat tokens: signed, unguessable proofs that their holder may take a seat back.

A token names its room and seat and carries a random nonce that the seat also keeps; it is
signed with the server's secret (shared by every process in scale-out mode). Forging one
needs the secret; a seat that changes hands gets a new nonce, so old tokens die with it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

_PREFIX = "st1"


@dataclass(frozen=True)
class SeatClaim:
    room: str
    seat: int
    nonce: str


class TokenSigner:
    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("the token secret must have at least 16 bytes")
        self._secret = secret

    def _mac(self, body: str) -> str:
        digest = hmac.new(self._secret, body.encode(), hashlib.sha256).digest()[:18]
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    @staticmethod
    def new_nonce() -> str:
        return secrets.token_urlsafe(12)

    def issue(self, room: str, seat: int, nonce: str) -> str:
        body = f"{_PREFIX}.{room}.{seat}.{nonce}"
        return f"{body}.{self._mac(body)}"

    def verify(self, token: str) -> SeatClaim | None:
        """The claim of a well-signed token, else None (never raises on bad input)."""
        if not isinstance(token, str) or len(token) > 256:
            return None
        parts = token.split(".")
        if len(parts) != 5 or parts[0] != _PREFIX or not parts[2].isdigit():
            return None
        body = ".".join(parts[:4])
        if not hmac.compare_digest(self._mac(body), parts[4]):
            return None
        return SeatClaim(parts[1], int(parts[2]), parts[3])
