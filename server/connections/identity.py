"""Player keys: signed proofs of a player identity that needs no sign-up (the protocol's
`identity` feature).

A key is `pk1.<id>.<mac>`: the player's public id and an HMAC-SHA256 of `pk1.<id>` with the
deployment's secret. So any process that shares the secret knows the player again, after
any restart, without asking a store; forging a key needs the secret. The id is random
(`secrets.token_urlsafe`: letters, digits, `_` and `-`), so a `:` never occurs in one and
`house:<kind>`, the identity of the house bots, cannot be anyone's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from dicehall.protocol.limits import MAX_KEY, MAX_PLAYER_ID

_PREFIX = "pk1"
_ID_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
HOUSE = "house:"
"""The prefix of a house bot's player id: `house:strong` plays every strong house bot."""


def house_player(kind: str) -> str:
    """The player a house bot of `kind` plays as, so that it is rated like anyone."""
    return HOUSE + kind


@dataclass(frozen=True)
class Player:
    """A player: `id` is public, `key` is the secret that proves being it."""

    id: str
    key: str


class PlayerKeys:
    """Issues and checks player keys with one secret (the seat tokens' for now)."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("the player key secret must have at least 16 bytes")
        self._secret = secret

    def _mac(self, body: str) -> str:
        digest = hmac.new(self._secret, body.encode(), hashlib.sha256).digest()[:24]
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def _key(self, player_id: str) -> str:
        body = f"{_PREFIX}.{player_id}"
        return f"{body}.{self._mac(body)}"

    def issue(self) -> Player:
        """A new player, never seen before."""
        player_id = secrets.token_urlsafe(12)
        return Player(player_id, self._key(player_id))

    def verify(self, key: object) -> Player | None:
        """The player a well-signed key stands for, else None (never raises on bad input)."""
        if not isinstance(key, str) or len(key) > MAX_KEY or not key.isascii():
            return None
        parts = key.split(".")
        if len(parts) != 3 or parts[0] != _PREFIX:
            return None
        player_id = parts[1]
        if not 0 < len(player_id) <= MAX_PLAYER_ID or not _ID_CHARACTERS.issuperset(player_id):
            return None
        expected = self._key(player_id)
        if not hmac.compare_digest(expected.encode(), key.encode()):
            return None
        return Player(player_id, expected)
