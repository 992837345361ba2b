"""A peer: one WebSocket client as the server holds it (its protocol state, session and
bounded outbound queue).

Nothing here blocks a room: the hub appends frames to the queue and returns; a writer task
drains it to the socket. A client that stops reading lets its queue fill, and is then cut
off with close code 4003 (slow consumer) instead of being waited for.

Fast path (measured in docs/benchmarks/journal.md, "Load"): under `dicehall serve` the socket is a
`FrameSocket` (server/ws/). Everything queued during one turn of the event loop (a room's
commit: the closed window, its events, the next window; and the reply that caused them)
leaves in one write, as whole frames, instead of one trip through Starlette and the ASGI
server and one system call per message. While the socket is paused (the client reads
slowly) the writer task waits for it as before, so the queue bound and close 4003 are
unchanged. Under another ASGI server frames go through ASGI messages one by one.
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
from dicehall.protocol.wsframes import frame as ws_frame

from .flusher import Flusher
from .metrics import LatencyHistogram
from .outgoing import Outgoing, queue_wires
from .session import Services, Session
from .writer import CloseSocket, SendFrame, write_loop
from .ws import CLOSE_TIMEOUT, FrameSocket


class Peer:
    """Everything for one socket except the socket itself (the endpoint moves the bytes)."""

    def __init__(
        self,
        services: Services,
        encoding: Encoding,
        limits: Limits | None = None,
        max_queue: int = 1024,
        max_queue_bytes: int = 1 << 20,
        fanout_latency: LatencyHistogram | None = None,
        slow_dropped: Counter | None = None,
        socket: FrameSocket | None = None,
        flusher: Flusher | None = None,
    ) -> None:
        self.protocol = ServerConnection(encoding, limits, now=time.monotonic())
        self.session = Session(services, self)
        self.max_queue = max_queue
        self.max_queue_bytes = max_queue_bytes
        self._queue: list[tuple[Frame, float]] = []
        self._backlog: int | None = None if socket is not None else 0
        """Bytes (characters of a JSON frame) in `_queue` while the socket takes no writes:
        replies and views can be large, so a count of frames alone does not bound what a
        client that never reads pins. None while the socket takes writes: each turn's queue
        then leaves in that turn, and the hot path counts nothing."""
        self._wake: asyncio.Event | None = None
        self._writer: asyncio.Task[None] | None = None
        self._send: SendFrame | None = None
        self._close_socket: CloseSocket | None = None
        self._closing: Close | None = None
        self.fanout_latency = fanout_latency
        self._slow_dropped = slow_dropped
        self._leaving: asyncio.Task[None] | None = None
        self.services = services
        self._socket = socket
        self._binary = encoding is Encoding.MSGPACK
        self._framed = socket is not None and socket.fast
        """The queue holds whole WebSocket frames (room messages framed once for all their
        members: `queue_wires`), which the socket writes as they are."""
        self._flush_due = False
        self._timeouts: asyncio.TimerHandle | None = None
        self._give_up: asyncio.TimerHandle | None = None
        """From the decision to close: drops the socket if it is still open `CLOSE_TIMEOUT`
        later (the writer may wait for ever behind a client that reads nothing)."""
        self._loop = asyncio.get_running_loop()
        """Kept, as on every hot path (docs/contributing.md, "Hot paths")."""
        self._flusher = flusher or Flusher()
        """The process's (shared by its peers: one callback per turn for all of them)."""
        if socket is not None:
            socket.on_control = self.control

    # --- Sink: what the session produces --------------------------------------------------

    def reply(self, request_id: int, result: msgspec.Struct) -> None:
        self._push(self.protocol.reply(request_id, result))
        if type(result) is HelloResult and self._socket is not None:
            self._socket.greeted()

    def fail(self, request_id: int, error: errors.ProtocolError) -> None:
        self._push(self.protocol.fail(request_id, error))

    def message(self, message: ServerMessage) -> None:
        self._push(self.protocol.send(message))

    def room(self, outgoing: Sequence[Outgoing], seat: int | None) -> None:
        encoding = self.protocol.encoding
        stamped = self.session.timestamps
        queue = self._queue
        if (
            self._backlog is None  # (the socket takes writes: not closing, nothing counted)
            and self._closing is None
            and len(queue) + len(outgoing) <= self.max_queue
        ):
            # The fan-out's common case, once per member and commit rather than per message.
            if self._framed:
                queue_wires(queue, outgoing, seat, encoding, stamped)
            else:
                for out in outgoing:
                    queue.append((out.frame(seat, encoding, stamped), out.produced))
            if not self._flush_due:
                self._flush_due = True
                self._flusher.due(self._flush)
            return
        for out in outgoing:
            self._push(out.frame(seat, encoding, stamped), out.produced)

    def replaced(self, room: str) -> None:
        self.close(CloseCode.REPLACED, f"another connection took your seat in room {room}")

    def _push(self, frame: Frame, produced: float = 0.0) -> None:
        if self._closing is not None:
            return
        if self._framed:
            frame = ws_frame(frame, self._binary)
        backlog = self._backlog
        if len(self._queue) >= self.max_queue or (
            backlog is not None and backlog + len(frame) > self.max_queue_bytes
        ):
            if self._slow_dropped is not None:
                self._slow_dropped.inc()
            self._clear()
            self.close(CloseCode.SLOW_CONSUMER, "outbound queue full: read faster")
            # Its socket may stay stuck for a long time (nothing can flush it): leave its
            # rooms now, so its seats show as gone, rather than when the socket closes.
            self._leaving = self._loop.create_task(self.session.disconnected())
            return
        self._queue.append((frame, produced))
        if backlog is not None:
            self._backlog = backlog + len(frame)
        if self._socket is None:
            self._wake_writer()
        elif not self._flush_due:
            self._flush_due = True
            self._flusher.due(self._flush)

    def _flush(self) -> None:
        """Write what was queued, if the socket takes it now: the flusher calls it a turn
        after the turn that queued it, so the reply to the request that made a room's
        messages (its task resumes in the turn after the commit) joins them in one write."""
        self._flush_due = False
        socket = self._socket
        if socket is None or not self._queue:
            return
        if not self.write_ready(socket):
            self._wake_writer()  # paused: the writer task waits until it drains

    def _backed_up(self) -> None:
        """The socket takes no writes: count what waits, from now until it drains."""
        if self._backlog is None:
            self._backlog = sum(len(frame) for frame, _ in self._queue)

    def _clear(self) -> None:
        self._queue.clear()
        if self._backlog is not None:
            self._backlog = 0

    def _write_queue(self, socket: FrameSocket) -> None:
        # (comprehensions, not one loop with a call per frame: this runs per delivery)
        queue, self._queue = self._queue, []
        self._backlog = None
        latency = self.fanout_latency
        if latency is not None:
            now = time.monotonic()
            latency.observe_each([now - produced for _, produced in queue if produced])
        if self._framed:  # whole WebSocket frames, bytes all
            socket.write(b"".join([frame for frame, _ in queue]))  # type: ignore[misc]
        else:
            payloads = [f if isinstance(f, bytes) else f.encode() for f, _ in queue]
            socket.send(payloads, self._binary)

    # --- control --------------------------------------------------------------------------

    def welcome(self, server: str) -> None:
        self._push(self.protocol.welcome(server, SERVER_FEATURES))

    def close(self, code: CloseCode, text: str = "", retry_ms: int | None = None) -> None:
        """Say goodbye, then close after what is queued before it."""
        for item in self.protocol.close(code, text, retry_ms):
            self._apply(item)

    def _apply(self, item: Send | Close) -> None:
        if isinstance(item, Send):
            frame = ws_frame(item.frame, self._binary) if self._framed else item.frame
            self._queue.append((frame, 0.0))
            if self._backlog is not None:
                self._backlog += len(frame)
        else:
            self._closing = item
            if self._socket is not None and self._give_up is None:
                self._give_up = self._loop.call_later(CLOSE_TIMEOUT, self._socket.abort)
        self._wake_writer()

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
        if outputs:
            for item in outputs:
                self._apply(item)
            socket, goodbye = self._socket, self._closing
            if socket is not None and goodbye is not None and self.write_ready(socket):
                socket.close(int(goodbye.code), goodbye.reason)
        return within

    def attach(self, send: SendFrame, close: CloseSocket) -> None:
        """The socket's ASGI side. Its writer task starts now, or on the fast path only
        when it is needed (a paused socket, a close): a task per idle connection adds up."""
        self._send = send
        self._close_socket = close
        if self._socket is None or self._queue or self._closing is not None:
            self._wake_writer()

    def detach(self) -> None:
        """The socket is gone: stop the writer and the time-outs."""
        if self._writer is not None:
            self._writer.cancel()
        if self._give_up is not None:
            self._give_up.cancel()
        self.stop_timeouts()

    def _wake_writer(self) -> None:
        if self._send is None or self._close_socket is None:
            return  # not attached yet: `attach` starts the writer for what is queued
        if self._wake is None:
            self._wake = asyncio.Event()
            self._writer = self._loop.create_task(
                write_loop(self, self._send, self._close_socket, self._wake)
            )
        self._wake.set()

    def write_ready(self, socket: FrameSocket) -> bool:
        """Write the queue if `socket` takes it now (dropped if the socket is gone);
        False while it is paused: the writer waits for it to drain, counting the backlog."""
        if socket.ready():
            self._write_queue(socket)
        elif socket.gone():
            self._clear()
        else:
            self._backed_up()
            return False
        return True

    def next_frame(self) -> tuple[Frame, float] | None:
        """The oldest queued frame and when it was produced (frames sent one at a time,
        through ASGI), or None."""
        if not self._queue:
            return None
        frame, produced = self._queue.pop(0)
        if self._backlog is not None:
            self._backlog -= len(frame)
        return frame, produced

    @property
    def pending(self) -> bool:
        return bool(self._queue)

    @property
    def goodbye(self) -> Close | None:
        """The close the protocol decided on, once it has."""
        return self._closing

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
        if self._socket is not None:  # pings and pongs count as being heard
            self.protocol.heard(self._socket.heard_at)
        for item in self.protocol.tick(time.monotonic()):
            self._apply(item)
        if self._closing is None:
            self.start_timeouts()

    @property
    def socket(self) -> FrameSocket | None:
        """The `FrameSocket` frames go straight to, if the server offers one."""
        return self._socket

    @property
    def closing(self) -> bool:
        return self._closing is not None
