"""What the room log's compression costs and saves, against zlib's default settings.

    python -m bench.room_log [--rooms 60] [--actions 400] [--repeat 2000]

For each game: `rooms` rooms played `actions` random legal actions (bench/room_memory.py),
then the blocks their logs packed: bytes per message as packed, and as zlib's defaults
(a 32 KiB window, memory level 8, the same dictionary) pack the same frames; and the
microseconds to pack one block both ways (`repeat` blocks each, the log's way first, then
the defaults', in one process: compare them, not runs on different days).
"""

from __future__ import annotations

import argparse
import time
import zlib

from dicehall.rules import all_games
from dicehall.server.rooms.outgoing import _DICTIONARIES, _pack_block, _sized, _unpack_block

from .room_memory import played_rooms


def _pack_default(frames: list[bytes], dictionary: bytes) -> bytes:
    """A block as the log packed it before 2026-11-28 (docs/benchmarks/journal.md, "Cheaper
    acts")."""
    deflate = zlib.compressobj(1, zlib.DEFLATED, -15, zdict=dictionary)
    return deflate.compress(_sized(frames)) + deflate.flush()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--rooms", type=int, default=60)
    p.add_argument("--actions", type=int, default=400)
    p.add_argument("--repeat", type=int, default=2000)
    a = p.parse_args(argv)
    print(
        "| game | blocks | bytes per message raw | packed | zlib defaults"
        " | µs per block | defaults |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for game in (g.name for g in all_games()):
        cores = played_rooms(game, a.rooms, 4, a.actions)
        blocks = [block for core in cores for block in core.log._blocks]
        if not blocks:
            print(f"| {game} | 0 | | | | | |")
            continue
        dictionary = _DICTIONARIES[game]
        unpacked = [_unpack_block(block, dictionary) for block in blocks]
        messages = sum(len(frames) for frames in unpacked)
        raw = sum(len(frame) for frames in unpacked for frame in frames)
        packed = sum(len(block) for block in blocks)
        default = sum(len(_pack_default(frames, dictionary.data)) for frames in unpacked)
        sample = [unpacked[i % len(unpacked)] for i in range(a.repeat)]
        start = time.perf_counter()
        for frames in sample:
            _pack_block(_sized(frames), dictionary)
        ours = (time.perf_counter() - start) / a.repeat * 1e6
        start = time.perf_counter()
        for frames in sample:
            _pack_default(frames, dictionary.data)
        theirs = (time.perf_counter() - start) / a.repeat * 1e6
        print(
            f"| {game} | {len(blocks)} | {raw / messages:.1f} | {packed / messages:.2f} |"
            f" {default / messages:.2f} | {ours:.1f} | {theirs:.1f} |"
        )


if __name__ == "__main__":
    main()
