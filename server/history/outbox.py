"""Finished games waiting for the database: one file each in a folder on local disk.

Why a folder: the room's process must not wait for the database (play never waits for
history), yet a game that ended must not be lost if the process dies before the database
has it. Writing one small file when the game ends costs tens of microseconds and survives
a killed process (the kernel has the bytes once `write` returns); the writer (writer.py)
stores each file's game, then deletes the file. A file is written under a temporary name
and renamed, so a reader never sees half of one. Saving is idempotent (the store keys a
game by its room's id), so a file read twice (a crash after the save, before the delete;
two writers on one folder) is stored once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from pathlib import Path

import msgspec

from .paths import FILE_MODE, private_folder, tighten
from .store import FinishedGame

log = logging.getLogger("dicehall.history")

_SAFE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(FinishedGame)


class SpoolOutbox:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        private_folder(folder, own=True)  # (for its owner only: paths.py says why)
        for path in folder.iterdir():
            tighten(path)

    def _path(self, game_id: str) -> Path:
        if not _SAFE.match(game_id):  # (room ids are URL-safe: this is a guard, not a path)
            raise ValueError(f"not a room id: {game_id!r}")
        return self.folder / f"{game_id}.json"

    def put(self, game: FinishedGame) -> None:
        """Keep `game` until `done`; durable once this returns (see the module's docstring)."""
        path = self._path(game.id)
        temporary = path.with_name(f".{game.id}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "wb") as file:
            file.write(_ENCODER.encode(game))
        os.replace(temporary, path)

    def pending(self) -> list[str]:
        """The ids waiting, oldest first. A file a writer deletes between the listing and
        its `stat` is not waiting any more (/metrics, which counts them, answered 500 when
        that happened under load)."""
        files: list[tuple[int, str]] = []
        for path in self.folder.glob("*.json"):
            try:
                files.append((path.stat().st_mtime_ns, path.stem))
            except FileNotFoundError:
                continue
        return [game_id for _, game_id in sorted(files)]

    def take(self, game_id: str) -> FinishedGame | None:
        """The game waiting under `game_id`; None when it is gone (another writer stored it)
        or unreadable (moved aside to `<id>.bad`, logged: a person should look at it)."""
        path = self._path(game_id)
        try:
            return _DECODER.decode(path.read_bytes())
        except FileNotFoundError:
            return None
        except msgspec.DecodeError as exc:
            log.error("history: %s is unreadable (%s); moved to %s.bad", path, exc, path.stem)
            os.replace(path, path.with_suffix(".bad"))
            return None

    def done(self, game_id: str) -> None:
        self._path(game_id).unlink(missing_ok=True)

    def reject(self, game_id: str) -> None:
        """Set a game the database refused aside (`<id>.bad`), for a person to look at."""
        path = self._path(game_id)
        with contextlib.suppress(FileNotFoundError):
            os.replace(path, path.with_suffix(".bad"))
