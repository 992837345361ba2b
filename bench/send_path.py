"""What delivering a room message costs the server, timed alone: the fan-out's send path.

    python -m bench.send_path [--commits 2000] [--messages 15] [--members 4]

Each commit hands `messages` room messages to `members` WebSocket connections (the hub's
job: each session's filter, the frame memoised per encoding and stamp, the connection's
bounded queue, then one framed write per connection and turn of the event loop) on uvloop,
with the `timestamps` feature on as the load tester asks for it. The transport only counts
bytes, so the figure is the Python of the path, without the kernel's part of a write.
Compare with `dicehall loadtest`'s CPU per delivery, which also pays for every request.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable

import uvloop

from dicehall.protocol.messages.server import Event
from dicehall.protocol.subprotocols import Encoding
from dicehall.protocol.wsframes import frames
from dicehall.server.connections.outbox import WireCache
from dicehall.server.connections.peer import Peer
from dicehall.server.connections.writer import socket_outbox
from dicehall.server.edge.process import Server
from dicehall.server.edge.settings import Config
from dicehall.server.rooms.outgoing import Outgoing


class CountingSocket:
    """Stands in for the `FrameSocket` of `dicehall serve` (server/edge/ws/): always writable,
    takes whole frames as that socket does on its fast path, and counts the bytes."""

    on_shutdown: Callable[[], None] | None = None
    on_control: Callable[[], bool] | None = None
    fast = True
    waiting = False
    heard_at = 0.0

    def __init__(self) -> None:
        self.written = 0

    async def receive(self) -> bytes | str | None:
        return None

    def send(self, payloads: list[bytes], binary: bool) -> None:
        self.written += len(frames(payloads, binary))

    def write(self, data: bytes) -> None:
        self.written += len(data)

    def ready(self) -> bool:
        return True

    def gone(self) -> bool:
        return False

    async def drained(self) -> None:
        return None

    def close(self, code: int, reason: str) -> None:
        return None

    def abort(self) -> None:
        return None

    def greeted(self) -> None:
        return None


async def measure(commits: int, messages: int, members: int) -> tuple[float, int]:
    server = Server(Config())
    latency = server.fanout_latency  # the server's own: what /metrics exports
    sockets = [CountingSocket() for _ in range(members)]
    wires = WireCache(server.flusher)
    conns = [
        Peer(
            server.services,
            Encoding.MSGPACK,
            socket_outbox(s, Encoding.MSGPACK, server.flusher, wires, latency),
        )
        for s in sockets
    ]
    for seat, conn in enumerate(conns):
        conn.session.timestamps = True
        conn.session.seats["r"] = seat
    batches = [
        [
            Outgoing(
                Event(room="r", seq=c * messages + i + 1, event={"type": "answered", "seat": 1})
            )
            for i in range(messages)
        ]
        for c in range(commits)
    ]
    start = time.process_time()
    for batch in batches:
        for conn in conns:
            conn.session.stream.deliver("r", batch)
        for _ in range(3):  # the writes happen two turns of the loop later
            await asyncio.sleep(0)
    cpu = time.process_time() - start
    return cpu / (commits * messages * members) * 1e6, sum(s.written for s in sockets)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--commits", type=int, default=2000)
    p.add_argument("--messages", type=int, default=15)
    p.add_argument("--members", type=int, default=4)
    a = p.parse_args(argv)
    us, written = uvloop.run(measure(a.commits, a.messages, a.members))
    print(
        f"{a.commits} commits x {a.messages} messages x {a.members} members: "
        f"{us:.2f} µs CPU per delivery ({written:,} bytes written)"
    )


if __name__ == "__main__":
    main()
