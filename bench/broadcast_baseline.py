"""The raw baseline: a bare `websockets` server that only broadcasts.

It speaks just enough of the dicehall protocol for `dicehall loadtest` to drive it
unchanged (welcome, hello with the `timestamps` feature, ping, create, join and its
snapshot, leave), and then does nothing but what a game server cannot avoid: once a
room's seats are all joined, it broadcasts `event` messages of a fixed size to them at a
fixed rate, each one encoded once, stamped once (`sent_us`), and written to every member
with `websockets.asyncio.server.broadcast`. No rules, no sessions, no queues of its own.

Same machine, same load generator, same connections, same message sizes and rate: the
ratio of dicehall's deliveries per server CPU-second to this server's is what dicehall
costs over the best a Python process could do (bench/load_baseline.py measures both in
one run).

    python -m bench.broadcast_baseline --port 8766 --rate 6 --size 110
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
import signal
import time
from collections.abc import Callable
from typing import Any

import msgspec
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

SUBPROTOCOLS = {"dicehall.v1.msgpack": "msgpack", "dicehall.v1.json": "json"}
LIMITS = {
    "max_frame": 16384,
    "max_depth": 8,
    "rate": 20,
    "burst": 40,
    "max_errors": 10,
    "hello_timeout_ms": 10000,
    "idle_timeout_ms": 60000,
    "heartbeat_ms": 20000,
}


class Room:
    """Members and a broadcast timer: `burst` messages every `burst / rate` seconds."""

    def __init__(self, room_id: str, seats: int, baseline: Baseline) -> None:
        self.id = room_id
        self.seats = seats
        self.baseline = baseline
        self.members: dict[str, list[ServerConnection]] = {"msgpack": [], "json": []}
        self.joined = 0
        self.seq = 0
        self._timer: asyncio.TimerHandle | None = None

    def join(self, ws: ServerConnection, encoding: str) -> None:
        self.members[encoding].append(ws)
        self.joined += 1

    def start_when_full(self) -> None:
        """After the last joiner's snapshot: every member's stream starts at seq 1."""
        if self.joined >= self.seats and self._timer is None:
            period = self.baseline.burst / self.baseline.rate
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(random.uniform(0, period), self._tick, period)

    def leave(self, ws: ServerConnection) -> None:
        for members in self.members.values():
            if ws in members:
                members.remove(ws)
        if not any(self.members.values()) and self._timer is not None:
            self._timer.cancel()

    def _tick(self, period: float) -> None:
        self._timer = asyncio.get_running_loop().call_later(period, self._tick, period)
        for _ in range(self.baseline.burst):
            self.seq += 1
            message = {
                "type": "event",
                "room": self.id,
                "seq": self.seq,
                "event": {"type": "pad", "pad": self.baseline.pad},
                "sent_us": time.time_ns() // 1000,
            }
            for encoding, members in self.members.items():
                if members:
                    broadcast(members, self.baseline.encode(message, encoding))


class Baseline:
    def __init__(self, rate: float, size: int, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self.rooms: dict[str, Room] = {}
        self._ids = itertools.count(1)
        self._msgpack = msgspec.msgpack.Encoder()
        self._json = msgspec.json.Encoder()
        probe = {"type": "event", "room": "b00000", "seq": 100, "event": {"type": "pad"}}
        probe["sent_us"] = time.time_ns() // 1000
        base = len(self._msgpack.encode({**probe, "event": {"type": "pad", "pad": ""}}))
        self.pad = "x" * max(0, size - base)

    def encode(self, message: dict[str, Any], encoding: str) -> bytes | str:
        if encoding == "msgpack":
            return self._msgpack.encode(message)
        return self._json.encode(message).decode()

    async def handler(self, ws: ServerConnection) -> None:
        encoding = SUBPROTOCOLS.get(ws.subprotocol or "")
        if encoding is None:
            await ws.close(4000, "unsupported subprotocol")
            return
        decode: Callable[[Any], Any] = (
            msgspec.msgpack.decode if encoding == "msgpack" else msgspec.json.decode
        )
        welcome = {
            "type": "welcome",
            "server": "broadcast-baseline",
            "protocol": ws.subprotocol,
            "limits": LIMITS,
            "features": ["timestamps"],
        }
        rooms: set[Room] = set()
        try:
            await ws.send(self.encode(welcome, encoding))
            async for frame in ws:
                request = decode(frame)
                result = self.handle(request, ws, encoding, rooms)
                reply: dict[str, Any] = {"type": "reply", "id": request["id"], "ok": True}
                if result is None:
                    reply["ok"] = False
                    reply["error"] = {"code": 1005, "name": "unknown-type", "message": "no"}
                else:
                    reply["result"] = result
                await ws.send(self.encode(reply, encoding))
                if request.get("type") == "join" and result is not None:
                    room = self.rooms[result["room"]]
                    snapshot = {
                        "type": "snapshot",
                        "room": room.id,
                        "seq": room.seq,
                        "seat": result["seat"],
                        "view": {},
                        "info": {"room": room.id},
                        "turn": None,
                    }
                    await ws.send(self.encode(snapshot, encoding))
                    room.start_when_full()
        except ConnectionClosed:
            pass
        finally:
            for room in rooms:
                room.leave(ws)

    def handle(
        self, request: dict[str, Any], ws: ServerConnection, encoding: str, rooms: set[Room]
    ) -> dict[str, Any] | None:
        kind = request.get("type")
        if kind == "hello":
            wanted = request.get("features") or []
            features = ["timestamps"] if "timestamps" in wanted else []
            return {"name": request.get("name"), "seats": [], "rejected": [], "features": features}
        if kind == "ping":
            return {"time": int(time.time() * 1000), "echo": request.get("time")}
        if kind == "create":
            room_id = f"b{next(self._ids):05d}"
            seats = int(request["seats"])
            self.rooms[room_id] = Room(room_id, seats, self)
            # A whole room description: the load tester reads it as the protocol's type.
            info: dict[str, Any] = {
                "room": room_id,
                "name": request.get("name") or room_id,
                "game": request.get("game") or "qwixx",
                "options": {},
                "status": "open",
                "public": False,
                "turn_window": request.get("turn_window") or 10,
                "seats": [{"seat": seat, "kind": "open"} for seat in range(seats)],
            }
            return {"room": info}
        if kind == "join":
            room = self.rooms[request["room"]]
            seat = room.joined
            room.join(ws, encoding)
            rooms.add(room)
            return {"room": room.id, "seat": seat, "token": f"baseline.{room.id}.{seat}"}
        if kind == "leave":
            room = self.rooms[request["room"]]
            room.leave(ws)
            rooms.discard(room)
            return {}
        return None


async def run(host: str, port: int, baseline: Baseline) -> None:
    stop = asyncio.get_running_loop().create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set_result, None)
    async with serve(
        baseline.handler,
        host,
        port,
        subprotocols=list(SUBPROTOCOLS),  # type: ignore[arg-type]
        compression=None,
        max_size=65536,
        ping_interval=LIMITS["heartbeat_ms"] / 1000,
        backlog=4096,
    ):
        await stop


def main() -> None:
    import uvloop

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8766)
    p.add_argument("--rate", type=float, default=6.0, help="messages per second per room")
    p.add_argument("--size", type=int, default=110, help="bytes per message (MessagePack)")
    p.add_argument("--burst", type=int, default=1, help="messages sent back to back per tick")
    args = p.parse_args()
    uvloop.run(run(args.host, args.port, Baseline(args.rate, args.size, args.burst)))


if __name__ == "__main__":
    main()
