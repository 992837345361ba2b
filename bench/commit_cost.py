"""What one commit costs the owner: CPU per `act`, memory backend against Redis, in process.

    python -m bench.commit_cost [--acts 3000] [--rounds 2]

One Qwixx room of four seats whose members only count what they are sent (no sockets),
random legal actions one at a time through `backend.call`, as a session makes them:

- memory: the memory backend (the room runs the command in the caller's task);
- memory + PING: the same, and then one PING round trip to Redis per act through the
  backend's own connection (server/backends/redis/resp.py): the least a durable commit could
  add, a sleep and a wake-up included, with the interpreter's state as a commit finds it;
- redis: the Redis backend against a fresh redis-server (append-only file, fsync every
  second), which commits each act (a fenced script: log entries, snapshot, lease) before
  delivering it.

CPU is this process's (`time.process_time`) around each call, Redis's own excluded. The
difference between the last two rows is the commit's own work beyond one round trip.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import uvloop

from bench.processes import redis_server
from dicehall.server.backends.base import Backend, RoomSpec
from dicehall.server.backends.memory import MemoryBackend
from dicehall.server.backends.redis import RedisBackend
from dicehall.server.backends.redis.resp import RespClient
from dicehall.server.connections.hub import Hub
from dicehall.server.rooms.commands import ActCmd, JoinCmd, StartCmd
from dicehall.server.rooms.outgoing import Outgoing
from dicehall.server.rooms.room import RoomCore

SPEC = RoomSpec(game="qwixx", options={}, seats=4, turn_window=30, public=False)


class Counter:
    """A member that only counts the messages it is sent."""

    progress = False

    def __init__(self) -> None:
        self.messages = 0

    def deliver(self, room: str, outgoing: list[Outgoing]) -> None:
        self.messages += len(outgoing)

    def deliver_progress(self, room: str, progress: Outgoing) -> None:
        """(never called: it did not ask)"""

    def rewound(self, room: str) -> None:
        """(never called: no failover here)"""


def core_of(backend: Backend, room: str) -> RoomCore:
    core = backend.local_room(room)
    assert core is not None
    return core


async def play(backend: Backend, hub: Hub, acts: int, ping: RespClient | None) -> float:
    """µs of CPU per act, over `acts` acts in as many games as it takes."""
    rng = random.Random(1)
    done, cpu = 0, 0.0
    while done < acts:
        room = (await backend.create(SPEC)).room
        for _ in range(SPEC.seats):
            hub.add(room, Counter())
        await backend.subscribe(room)
        for seat in range(SPEC.seats):
            await backend.call(room, JoinCmd(name=f"p{seat}", seat=seat, nonce="n"))
        await backend.call(room, StartCmd(seat=0))
        core = core_of(backend, room)
        while done < acts and core.status == "playing" and core.state is not None:
            seat = core.state.actors()[0]
            action = rng.choice(core.state.legal_actions(seat))
            start = time.process_time()
            await backend.call(room, ActCmd(seat=seat, action=action, window=None))
            if ping is not None:
                await ping.execute("PING")
            cpu += time.process_time() - start
            done += 1
    return cpu / acts * 1e6


async def measure(acts: int, url: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for name in ("memory", "memory + PING", "redis"):
        hub = Hub()
        backend: Backend = RedisBackend(hub, url) if name == "redis" else MemoryBackend(hub)
        ping = RespClient(url) if name == "memory + PING" else None
        await backend.start()
        try:
            out[name] = await play(backend, hub, acts, ping)
        finally:
            await backend.stop()
            if ping is not None:
                await ping.close()
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--acts", type=int, default=3000)
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args(argv)
    print("| round | memory (µs/act) | memory + PING | redis |")
    print("|---:|---:|---:|---:|")
    with (
        tempfile.TemporaryDirectory(prefix="dicehall-bench-") as tmp,
        redis_server(Path(tmp)) as (url, _),
    ):
        for n in range(1, a.rounds + 1):
            r = uvloop.run(measure(a.acts, url))
            print(f"| {n} | {r['memory']:.1f} | {r['memory + PING']:.1f} | {r['redis']:.1f} |")


if __name__ == "__main__":
    main()
