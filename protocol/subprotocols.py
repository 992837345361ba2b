"""Subprotocol names: the WebSocket handshake picks the protocol version and the encoding.

A name is `dicehall.v<major>.<encoding>`. A future v2 gets new names and is served beside
v1 on the same endpoint; the client's offer decides which one a connection speaks.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from .close import reason

VERSION = 1
PREFIX = f"dicehall.v{VERSION}"


class Encoding(StrEnum):
    MSGPACK = "msgpack"
    """Binary frames, one MessagePack map per frame."""
    JSON = "json"
    """Text frames, one JSON object per frame."""


SUBPROTOCOLS: dict[str, Encoding] = {f"{PREFIX}.{e.value}": e for e in Encoding}
"""Supported names, in the server's order of preference."""


def subprotocol(encoding: Encoding) -> str:
    return f"{PREFIX}.{encoding.value}"


def select(offered: Iterable[str]) -> str | None:
    """The first supported name in the client's offer (the client's preference wins)."""
    for name in offered:
        if name in SUBPROTOCOLS:
            return name
    return None


def refusal_reason() -> str:
    """The close reason for a client that offered nothing supported (<= 123 bytes)."""
    return reason("unsupported subprotocol; supported: " + ", ".join(SUBPROTOCOLS))
