"""A peer: one WebSocket client as the server holds it (its protocol state, session and
the bound of its outbound queue); its frames go through its outbox (server/connections/outbox.py),
one kind per transport, chosen when the connection was accepted.

Nothing here blocks a room: the hub appends frames to the queue and returns; the outbox
writes them. A client that stops reading lets its queue fill, and is then cut off with
close code 4003 (slow consumer) instead of being waited for.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import msgspec
from prometheus_client import Counter

from dicehall.protocol import errors
from dicehall.protocol.close import CloseCode
from dicehall.protocol.codec import Frame
from dicehall.protocol.features import SERVER_FEATURES
from dicehall.protocol.limits import Limits
from dicehall.protocol.messages.client import ClientMessage
from dicehall.protocol.messages.results import HelloResult
from dicehall.protocol.messages.server import ServerMessage
from dicehall.protocol.server_connection import Close, Send, ServerConnection
from dicehall.protocol.subprotocols import Encoding

from ..rooms.outgoing import Outgoing
from .outbox import Outbox
from .session import Services, Session


class Peer:
    """Everything for one client except its transport (`outbox` moves the bytes)."""

    def __init__(
        self,
        services: Services,
        encoding: Encoding,
        outbox: Outbox,
        limits: Limits | None = None,
        max_queue: int = 1024,
        max_queue_bytes: int = 1 << 20,
        slow_dropped: Counter | None = None,
    ) -> None:
        self.protocol = ServerConnection(encoding, limits, now=time.monotonic())
        self.session = Session(services, self)
        self.outbox = outbox
        self.max_queue = max_queue
        """The bound in frames, always."""
        self.max_queue_bytes = max_queue_bytes
        """The bound in bytes, while the outbox counts them (`Outbox.backlog`)."""
        self._closing: Close | None = None
        self._slow_dropped = slow_dropped
        self._leaving: asyncio.Task[None] | None = None
        self.services = services
        self._timeouts: asyncio.TimerHandle | None = None
        self._loop = asyncio.get_running_loop()
        """Kept, as on every hot path (docs/contributing.md, "Hot paths")."""

    # --- Sink: what the session produces --------------------------------------------------

    def reply(self, request_id: int, result: msgspec.Struct) -> None:
        self._push(self.protocol.reply(request_id, result))
        if type(result) is HelloResult:
            self.outbox.greeted()

    def fail(self, request_id: int, error: errors.ProtocolError) -> None:
        self._push(self.protocol.fail(request_id, error))

    def message(self, message: ServerMessage) -> None:
        self._push(self.protocol.send(message))

    def room(self, outgoing: Sequence[Outgoing], seat: int | None) -> None:
        encoding = self.protocol.encoding
        stamped = self.session.timestamps
        outbox = self.outbox
        if (
            outbox.backlog is None  # (the socket takes writes: nothing counted)
            and self._closing is None
            and len(outbox.queue) + len(outgoing) <= self.max_queue
        ):
            # The fan-out's common case, once per member and commit rather than per message.
            outbox.room(outgoing, seat, encoding, stamped)
            return
        for out in outgoing:
            self._push(out.frame(seat, encoding, stamped), out.produced)

    def replaced(self, room: str) -> None:
        self.close(CloseCode.REPLACED, f"another connection took your seat in room {room}")

    def _push(self, frame: Frame, produced: float = 0.0) -> None:
        if self._closing is not None:
            return
        outbox = self.outbox
        backlog = outbox.backlog
        if len(outbox.queue) >= self.max_queue or (
            backlog is not None and backlog + len(frame) > self.max_queue_bytes
        ):
            if self._slow_dropped is not None:
                self._slow_dropped.inc()
            outbox.clear()
            self.close(CloseCode.SLOW_CONSUMER, "outbound queue full: read faster")
            # Its socket may stay stuck for a long time (nothing can flush it): leave its
            # rooms now, so its seats show as gone, rather than when the socket closes.
            self._leaving = self._loop.create_task(self.session.disconnected())
            return
        outbox.push(frame, produced)

    # --- control --------------------------------------------------------------------------

    def welcome(self, server: str) -> None:
        self._push(self.protocol.welcome(server, SERVER_FEATURES))

    def close(self, code: CloseCode, text: str = "", retry_ms: int | None = None) -> None:
        """Say goodbye, then close after what is queued before it."""
        for item in self.protocol.close(code, text, retry_ms):
            self._apply(item)

    def _apply(self, item: Send | Close, at_once: bool = False) -> None:
        if isinstance(item, Send):
            self.outbox.push(item.frame, 0.0)  # (what the protocol says itself: unbounded)
        else:
            self._closing = item
            self.outbox.close(int(item.code), item.reason, at_once)

    def take(self, data: Frame) -> ClientMessage | None:
        """One frame from the client: what the protocol answers itself (an error, a close)
        is queued, and the request it carries, if any, is returned for the caller to
        `await self.session.handle(...)` (a frame carries one message at most)."""
        request: ClientMessage | None = None
        for item in self.protocol.receive(data, time.monotonic()):
            if isinstance(item, (Send, Close)):  # (a tuple: two type tests, no union made)
                self._apply(item)
            else:
                request = item
        return request

    def control(self) -> bool:
        """A ping or pong from the client: within the rate limit or not. A flood closes
        at once, not after the rest of this read: the socket drops a client that goes on
        sending what it ignores, and the goodbye should be out by then."""
        within, outputs = self.protocol.control(time.monotonic())
        for item in outputs:
            self._apply(item, at_once=True)
        return within

    def detach(self) -> None:
        """The connection is gone: stop the outbox's writer and the time-outs."""
        self.outbox.detach()
        self.stop_timeouts()

    def start_timeouts(self) -> None:
        """Hello and idle time-outs: a timer (not a task: one per connection adds up)."""
        delay = max(0.05, self.protocol.deadline() - time.monotonic())
        self._timeouts = self._loop.call_later(delay, self._timeout)

    def stop_timeouts(self) -> None:
        if self._timeouts is not None:
            self._timeouts.cancel()
            self._timeouts = None

    def _timeout(self) -> None:
        self._timeouts = None
        self.protocol.heard(self.outbox.heard_at())
        for item in self.protocol.tick(time.monotonic()):
            self._apply(item)
        if self._closing is None:
            self.start_timeouts()

    @property
    def closing(self) -> bool:
        return self._closing is not None
