"""server/connections/outbox.py: each transport's outbox without a server (a socket that records its
writes, ASGI callables that record their messages), and the peer's bound over one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from dicehall.protocol.close import CloseCode
from dicehall.protocol.codec import Frame
from dicehall.protocol.messages.server import Event
from dicehall.protocol.subprotocols import Encoding
from dicehall.protocol.wsframes import parse_header
from dicehall.server.connections.outbox import Flusher, Outbox, WireCache
from dicehall.server.connections.peer import Peer
from dicehall.server.connections.writer import asgi_outbox, socket_outbox
from dicehall.server.edge.process import Server
from dicehall.server.edge.settings import Config
from dicehall.server.rooms.outgoing import Outgoing

MSGPACK = Encoding.MSGPACK


class Socket:
    """A `FrameSocket` that records what it is given; `paused` holds writes back."""

    on_shutdown: Callable[[], None] | None = None
    on_control: Callable[[], bool] | None = None
    waiting = False
    heard_at = 0.0

    def __init__(self, fast: bool = True) -> None:
        self.fast = fast
        self.writes: list[bytes] = []
        self.sent: list[list[bytes]] = []
        self.paused = False
        self.closed: tuple[int, str] | None = None

    async def receive(self) -> bytes | str | None:
        return None

    def send(self, payloads: list[bytes], binary: bool) -> None:
        self.sent.append(payloads)

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def ready(self) -> bool:
        return not self.paused and self.closed is None

    def gone(self) -> bool:
        return self.closed is not None

    async def drained(self) -> None:
        while self.paused:
            await asyncio.sleep(0)

    def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)

    def abort(self) -> None:
        self.closed = (1006, "")

    def greeted(self) -> None:
        return None


def event(seq: int, private: dict[int, Event] | None = None) -> Outgoing:
    return Outgoing(
        Event(room="r", seq=seq, event={"type": "answered", "seat": 1}),
        dict(private or {}),
    )


def payloads(written: bytes) -> list[bytes]:
    out, pos = [], 0
    while header := parse_header(written, pos, len(written)):
        _, _, start, pos = header
        out.append(written[start:pos])
    return out


def state(box: Outbox) -> tuple[int | None, int]:
    """The bytes counted and the frames queued (read anew: mypy keeps what it narrowed)."""
    return box.backlog, len(box.queue)


def goodbye(box: Outbox) -> int | None:
    return None if box.goodbye is None else box.goodbye[0]


async def turns(n: int = 3) -> None:
    """The loop turns a flush waits for (server/connections/outbox.py, `Flusher`: two after the
    queueing)."""
    for _ in range(n):
        await asyncio.sleep(0)


async def test_a_room_message_is_framed_once_for_every_socket_and_leaves_in_one_write() -> None:
    flusher = Flusher()
    wires = WireCache(flusher)
    sockets = [Socket(), Socket()]
    boxes = [socket_outbox(s, MSGPACK, flusher, wires) for s in sockets]
    messages = [event(1), event(2)]
    for box in boxes:
        box.room(messages, None, MSGPACK, False)
    assert boxes[0].queue[0][0] is boxes[1].queue[0][0], "one frame for both"
    await turns()
    for socket in sockets:
        (written,) = socket.writes
        assert payloads(written) == [out.frame(None, MSGPACK) for out in messages]
    assert all(not box.queue and box.backlog is None for box in boxes)


async def test_the_cache_keeps_a_turn_s_frames_and_a_seat_s_own_variant_is_not_shared() -> None:
    flusher = Flusher()
    wires = WireCache(flusher)
    sockets = [Socket(), Socket()]
    boxes = [socket_outbox(s, MSGPACK, flusher, wires) for s in sockets]
    mine = Event(room="r", seq=1, event={"type": "drew", "tiles": [1, 2]})
    first = event(1, {1: mine})
    for seat, box in enumerate(boxes):
        box.room([first], seat, MSGPACK, False)
    plain, _ = wires.tables(MSGPACK)
    assert list(plain) == [first], "the public view only"
    await turns()
    assert payloads(sockets[0].writes[0]) == [first.frame(0, MSGPACK)]
    assert payloads(sockets[1].writes[0]) == [first.frame(1, MSGPACK)] != sockets[0].writes
    later = event(2)
    boxes[0].room([later], 0, MSGPACK, False)
    assert list(plain) == [later], "an earlier turn's frames are dropped"


async def test_a_paused_socket_is_written_once_it_drains_its_bytes_counted_meanwhile() -> None:
    flusher = Flusher()
    socket = Socket()
    box = socket_outbox(socket, MSGPACK, flusher, WireCache(flusher))
    socket.paused = True
    box.room([event(1), event(2)], None, MSGPACK, False)
    await turns()
    assert not socket.writes
    assert box.backlog == sum(len(frame) for frame, _ in box.queue) > 0
    socket.paused = False
    await turns()
    assert len(payloads(b"".join(socket.writes))) == 2
    assert state(box) == (None, 0)
    box.close(1000, "bye")
    await turns()
    assert socket.closed == (1000, "bye")
    box.detach()


async def test_with_an_extension_the_socket_is_given_payloads() -> None:
    flusher = Flusher()
    socket = Socket(fast=False)
    box = socket_outbox(socket, Encoding.JSON, flusher, WireCache(flusher))
    out = event(1)
    box.room([out], None, Encoding.JSON, False)
    box.push('{"type":"x"}', 0.0)
    await turns()
    assert socket.sent == [[str(out.frame(None, Encoding.JSON)).encode(), b'{"type":"x"}']]
    assert not socket.writes


async def test_through_asgi_each_frame_is_a_message_then_the_close() -> None:
    said: list[Frame | tuple[int, str]] = []

    async def send(frame: Frame) -> None:
        said.append(frame)

    async def close(code: int, reason: str) -> None:
        said.append((code, reason))

    box = asgi_outbox(send, close, Encoding.JSON)
    box.room([event(1)], None, Encoding.JSON, False)
    box.push("b", 0.0)
    assert box.backlog == sum(len(frame) for frame, _ in box.queue)
    box.close(4000, "done")
    await turns()
    assert said == [event(1).frame(None, Encoding.JSON), "b", (4000, "done")]
    assert box.backlog == 0 and not box.queue


async def test_a_peer_whose_socket_takes_nothing_is_cut_off_past_its_bytes_bound() -> None:
    server = Server(Config(db="none"))
    socket = Socket()
    box = socket_outbox(socket, MSGPACK, server.flusher, WireCache(server.flusher))
    peer = Peer(server.services, MSGPACK, box, max_queue_bytes=2000)
    socket.paused = True
    peer.room([event(seq) for seq in range(1, 11)], None)  # (taken: nothing counted yet)
    await turns()
    assert box.backlog is not None and box.goodbye is None
    peer.room([event(seq) for seq in range(11, 100)], None)
    assert peer.closing and goodbye(box) == CloseCode.SLOW_CONSUMER
    assert len(box.queue) == 1, "the queue dropped, the goodbye alone left"
    peer.detach()
    await turns()
