"""What the server's own Python costs per delivered message, in one process, repeatably.

    python -m bench.server_path [--rooms 50] [--acts 6000] [--rounds 3]

Rooms of four seats play Qwixx through every layer of `dicehall serve` above the socket:
each seat is a `Peer` (protocol, session, bounded queue; its outbox, the flusher) on a socket that
only counts the bytes of the frames it is handed, and each request is a MessagePack frame
fed to the `Peer` as the endpoint feeds it, with the features the load tester asks for
(`timestamps`, `legal_in_window`). What is left out: uvicorn, the WebSocket parser, the
kernel, and the load generator, whose share of the cores and of the caches makes
`dicehall loadtest`'s CPU per delivery drift by a quarter between runs minutes apart.

CPU (`time.process_time`) is counted around the server's calls only: the seats' choices
(a random legal action, read from the rules) are not. Deliveries are the room messages
the server's fan-out histogram counted. Under `valgrind --tool=callgrind` the instruction
count is the same run after run to within 1 % (the rooms' seeds differ), so two trees
compare without the machine's drift: run each with `--acts 1000` and `--acts 3000`, and
divide the difference in instructions by the difference in deliveries
(docs/contributing.md, "Profiling and benchmarks").
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
import time
from typing import Any

import msgspec
import uvloop

from dicehall.protocol.subprotocols import Encoding
from dicehall.protocol.wsframes import parse_header
from dicehall.server.connections.outbox import WireCache
from dicehall.server.connections.peer import Peer
from dicehall.server.connections.writer import socket_outbox
from dicehall.server.edge.process import Server
from dicehall.server.edge.settings import Config
from dicehall.server.rooms.room import RoomCore

from .send_path import CountingSocket

SEATS = 4
FEATURES = ["timestamps", "legal_in_window"]


class KeepingSocket(CountingSocket):
    """bench.send_path's counting socket that also keeps its last write (the set-up reads
    its replies; play reads nothing)."""

    def __init__(self) -> None:
        super().__init__()
        self.last = b""

    def write(self, data: bytes) -> None:
        super().write(data)
        self.last = data

    def messages(self) -> list[dict[str, Any]]:
        """The messages of the last write."""
        out, pos = [], 0
        while header := parse_header(self.last, pos, len(self.last)):
            _, _, start, pos = header
            out.append(msgspec.msgpack.decode(self.last[start:pos]))
        return out


class Seat:
    """One player's connection: a `Peer` and the request ids it has used."""

    def __init__(self, server: Server, wires: WireCache, socket: KeepingSocket) -> None:
        self.socket = socket
        outbox = socket_outbox(
            socket, Encoding.MSGPACK, server.flusher, wires, server.fanout_latency
        )
        self.peer = Peer(server.services, Encoding.MSGPACK, outbox)
        self._ids = itertools.count(1)

    def frame(self, kind: str, **fields: object) -> bytes:
        return msgspec.msgpack.encode({"type": kind, "id": next(self._ids), **fields})


async def turns() -> None:
    """The loop turns a flush waits for (server/connections/outbox.py, `Flusher`: two after the
    commit)."""
    for _ in range(3):
        await asyncio.sleep(0)


class Bench:
    def __init__(self, rooms: int, seed: int) -> None:
        self.server = Server(Config(db="none"))
        self.wires = WireCache(self.server.flusher)
        self.rng = random.Random(seed)
        self.rooms = rooms
        self.cpu = 0.0
        self.tables: list[tuple[RoomCore, list[Seat]]] = []

    async def timed(self, seat: Seat, frame: bytes) -> None:
        start = time.process_time()
        request = seat.peer.take(frame)  # (as the endpoint does: server/edge/app.py, `_receive`)
        if request is not None:
            await seat.peer.session.handle(request)
        await turns()
        self.cpu += time.process_time() - start

    async def new_room(self) -> tuple[RoomCore, list[Seat]]:
        seats = [Seat(self.server, self.wires, KeepingSocket()) for _ in range(SEATS)]
        for i, seat in enumerate(seats):
            await self.timed(
                seat, seat.frame("hello", client="bench", name=f"p{i}", features=FEATURES)
            )
        host = seats[0]
        await self.timed(host, host.frame("create", game="qwixx", seats=SEATS, public=False))
        (reply,) = host.socket.messages()
        room = reply["result"]["room"]["room"]
        for i, seat in enumerate(seats):
            await self.timed(seat, seat.frame("join", room=room, seat=i))
        await self.timed(host, host.frame("start", room=room))
        core = self.server.backend.local_room(room)
        assert core is not None and core.status == "playing"
        return core, seats

    async def run(self, acts: int) -> tuple[float, int]:
        """CPU seconds and deliveries over `acts` acts."""
        self.cpu = 0.0
        sent = self.server.fanout_latency.count
        done = 0
        while done < acts:
            self.tables = [t for t in self.tables if t[0].status == "playing"]
            while len(self.tables) < self.rooms:
                self.tables.append(await self.new_room())
            for core, seats in self.tables:  # one answer each, room after room, as a load has it
                state = core.state
                if core.status != "playing" or state is None:
                    continue
                actor = state.actors()[0]
                action = self.rng.choice(state.legal_actions(actor))
                seat = seats[actor]
                await self.timed(seat, seat.frame("act", room=core.id, action=action))
                done += 1
        return self.cpu, self.server.fanout_latency.count - sent


async def measure(rooms: int, acts: int, seed: int) -> tuple[float, int]:
    bench = Bench(rooms, seed)
    await bench.server.start()
    try:
        await bench.run(acts // 10)  # warm: rooms made, every path taken once
        return await bench.run(acts)
    finally:
        await bench.server.stop()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--rooms", type=int, default=50)
    p.add_argument("--acts", type=int, default=6000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    for n in range(1, a.rounds + 1):
        cpu, deliveries = uvloop.run(measure(a.rooms, a.acts, a.seed))
        print(
            f"round {n}: {a.acts} acts, {deliveries:,} deliveries, "
            f"{cpu / deliveries * 1e6:.3f} µs CPU per delivery, {cpu / a.acts * 1e6:.1f} per act",
            flush=True,
        )


if __name__ == "__main__":
    main()
