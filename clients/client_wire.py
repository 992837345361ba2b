"""One WebSocket connection of the client and its protocol state: a client goes through
several (reconnects, moves to a room's server), so each is its own object."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection as WebSocket

from dicehall.protocol.client_connection import ClientConnection, Response
from dicehall.protocol.messages.server import Goodbye, Welcome

from .client_pacer import Pacer


@dataclass(eq=False)
class Wire:
    """One WebSocket connection and its protocol state; replaced on every reconnect."""

    url: str
    ws: WebSocket
    conn: ClientConnection
    welcome: Welcome
    pacer: Pacer
    send_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    waiters: dict[int, asyncio.Future[Response]] = field(default_factory=dict)
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)
    reader: asyncio.Task[None] | None = None
    goodbye: Goodbye | None = None
    fatal: BaseException | None = None
    closed: bool = False
    successor: asyncio.Future[Wire | None] | None = None
    """Set while the client moves from this wire to a room's own server: the wire that
    takes over (None: the move failed after this wire was closed; reconnect)."""


def retired(wire: Wire) -> bool:
    """(A function, so that a type checker reads the attribute anew after an await.)"""
    return wire.closed
