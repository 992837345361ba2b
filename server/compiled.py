"""The modules a compiled build turns into C (mypyc), and which of them this process runs.

`DICEHALL_COMPILE=1 pip install .` (or `make test-compiled`, in a copy of the tree)
compiles these with mypyc: the sans-I/O layers a delivery goes through (the games'
engines, the room, its actor, log and messages, what it commits, the command dispatch,
the fan-out, the hub, each connection's room stream, peer and outbox, the flusher, the
protocol's connection, codec, rate limiter and WebSocket frames, the latency histogram).
Their coroutines live beside them (the outboxes' writer tasks in writer.py, the room's
task in room_task.py, the session in session.py).
Compiled code turns a `bool` given for an `int` into an `int` before the code can see it,
so what checks values from outside takes them as `object` (`State.apply_action`'s seat,
`Game.new_state`'s seats) and checks them before they are stored. No coroutine is among them: a
compiled coroutine that is cancelled can crash the interpreter (python/mypy#12867), and
the server cancels on purpose (drains, time-outs). Every build also ships the pure
modules, so whatever is not compiled, or cannot load, runs as Python. docs/operations.md,
"A compiled build", says how to build and check one; `setup.py` reads `MODULES` from this
file (which imports nothing of the project for that reason).
"""

from __future__ import annotations

import importlib
from pathlib import Path

GAME_MARK = "# mypyc: compiled (a hot module: server/compiled.py)"
"""The line by which a game's module (rules/NAME/*.py) asks to be compiled: a game's hot
modules are found, not named here, so that a new game touches nothing outside its folder."""


def _game_modules() -> tuple[str, ...]:
    rules = Path(__file__).resolve().parents[1] / "rules"
    return tuple(
        f"dicehall.rules.{path.parent.name}.{path.stem}"
        for path in sorted(rules.glob("*/*.py"))
        if path.parent.name != "bots" and GAME_MARK in path.read_text(encoding="utf-8").splitlines()
    )


MODULES = (
    "dicehall.protocol.codec",
    "dicehall.protocol.server_connection",
    "dicehall.protocol.wsframes",
    "dicehall.rules.base",
    "dicehall.rules.fair",
    *_game_modules(),
    "dicehall.server.connections.hub",
    "dicehall.server.connections.outbox",
    "dicehall.server.connections.peer",
    "dicehall.server.hosting.actor",
    "dicehall.server.metrics",
    "dicehall.server.rooms.gamerecord",
    "dicehall.server.rooms.outgoing",
    "dicehall.server.rooms.presence",
    "dicehall.server.rooms.room",
    "dicehall.server.rooms.roomstate",
    "dicehall.server.rooms.roomview",
    "dicehall.server.rooms.seating",
)


def compiled_modules() -> list[str]:
    """Those of `MODULES` that this process imported from an extension module."""
    return [name for name in MODULES if not _is_source(importlib.import_module(name).__file__)]


def _is_source(path: str | None) -> bool:
    return path is not None and path.endswith(".py")
