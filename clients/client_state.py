"""What a client holds across its connections: the seats and rooms it is in, where each
stream stands, the queue its consumer reads, and the wire in use. The layers above it
(calls, link, keeper, the public `Client`) share this one state."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Final

import msgspec

from dicehall.protocol import names
from dicehall.protocol.features import EPOCHS
from dicehall.protocol.limits import ReaderLimits
from dicehall.protocol.messages import results
from dicehall.protocol.messages.common import RoomInfo
from dicehall.protocol.messages.server import (
    GameOver,
    Goodbye,
    Progress,
    RoomMessage,
    RoomUpdate,
    Snapshot,
    TurnWindow,
    Window,
    WindowClosed,
)
from dicehall.protocol.subprotocols import Encoding

from .client_errors import ClientClosed, ClientError
from .client_stream import Delivery, End, Resumed, RoomLost
from .client_wire import Wire

log = logging.getLogger("dicehall.client")

PROGRAM: Final = "dicehall-py/0.1.0"


class ClientState:
    """The state of a `Client` (its arguments are documented there), and the bookkeeping
    every layer does on it: the turns and infos the messages carry, rooms lost or left,
    the end of the stream."""

    def __init__(
        self,
        urls: str | Sequence[str],
        *,
        name: str | None = None,
        encoding: Encoding | str = Encoding.MSGPACK,
        program: str = PROGRAM,
        tokens: Mapping[str, str] | None = None,
        reconnect: bool = True,
        backoff: tuple[float, float] = (0.1, 5.0),
        reconnect_timeout: float = 60.0,
        open_timeout: float = 10.0,
        request_timeout: float | None = 30.0,
        limits: ReaderLimits | None = None,
        features: Sequence[str] = (),
        follow: bool = True,
        key: str | None = None,
    ) -> None:
        self.urls = [urls] if isinstance(urls, str) else list(urls)
        self.features = list(features)
        self.follow = follow
        if not self.urls:
            raise ValueError("give at least one server URL")
        if name is not None:  # (here, rather than the server refusing every hello)
            names.check("name", names.display_name_problem(name))
        self.name = name
        self.encoding = Encoding(encoding)
        self.program = program
        self.reconnect = reconnect
        self.backoff = backoff
        self.reconnect_timeout = reconnect_timeout
        self.open_timeout = open_timeout
        self.request_timeout = request_timeout
        self.limits = limits or ReaderLimits()
        self.hello: results.HelloResult | None = None
        """The reply to the latest `hello`."""
        self.key = key
        """The player key every `hello` sends (the server's `identity` feature): the one
        given, else the one the first `hello` was given."""
        self.goodbye: Goodbye | None = None
        """The latest `goodbye` the server sent."""
        self.reconnects = 0
        self.resumes: list[Resumed] = []
        """Every catch-up after a reconnect, in order."""
        self.rate_limited = 0
        """Requests the server refused with `rate-limited` (and that were sent again)."""
        self.rtt: float | None = None
        """Round trip of the latest heartbeat `ping`, seconds."""
        self.clock_offset_ms: float | None = None
        """Server clock minus client clock, from the latest `ping` (for countdowns)."""
        self.moves = 0
        """Times the client moved to a room's own server."""
        self._owners: dict[str, str | None] = {}
        """Where each room's server takes connections, as the latest reply said."""
        self._followed: str | None = None
        """The server moved to last: reconnects try it first."""
        self._moving: asyncio.Task[None] | None = None
        self._url_index = 0
        self._tokens: dict[str, str] = dict(tokens or {})
        self._seats: dict[str, int] = {}
        self._watching: set[str] = set()
        self._last_seqs: dict[str, int] = {}
        self._epochs: dict[str, int] = {}
        """Each room's epoch as of its last seq (its latest `snapshot` or `resume` reply)."""
        self._turns: dict[str, TurnWindow | None] = {}
        self._infos: dict[str, RoomInfo] = {}
        self._queue: asyncio.Queue[Delivery | End] = asyncio.Queue()
        self._wire: Wire | None = None
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._finished = False
        self._error: BaseException | None = None

    @property
    def epochs(self) -> bool:
        """The server takes the room's epoch in `resume` (the `epochs` feature is on)."""
        return self.hello is not None and EPOCHS in self.hello.features

    def _track(self, message: RoomMessage) -> None:
        room = message.room
        if isinstance(message, Window):
            self._turns[room] = TurnWindow(
                window=message.window, deadline=message.deadline, actors=message.actors
            )
        elif isinstance(message, WindowClosed):
            turn = self._turns.get(room)
            if turn is not None and turn.window == message.window:
                self._turns[room] = None
        elif isinstance(message, Snapshot):  # (also one that took the room back)
            self._turns[room] = message.turn
            self._infos[room] = message.info
            self._epochs[room] = message.epoch
        elif isinstance(message, GameOver):
            self._turns[room] = None
        elif isinstance(message, RoomUpdate):
            self._infos[room] = message.info
        elif isinstance(message, Progress):
            turn = self._turns.get(room)
            if turn is not None and turn.window == message.window:
                actors = [a for a in turn.actors if a.seat not in message.answered]
                self._turns[room] = msgspec.structs.replace(turn, actors=actors)

    async def _usable_wire(self) -> Wire:
        while True:
            if self._finished:
                raise self._error or ClientClosed("the client is closed")
            if self._task is None:
                raise ClientError("not connected: call connect() first")
            wire = self._wire
            if wire is not None and self._ready.is_set() and not wire.closed:
                return wire
            self._ready.clear()  # no usable wire: wait for the supervisor to attach one
            await self._ready.wait()

    def _lose(self, room: str, reason: str) -> None:
        self._forget(room)
        self._queue.put_nowait(RoomLost(room, reason))
        log.warning("lost room %s: %s", room, reason)

    def _forget(self, room: str) -> None:
        self._owners.pop(room, None)
        self._tokens.pop(room, None)
        self._seats.pop(room, None)
        self._watching.discard(room)
        self._last_seqs.pop(room, None)
        self._epochs.pop(room, None)
        self._turns.pop(room, None)
        self._infos.pop(room, None)
        if self._wire is not None:
            self._wire.conn.forget(room)

    def _finish(self, error: BaseException | None) -> None:
        """The end: the stream ends (or raises `error`), waiting requests fail."""
        if not self._finished:
            self._finished = True
            self._error = error
            self._queue.put_nowait(End(error))
        self._wire = None
        self._ready.set()
