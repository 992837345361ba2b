"""The history writer: a process of its own that moves finished games from the outbox into
the database (`python -m dicehall.server.history.writer --db URL --outbox DIR`, started and watched
by the server: service.py).

Why a process: a save is a transaction of several statements and a rating update, about
1.4 ms of CPU with PostgreSQL and 2 ms with SQLite (whose engine runs inside its client)
measured here, more than the 1 ms a finished game may cost the room's process; and a slow
or stuck database (or its driver) must never hold the loop that runs the rooms. The room's
process only writes the outbox file and a line to this process's standard input.

Protocol with the server: each line on stdin names a game just put in the outbox (a hint:
the folder is what counts, and it is swept every `--sweep` seconds anyway); end of input
means stop (after one last pass). Each line on stdout is a JSON report: `{"ready": true}`
once the database is open, `{"saved": id, "new": bool, "seconds": s}` per game stored,
`{"failed": message}` when the database cannot be reached (the games wait, and are tried
again with a growing pause), `{"rejected": id, "why": message}` for a game the database
refuses outright (kept aside as `<id>.bad`, so the others go on).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import TypedDict, Unpack

import msgspec
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError

from .outbox import SpoolOutbox
from .store import HistoryStore

SAVE_SECONDS = 60.0
"""A save that has not finished by then failed (a black-holed database): tried again later.
SQLite's; with PostgreSQL, `SAVE_COMMANDS` times the URL's command deadline (60 s unset)."""
SAVE_COMMANDS = 2.0
"""A PostgreSQL save's deadline in command deadlines (store.COMMAND_SECONDS, or the URL's
`command_timeout`): room for a pooled connection's check and a reconnection before its few
statements, each under its own deadline; an operator who shortens one shortens both."""
NICENESS = 10
"""Added to the writer's nice value: when the machine's cores are all busy, the rooms'
process (play) goes first and history waits; idle cores still save at once."""
BACKOFF = (0.2, 10.0)
"""The pause after a failed attempt (doubling from the first to the second)."""


class Report(TypedDict, total=False):
    """A line the writer says on stdout (above), as the server reads it."""

    ready: bool
    saved: str
    new: bool
    seconds: float
    failed: str
    rejected: str
    why: str


def report(**fields: Unpack[Report]) -> None:
    sys.stdout.write(msgspec.json.encode(fields).decode() + "\n")
    sys.stdout.flush()


def save_deadline(store: HistoryStore) -> float:
    """How long one save may take before it counts as failed (and is tried again later)."""
    command = store.command_seconds
    return SAVE_SECONDS if command is None else SAVE_COMMANDS * command


def _refused(exc: BaseException) -> bool:
    """The database refused this game's data (a constraint, a value it cannot hold): trying
    again cannot help, so the game is set aside. Anything else (the database gone, slow,
    restarting; even a bug) keeps the game waiting, to be tried again: never lost."""
    if isinstance(exc, IntegrityError | DataError):
        return True
    # (asyncpg's errors reach SQLAlchemy as a plain DBAPIError; their SQLSTATE tells: class
    # 22 is a data exception, 23 an integrity constraint violation.)
    code = getattr(exc.orig, "pgcode", None) if isinstance(exc, DBAPIError) else None
    return isinstance(code, str) and code[:2] in ("22", "23")


class Writer:
    def __init__(self, db: str, outbox: SpoolOutbox) -> None:
        self.db = db
        self.outbox = outbox
        self.store: HistoryStore | None = None
        self.pause = BACKOFF[0]

    async def open(self) -> bool:
        try:
            self.store = await HistoryStore.open(self.db)
        except Exception as exc:  # (any failure to open is one to report and retry)
            report(failed=f"cannot open the database: {_describe(exc)}")
            return False
        report(ready=True)
        return True

    async def drain(self) -> bool:
        """Store every game waiting; False when the database failed (the rest wait)."""
        if self.store is None and not await self.open():
            return False
        assert self.store is not None
        deadline = save_deadline(self.store)
        for game_id in self.outbox.pending():
            game = self.outbox.take(game_id)
            if game is None:
                continue
            started = time.perf_counter()
            try:
                new = await asyncio.wait_for(self.store.save(game), deadline)
            except TimeoutError:  # (the save's deadline, or one statement's: asyncpg's)
                waited = time.perf_counter() - started
                report(failed=f"no answer from the database: gave up after {waited:.1f} s")
                return False
            except Exception as exc:
                if not _refused(exc):
                    report(failed=_describe(exc))
                    return False
                self.outbox.reject(game_id)
                report(rejected=game_id, why=_describe(exc))
                continue
            self.outbox.done(game_id)
            report(saved=game_id, new=new, seconds=round(time.perf_counter() - started, 6))
        self.pause = BACKOFF[0]
        return True

    async def close(self) -> None:
        if self.store is not None:
            await self.store.close()


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


async def run(db: str, outbox: Path, sweep: float) -> None:
    writer = Writer(db, SpoolOutbox(outbox))
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    wake = asyncio.Event()
    finished = False

    async def listen() -> None:
        nonlocal finished
        while await stdin.readline():
            wake.set()
        finished = True
        wake.set()

    listener = loop.create_task(listen())
    try:
        while True:
            wake.clear()
            ok = await writer.drain()
            if finished:
                break
            wait = sweep if ok else writer.pause
            if not ok:
                writer.pause = min(writer.pause * 2, BACKOFF[1])
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), wait)
    finally:
        listener.cancel()
        await writer.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dicehall.server.history.writer")
    parser.add_argument("--db", required=True)
    parser.add_argument("--outbox", required=True, type=Path)
    parser.add_argument("--sweep", type=float, default=5.0)
    args = parser.parse_args(argv)
    os.nice(NICENESS)
    asyncio.run(run(args.db, args.outbox, args.sweep))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
