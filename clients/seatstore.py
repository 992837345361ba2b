"""Seat tokens kept between runs of `dicehall play`, per server and room.

A seat token is what takes a seat back (docs/protocol.md, "Seat tokens"); without it a
player who quit and runs `dicehall play --room ID` again could only ask for a new seat, and
a started game has none. The tokens live in the user's state directory
(`$XDG_STATE_HOME/dicehall/seats.json`, by default `~/.local/state/dicehall/`), readable by
the user only: whoever holds a token plays that seat.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

KEEP = 200
"""Tokens kept at most (the oldest go first): rooms end, their tokens with them."""


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "dicehall"


def read_private(path: Path) -> dict[str, str]:
    """A JSON map of strings written by `write_private`; an unreadable file counts as
    empty (the state directory is a convenience, never a reason to fail)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def write_private(path: Path, data: dict[str, str]) -> None:
    """Replace `path` with `data`, readable by the user only (it holds secrets), whole or
    not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out)
    os.replace(partial, path)


class SeatStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / "seats.json"

    def _read(self) -> dict[str, str]:
        """Key "server room" -> token."""
        return read_private(self.path)

    def _write(self, tokens: dict[str, str]) -> None:
        write_private(self.path, tokens)

    def get(self, server: str, room: str) -> str | None:
        return self._read().get(f"{server} {room}")

    def put(self, server: str, room: str, token: str) -> None:
        tokens = self._read()
        tokens.pop(f"{server} {room}", None)  # (to the end: the newest)
        tokens[f"{server} {room}"] = token
        while len(tokens) > KEEP:
            del tokens[next(iter(tokens))]
        with contextlib.suppress(OSError):  # a read-only home costs the next run its seat
            self._write(tokens)

    def forget(self, server: str, room: str) -> None:
        tokens = self._read()
        if tokens.pop(f"{server} {room}", None) is not None:
            with contextlib.suppress(OSError):
                self._write(tokens)
