"""A WebSocket client: the protocol connection, its session and its bounded outbound queue.

Nothing here blocks a room: the hub appends frames to the queue and returns; a writer task
drains it to the socket. A client that stops reading lets its queue fill, and is then cut
off with close code 4003 (slow consumer) instead of being waited for.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable

import msgspec

from protocol import errors as E
from protocol.close import CloseCode
from protocol.codec import Frame
from protocol.messages.server import ServerMessage
from protocol.server_connection import Close, Send, ServerConnection
from protocol.subprotocols import Encoding

from .metrics import Counter, Histogram
from .room import Outgoing
from .session import Services, Session

SendFrame = Callable[[Frame], Awaitable[None]]
CloseSocket = Callable[[int, str], Awaitable[None]]


class Connection:
    """Everything for one socket except the socket itself (the endpoint moves the bytes)."""

    def __init__(
        self,
        services: Services,
        encoding: Encoding,
        max_queue: int = 1024,
        fanout_latency: Histogram | None = None,
        slow_dropped: Counter | None = None,
    ) -> None:
        self.protocol = ServerConnection(encoding, now=time.monotonic())
        self.session = Session(services, self)
        self.max_queue = max_queue
        self._queue: deque[tuple[Frame, float]] = deque()
        self._wake = asyncio.Event()
        self._closing: Close | None = None
        self._fanout_latency = fanout_latency
        self._slow_dropped = slow_dropped
        self._leaving: asyncio.Task[None] | None = None
        self.services = services

    # --- Sink: what the session produces --------------------------------------------------

    def reply(self, request_id: int, result: msgspec.Struct) -> None:
        self._push(self.protocol.reply(request_id, result))

    def fail(self, request_id: int, error: E.ProtocolError) -> None:
        self._push(self.protocol.fail(request_id, error))

    def message(self, message: ServerMessage) -> None:
        self._push(self.protocol.send(message))

    def room(self, out: Outgoing, seat: int | None) -> None:
        self._push(out.frame(seat, self.protocol.encoding), out.produced)

    def replaced(self, room: str) -> None:
        self.close(CloseCode.REPLACED, f"another connection took your seat in room {room}")

    def _push(self, frame: Frame, produced: float = 0.0) -> None:
        if self._closing is not None:
            return
        if len(self._queue) >= self.max_queue:
            if self._slow_dropped is not None:
                self._slow_dropped.inc()
            self._queue.clear()
            self.close(CloseCode.SLOW_CONSUMER, "outbound queue full: read faster")
            # Its socket may stay stuck for a long time (nothing can flush it): leave its
            # rooms now, so its seats show as gone, rather than when the socket closes.
            self._leaving = asyncio.get_running_loop().create_task(self.session.disconnected())
            return
        self._queue.append((frame, produced))
        self._wake.set()

    # --- control --------------------------------------------------------------------------

    def welcome(self, server: str) -> None:
        self._push(self.protocol.welcome(server))

    def close(self, code: CloseCode, text: str = "", retry_ms: int | None = None) -> None:
        """Say goodbye, then close after what is queued before it."""
        for item in self.protocol.close(code, text, retry_ms):
            self._apply(item)

    def _apply(self, item: Send | Close) -> None:
        if isinstance(item, Send):
            self._queue.append((item.frame, 0.0))
        else:
            self._closing = item
        self._wake.set()

    async def receive(self, data: Frame) -> None:
        """One frame from the client: protocol replies go out, requests are handled."""
        for item in self.protocol.receive(data, time.monotonic()):
            if isinstance(item, Send | Close):
                self._apply(item)
            else:
                await self.session.handle(item)

    async def writer(self, send: SendFrame, close: CloseSocket) -> None:
        """Drain the queue to the socket until a close instruction is reached."""
        latency = self._fanout_latency
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                frame, produced = self._queue.popleft()
                await send(frame)
                if produced and latency is not None:
                    latency.observe(time.monotonic() - produced)
            if self._closing is not None:
                with contextlib.suppress(Exception):
                    await close(int(self._closing.code), self._closing.reason)
                return

    async def ticker(self) -> None:
        """Hello and idle time-outs."""
        while self._closing is None:
            await asyncio.sleep(max(0.05, self.protocol.deadline() - time.monotonic()))
            for item in self.protocol.tick(time.monotonic()):
                self._apply(item)

    @property
    def closing(self) -> bool:
        return self._closing is not None
