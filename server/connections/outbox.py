"""A peer's outbox: how its frames reach its client, one kind per transport, chosen once
when the connection is accepted (server/edge/app.py, with server/connections/writer.py's
`socket_outbox` or `asgi_outbox`).

The peer (server/connections/peer.py) keeps the protocol, the session and the queue's bound: it
decides what is queued, and cuts off a client that reads too slowly (4003). An outbox
holds the queue and moves its bytes:

- `SocketOutbox`: `dicehall serve`'s own socket (`FrameSocket`, server/edge/ws/). Room
  messages are queued as whole WebSocket frames taken from the process's `WireCache` (a
  roll fanned out to N seats is framed once), and everything queued during one turn of
  the event loop (a room's commit: the closed window, its events, the next window; and the
  reply that caused them) leaves in one write, from the process's `Flusher`, instead of
  one trip through Starlette and the ASGI server and one system call per message
  (docs/benchmarks/journal.md, "Load"). While the socket is paused (the client reads
  slowly) a writer task waits for it to drain, and the queue's bytes are counted.
- `ExtensionOutbox`: the same socket with per-message deflate: payloads, which websockets
  compresses and frames, still one write per turn.
- `AsgiOutbox`: any other ASGI server: a writer task sends one ASGI message per frame.

Every socket outbox of the process writes from one `Flusher`: the sockets that had frames
queued during one turn of the event loop get them written one turn later, all from one
callback. Why one turn later: a room's commit queues its messages for every member in the turn of
the request that caused it, and that request's reply is queued when its task resumes, in
the next turn; written after that, the reply and the messages leave in one write. Why one
callback for all: a commit touches every member of its room, and
two `call_soon` handles per member and commit were a measurable share of the fan-out's
CPU (docs/benchmarks/journal.md, "Faster than the frameworks...").

No coroutine here: this module compiles (server/compiled.py says why coroutines may
not). The writer tasks are server/connections/writer.py's, handed in when an outbox is made, so
this module imports nothing that imports it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence

from dicehall.protocol.codec import MSGPACK, Frame
from dicehall.protocol.subprotocols import Encoding
from dicehall.protocol.wsframes import frame as ws_frame

from ..edge.ws import CLOSE_TIMEOUT, FrameSocket
from ..metrics import LatencyHistogram
from ..rooms.outgoing import Outgoing


class Flusher:
    """Runs each `due` callback once, two turns of the loop after the first `due` of its
    turn (the turn it was asked in, then the one its reply comes in)."""

    __slots__ = ("_due", "_loop", "turns")

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        """The loop of the first `due` (the process's; its server may be built before)."""
        self._due: list[Callable[[], None]] = []
        self.turns = 0
        """The turns that had a flush due so far: what was made for one turn's writes (the
        sockets' `WireCache`, server/connections/outbox.py) is stale once this has moved on."""

    def due(self, flush: Callable[[], None]) -> None:
        """`flush` runs after the next turn (the caller asks once per turn at most)."""
        self._due.append(flush)
        if len(self._due) == 1:
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
            loop.call_soon(self._next_turn, loop)

    def _next_turn(self, loop: asyncio.AbstractEventLoop) -> None:
        self.turns += 1
        batch, self._due = self._due, []
        loop.call_soon(self._run, batch, loop)

    def _run(self, batch: list[Callable[[], None]], loop: asyncio.AbstractEventLoop) -> None:
        for flush in batch:
            try:
                flush()
            except Exception as exc:  # one socket's failure is not the others'
                loop.call_exception_handler(
                    {"message": "flushing a socket failed", "exception": exc}
                )


SendFrame = Callable[[Frame], Awaitable[None]]
"""Sends one frame as an ASGI message."""
CloseSocket = Callable[[int, str], Awaitable[None]]
"""Closes the WebSocket through ASGI (code, reason)."""


class Outbox:
    """A peer's queue of frames and the way it leaves; the peer checks the bound before
    it queues (`queue`, `backlog`)."""

    def __init__(self, encoding: Encoding, latency: LatencyHistogram | None) -> None:
        self.queue: list[tuple[Frame, float]] = []
        """What waits to be written, each with when its room message was made (0.0: not a
        room message)."""
        self.backlog: int | None = 0
        """Bytes in `queue` while the transport takes no writes: replies and views can be
        large, so a count of frames alone does not bound what a client that never reads
        pins. None while the socket takes writes: each turn's queue then leaves in that
        turn, and the hot path counts nothing."""
        self.goodbye: tuple[int, str] | None = None
        """The close (code, reason) that follows what is queued, once decided."""
        self.binary = encoding is MSGPACK
        self.latency = latency
        """The fan-out's latency, observed as each room message leaves."""
        self._loop = asyncio.get_running_loop()
        """Kept, as on every hot path (docs/contributing.md, "Hot paths")."""
        self._wake: asyncio.Event | None = None
        self._writer: asyncio.Task[None] | None = None

    def room(
        self, outgoing: Sequence[Outgoing], seat: int | None, encoding: Encoding, stamped: bool
    ) -> None:
        """Room messages as `seat` sees them, the bound already checked: the fan-out's
        common case, once per member and commit."""
        for out in outgoing:
            self.push(out.frame(seat, encoding, stamped), out.produced)

    def push(self, frame: Frame, produced: float) -> None:
        """Queue one frame (the bound already checked) and see that it leaves."""
        raise NotImplementedError

    def clear(self) -> None:
        """Drop what is queued (a slow consumer, a socket gone)."""
        self.queue.clear()
        if self.backlog is not None:
            self.backlog = 0

    def close(self, code: int, reason: str, at_once: bool = False) -> None:
        """Close after what is queued; `at_once`: now, if the transport takes it all now
        (a flood of control frames: the socket drops a client that goes on sending)."""
        self.goodbye = (code, reason)
        self._wake_writer()

    def detach(self) -> None:
        """The connection is gone: stop the writer."""
        if self._writer is not None:
            self._writer.cancel()

    def heard_at(self) -> float:
        """When the client last gave a sign of life other than a frame (0.0: unknown)."""
        return 0.0

    def greeted(self) -> None:
        """The client is past `hello` (the transport may hold a place for it until then)."""

    def _wake_writer(self) -> None:
        if self._wake is None:
            self._wake = asyncio.Event()
            self._writer = self._loop.create_task(self._write_loop(self._wake))
        self._wake.set()

    def _write_loop(self, wake: asyncio.Event) -> Coroutine[object, None, None]:
        """The writer task's coroutine (server/connections/writer.py's, handed in)."""
        raise NotImplementedError


class AsgiOutbox(Outbox):
    """Frames as ASGI messages, one at a time, from a writer task (which exists for the
    connection's life: under another ASGI server each frame is a task switch anyway)."""

    def __init__(
        self,
        send: SendFrame,
        close: CloseSocket,
        encoding: Encoding,
        latency: LatencyHistogram | None,
        write_loop: Callable[[AsgiOutbox, asyncio.Event], Coroutine[object, None, None]],
    ) -> None:
        super().__init__(encoding, latency)
        self.send = send
        self.close_socket = close
        self._loop_of = write_loop

    def push(self, frame: Frame, produced: float) -> None:
        self.queue.append((frame, produced))
        if self.backlog is not None:
            self.backlog += len(frame)
        self._wake_writer()

    def next_frame(self) -> tuple[Frame, float] | None:
        """The oldest queued frame and when it was produced, or None."""
        if not self.queue:
            return None
        frame, produced = self.queue.pop(0)
        if self.backlog is not None:
            self.backlog -= len(frame)
        return frame, produced

    def _write_loop(self, wake: asyncio.Event) -> Coroutine[object, None, None]:
        return self._loop_of(self, wake)


class SocketOutbox(Outbox):
    """Whole WebSocket frames, written straight to the `FrameSocket` once per turn; a
    writer task only while the socket is paused, and for the close."""

    def __init__(
        self,
        socket: FrameSocket,
        encoding: Encoding,
        latency: LatencyHistogram | None,
        flusher: Flusher,
        wires: WireCache,
        write_loop: Callable[[SocketOutbox, asyncio.Event], Coroutine[object, None, None]],
    ) -> None:
        super().__init__(encoding, latency)
        self.socket = socket
        self.backlog = None
        self._flusher = flusher
        """The process's (shared by its sockets: one callback per turn for all of them)."""
        self._wires = wires
        self._plain, self._stamped = wires.tables(encoding)
        self._flush_due = False
        self._give_up: asyncio.TimerHandle | None = None
        """From the decision to close: drops the socket if it is still open `CLOSE_TIMEOUT`
        later (the writer may wait for ever behind a client that reads nothing)."""
        self._loop_of = write_loop

    def room(
        self, outgoing: Sequence[Outgoing], seat: int | None, encoding: Encoding, stamped: bool
    ) -> None:
        # Each message's whole frame, framed once for all the members with the public view
        # (a seat's own variant has one member): a delivery is one lookup and one append,
        # and this runs for every delivery.
        wires = self._stamped if stamped else self._plain
        binary = self.binary
        queue = self.queue
        for out in outgoing:
            variant = out.variant(seat)
            if variant is None:
                wire = wires.get(out)
                if wire is None:
                    frame = out.variant_frame(None, encoding, stamped)
                    wire = self._wires.add(wires, out, ws_frame(frame, binary))
            else:
                wire = ws_frame(out.variant_frame(variant, encoding, stamped), binary)
            queue.append((wire, out.produced))
        if not self._flush_due:
            self._flush_due = True
            self._flusher.due(self._flush)

    def push(self, frame: Frame, produced: float) -> None:
        self._queued(ws_frame(frame, self.binary), produced)

    def _queued(self, frame: Frame, produced: float) -> None:
        """Queue a frame as it is written, and see that it leaves this turn."""
        self.queue.append((frame, produced))
        if self.backlog is not None:
            self.backlog += len(frame)
        if not self._flush_due:
            self._flush_due = True
            self._flusher.due(self._flush)

    def close(self, code: int, reason: str, at_once: bool = False) -> None:
        self.goodbye = (code, reason)
        if self._give_up is None:
            self._give_up = self._loop.call_later(CLOSE_TIMEOUT, self.socket.abort)
        self._wake_writer()
        if at_once and self.write_ready():
            self.socket.close(code, reason)

    def detach(self) -> None:
        super().detach()
        if self._give_up is not None:
            self._give_up.cancel()

    def heard_at(self) -> float:
        return self.socket.heard_at  # (pings and pongs count as being heard)

    def greeted(self) -> None:
        self.socket.greeted()

    def _flush(self) -> None:
        """Write what was queued, if the socket takes it now: the flusher calls it a turn
        after the turn that queued it, so the reply to the request that made a room's
        messages (its task resumes in the turn after the commit) joins them in one write."""
        self._flush_due = False
        if self.queue and not self.write_ready():
            self._wake_writer()  # paused: the writer task waits until it drains

    def write_ready(self) -> bool:
        """Write the queue if the socket takes it now (dropped if the socket is gone);
        False while it is paused: the writer waits for it to drain, counting the backlog."""
        socket = self.socket
        if socket.ready():
            self._write_queue(socket)
        elif socket.gone():
            self.clear()
        else:
            if self.backlog is None:  # from now until it drains
                self.backlog = sum(len(frame) for frame, _ in self.queue)
            return False
        return True

    def _write_queue(self, socket: FrameSocket) -> None:
        # (comprehensions, not one loop with a call per frame: this runs per delivery)
        queue, self.queue = self.queue, []
        self.backlog = None
        self._observe(queue)
        socket.write(b"".join([frame for frame, _ in queue]))  # type: ignore[misc]

    def _observe(self, queue: list[tuple[Frame, float]]) -> None:
        latency = self.latency
        if latency is not None:
            now = time.monotonic()
            latency.observe_each([now - produced for _, produced in queue if produced])

    def _write_loop(self, wake: asyncio.Event) -> Coroutine[object, None, None]:
        return self._loop_of(self, wake)


class ExtensionOutbox(SocketOutbox):
    """`SocketOutbox` for a socket with an extension (per-message deflate): the queue
    holds payloads, which the socket compresses and frames as it writes them."""

    def room(
        self, outgoing: Sequence[Outgoing], seat: int | None, encoding: Encoding, stamped: bool
    ) -> None:
        for out in outgoing:
            self.push(out.frame(seat, encoding, stamped), out.produced)

    def push(self, frame: Frame, produced: float) -> None:
        self._queued(frame, produced)

    def _write_queue(self, socket: FrameSocket) -> None:
        queue, self.queue = self.queue, []
        self.backlog = None
        self._observe(queue)
        payloads = [f if isinstance(f, bytes) else f.encode() for f, _ in queue]
        socket.send(payloads, self.binary)


class WireCache:
    """The process's whole WebSocket frames of the room messages being fanned out (their
    public view), per encoding and stamp (the `timestamps` feature): a commit reaches every
    member of its room in one turn of the event loop, so each message is framed once for
    all of them. Kept by the socket transport, not by the message: only its outboxes need
    frames whole. What an earlier turn framed is dropped at the next turn's first miss
    (the flusher counts turns): a message delivered later (a catch-up's held ones) is
    framed again, that is all."""

    def __init__(self, flusher: Flusher) -> None:
        self._flusher = flusher
        self._turn = -1
        self._tables: dict[tuple[Encoding, bool], dict[Outgoing, bytes]] = {
            (encoding, stamped): {} for encoding in Encoding for stamped in (False, True)
        }

    def tables(self, encoding: Encoding) -> tuple[dict[Outgoing, bytes], dict[Outgoing, bytes]]:
        """The tables of an encoding: without and with the stamp."""
        return self._tables[(encoding, False)], self._tables[(encoding, True)]

    def add(self, table: dict[Outgoing, bytes], out: Outgoing, wire: bytes) -> bytes:
        turn = self._flusher.turns
        if turn != self._turn:  # (not per delivery: once per message and encoding)
            self._turn = turn
            for each in self._tables.values():
                each.clear()
        table[out] = wire
        return wire
