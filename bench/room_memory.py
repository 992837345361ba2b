"""What one room being played costs in memory, without the server around it.

    python -m bench.room_memory [--rooms 300] [--seats 4] [--actions 60]

For each game: `rooms` RoomCores with `seats` seated players, started and played
`actions` random legal actions into their game (as far as the game lasts), every message
encoded for every seat as the fan-out would; then the Python allocations still held,
per room (tracemalloc, after a collection): the rules state, seats, the resume log and
the game record. The server's RSS per room (`dicehall loadtest`) adds the allocator's
slack and the finished rooms kept for a while (docs/benchmarks.md, "Memory").
"""

from __future__ import annotations

import argparse
import gc
import random
import tracemalloc

from dicehall.protocol.subprotocols import Encoding
from dicehall.rules import all_games, get_game
from dicehall.server.rooms.room import RoomCore


def played_rooms(
    game: str, rooms: int, seats: int, actions: int, history: int = 1024
) -> list[RoomCore]:
    rng = random.Random(game)
    out = []
    for i in range(rooms):
        core = RoomCore(f"r{i}", get_game(game), {}, seats, 30, history=history)
        for s in range(seats):
            core.join(f"p{s}", s, "nonce", now=0.0)
        core.start(now=0.0)
        for _ in range(actions):
            state = core.state
            if state is None or core.status != "playing":
                break
            seat = rng.choice(state.actors())
            for message in core.act(seat, rng.choice(state.legal_actions(seat)), None, 0.0):
                for member in (None, *range(seats)):
                    message.frame(member, Encoding.MSGPACK)
        out.append(core)
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--rooms", type=int, default=300)
    p.add_argument("--seats", type=int, default=4)
    p.add_argument("--actions", type=int, default=60)
    p.add_argument("--history", type=int, default=1024, help="resume log length (serve's)")
    a = p.parse_args(argv)
    print(f"{a.rooms} rooms x {a.seats} seats, {a.actions} actions into each game")
    print("| game | KiB per room | record entries | resume log messages |")
    print("|---|---:|---:|---:|")
    for game in (g.name for g in all_games()):
        gc.collect()
        tracemalloc.start()
        cores = played_rooms(game, a.rooms, a.seats, a.actions, a.history)
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        entries = sum(len(c.record_log) for c in cores) / len(cores)
        logged = sum(len(c.log) for c in cores) / len(cores)
        print(f"| {game} | {held / len(cores) / 1024:.1f} | {entries:.0f} | {logged:.0f} |")


if __name__ == "__main__":
    main()
