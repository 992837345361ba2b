"""Codec speed: decode + validate a typical action, encode a typical roll event.

    python -m bench.protocol_speed [--batches N] [--calls N]

Candidates: msgspec (typed decode that validates in the same pass: the project's codec),
and plain decoders (msgpack, ormsgpack, json, orjson, untyped msgspec) followed by a
hand-written validator of the `act` message that checks what the schema checks. Each
figure is the median over batches of the mean time per call. Targets (issue 4): decode +
validate <= 5 us, encode <= 3 us, median.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import msgpack  # type: ignore[import-untyped]
import msgspec

from dicehall.protocol import (
    Act,
    Action,
    ClientMessageDecoder,
    Encoding,
    Event,
    Hello,
    ServerConnection,
    encode,
)

DECODE_TARGET_US = 5.0
ENCODE_TARGET_US = 3.0

ACT = {
    "type": "act",
    "id": 1234,
    "room": "r7Kx2",
    "window": 17,
    "action": {"type": "enter", "row": "red", "box": 3},
}
ROLL = Event(
    room="r7Kx2",
    seq=42,
    event={"type": "roll", "seat": 1, "dice": {"red": 4, "yellow": 2, "blue": 6}, "sum": 12},
)
ROLL_DICT = msgspec.to_builtins(ROLL)

_ACT_KEYS = {"type", "id", "room", "action", "window"}
_ACTION_KEYS = {"type", "dice", "row", "box", "number", "tiles", "hold", "column"}


def _int(value: object, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def _word(value: object, longest: int = 32) -> bool:
    return type(value) is str and 0 < len(value) <= longest


def _words(value: object, most: int) -> bool:
    return type(value) is list and len(value) <= most and all(_word(w) for w in value)


def validate_act(msg: Any) -> Any:
    """What the schema checks for `act`, by hand (the fair competitor to a typed decode)."""
    if type(msg) is not dict or msg.get("type") != "act" or not msg.keys() <= _ACT_KEYS:
        raise ValueError("not an act")
    if not _int(msg.get("id"), 0, 2**31 - 1):
        raise ValueError("id")
    if not _word(msg.get("room")):
        raise ValueError("room")
    window = msg.get("window")
    if window is not None and not _int(window, 0, 2**53 - 1):
        raise ValueError("window")
    action = msg.get("action")
    if type(action) is not dict or not action.keys() <= _ACTION_KEYS:
        raise ValueError("action")
    if not _word(action.get("type")):
        raise ValueError("action type")
    row = action.get("row")
    if row is not None and not (_word(row) or _int(row, 0, 12)):
        raise ValueError("row")
    for key, low, high in (("box", 0, 9), ("number", 2, 12)):
        if action.get(key) is not None and not _int(action[key], low, high):
            raise ValueError(key)
    if action.get("dice") is not None and not _words(action["dice"], 6):
        raise ValueError("dice")
    if action.get("column") is not None and not _word(action["column"]):
        raise ValueError("column")
    hold = action.get("hold")
    if hold is not None and not (
        type(hold) is list and len(hold) <= 6 and all(_int(h, 0, 5) for h in hold)
    ):
        raise ValueError("hold")
    tiles = action.get("tiles")
    if tiles is not None:
        if type(tiles) is not list or len(tiles) > 6:
            raise ValueError("tiles")
        for tile in tiles:
            if type(tile) is not dict or not tile.keys() <= {"color", "shape", "x", "y"}:
                raise ValueError("tile")
            if not (_word(tile.get("color")) and _word(tile.get("shape"))):
                raise ValueError("tile words")
            if any(tile.get(k) is not None and not _int(tile[k], -256, 256) for k in "xy"):
                raise ValueError("tile xy")
    return msg


def median_us(fn: Callable[[Any], Any], arg: Any, batches: int, calls: int) -> float:
    fn(arg)
    per_call = []
    for _ in range(batches):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn(arg)
        per_call.append((time.perf_counter_ns() - start) / calls / 1000)
    return statistics.median(per_call)


def _optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def decode_candidates() -> list[tuple[str, str, Callable[[Any], Any], Any]]:
    """(library, encoding, function, frame) for decode + validate of ACT."""
    packed = msgpack.packb(ACT)
    text = json.dumps(ACT, separators=(",", ":"))
    out: list[tuple[str, str, Callable[[Any], Any], Any]] = [
        (
            "msgspec typed (chosen)",
            "msgpack",
            ClientMessageDecoder(Encoding.MSGPACK).decode,
            packed,
        ),
        ("msgspec typed (chosen)", "json", ClientMessageDecoder(Encoding.JSON).decode, text),
        (
            "msgspec untyped + hand",
            "msgpack",
            lambda d: validate_act(msgspec.msgpack.decode(d)),
            packed,
        ),
        ("msgspec untyped + hand", "json", lambda d: validate_act(msgspec.json.decode(d)), text),
        ("msgpack + hand", "msgpack", lambda d: validate_act(msgpack.unpackb(d)), packed),
        ("json (stdlib) + hand", "json", lambda d: validate_act(json.loads(d)), text),
    ]
    ormsgpack, orjson = _optional("ormsgpack"), _optional("orjson")
    if ormsgpack is not None:
        out.append(
            ("ormsgpack + hand", "msgpack", lambda d: validate_act(ormsgpack.unpackb(d)), packed)
        )
    if orjson is not None:
        out.append(("orjson + hand", "json", lambda d: validate_act(orjson.loads(d)), text))
    return out


def encode_candidates() -> list[tuple[str, str, Callable[[Any], Any], Any]]:
    """(library, encoding, function, message) for encoding the ROLL event to a frame."""
    out: list[tuple[str, str, Callable[[Any], Any], Any]] = [
        ("msgspec Struct (chosen)", "msgpack", lambda m: encode(m, Encoding.MSGPACK), ROLL),
        ("msgspec Struct (chosen)", "json", lambda m: encode(m, Encoding.JSON), ROLL),
        ("msgpack dict", "msgpack", msgpack.packb, ROLL_DICT),
        ("json (stdlib) dict", "json", lambda m: json.dumps(m, separators=(",", ":")), ROLL_DICT),
    ]
    ormsgpack, orjson = _optional("ormsgpack"), _optional("orjson")
    if ormsgpack is not None:
        out.append(("ormsgpack dict", "msgpack", ormsgpack.packb, ROLL_DICT))
    if orjson is not None:
        out.append(("orjson dict", "json", lambda m: orjson.dumps(m).decode(), ROLL_DICT))
    return out


def connection_candidates(frames: int) -> list[tuple[str, str, Callable[[Any], Any], Any]]:
    """The server's whole per-frame path: rate limit, decode, id and state checks, reply."""
    out: list[tuple[str, str, Callable[[Any], Any], Any]] = []
    for encoding in Encoding:
        conn = ServerConnection(encoding, now=0.0)
        conn.receive(encode(Hello(id=0, client="bench"), encoding), 0.0)
        action = Action(type="enter", row="red", box=3)
        acts = iter(
            [
                encode(Act(id=i, room="r7Kx2", window=17, action=action), encoding)
                for i in range(1, frames + 2)
            ]
        )
        clock = iter(range(1, frames + 2))

        def step(
            _: Any, conn: ServerConnection = conn, acts: Any = acts, clock: Any = clock
        ) -> Any:
            [request] = conn.receive(next(acts), float(next(clock)))
            return conn.reply(request.id)  # type: ignore[union-attr]

        out.append(("ServerConnection receive + reply", encoding.value, step, None))
    return out


def run(batches: int, calls: int) -> dict[str, list[tuple[str, str, float]]]:
    return {
        "decode+validate act": [
            (lib, enc, median_us(fn, arg, batches, calls))
            for lib, enc, fn, arg in decode_candidates()
        ],
        "encode roll event": [
            (lib, enc, median_us(fn, arg, batches, calls))
            for lib, enc, fn, arg in encode_candidates()
        ],
        "per-frame server path": [
            (lib, enc, median_us(fn, arg, batches, calls // 4))
            for lib, enc, fn, arg in connection_candidates(batches * (calls // 4))
        ],
    }


def table(results: dict[str, list[tuple[str, str, float]]]) -> str:
    rows = ["| task | library | encoding | median µs |", "|---|---|---|---:|"]
    for task, entries in results.items():
        for lib, enc, us in sorted(entries, key=lambda e: (e[1], e[2])):
            rows.append(f"| {task} | {lib} | {enc} | {us:.2f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.protocol_speed", description=__doc__)
    parser.add_argument("--batches", type=int, default=201)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args(argv)
    versions = ", ".join(
        f"{name} {getattr(_optional(name), '__version__', '-') or '-'}"
        for name in ("msgspec", "msgpack", "ormsgpack", "orjson")
    )
    print(f"Python {platform.python_version()} on {platform.machine()}; {versions}")
    results = run(args.batches, args.calls)
    print(table(results))
    chosen = {
        (task, enc): us
        for task, entries in results.items()
        for lib, enc, us in entries
        if "chosen" in lib
    }
    ok = all(
        us <= DECODE_TARGET_US for (task, _), us in chosen.items() if task.startswith("decode")
    )
    ok &= all(
        us <= ENCODE_TARGET_US for (task, _), us in chosen.items() if task.startswith("encode")
    )
    verdict = "met" if ok else "MISSED"
    print(f"targets (decode <= {DECODE_TARGET_US} us, encode <= {ENCODE_TARGET_US} us): {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
