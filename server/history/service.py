"""History in the server process: the outbox a finished game goes into, the writer process
that stores it (writer.py), started, watched and restarted here, and a store for reads
(the HTTP API, the player-key secret), and the replays the API computes (replays.py).

Nothing here waits for the database on a room's loop: `finished()` writes one file and one
line to a pipe. A database that is slow or down shows in `status()` (/readyz's text) and
in /metrics, and delays history only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ..cancelling import cancel_and_wait
from .finished import finished_game
from .outbox import SpoolOutbox
from .replays import Replays
from .store import HistoryStore
from .writer import Report

if TYPE_CHECKING:
    from dicehall.server.rooms.room import RoomCore

log = logging.getLogger("dicehall.history")

_REPORTS = msgspec.json.Decoder(Report)
"""The writer's reports, a line each (a line that is none is logged as it is)."""

RESTART = (0.5, 30.0)
"""The pause before starting a writer that exited on its own (doubling up to the second)."""
STOP_SECONDS = 10.0
"""How long a stopping server lets its writer finish the games still waiting."""


class HistoryService(Collector):
    def __init__(self, db: str, outbox: Path, sweep: float = 5.0) -> None:
        self.db = db
        self.outbox = SpoolOutbox(outbox)
        self.sweep = sweep
        self.reader: HistoryStore | None = None
        """The store for reads; None until the database could be opened."""
        self.replays = Replays()
        self.saved = 0
        self.failures = 0
        self.last_error: str | None = None
        self.writer_up = False
        self._proc: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False
        self._opened = asyncio.Event()
        self.on_stored: Callable[[str], None] | None = None
        """Called with a game's id once history is done with it (the backend notes it): a
        writer stored it, or the database refused it for good (set aside, never tried
        again: handing it over again could not help)."""

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self._supervise(), name="dicehall-history-writer"))
        self._tasks.append(loop.create_task(self._open_reader(), name="dicehall-history-reader"))

    async def stop(self) -> None:
        self._stopping = True
        proc = self._proc
        if proc is not None and proc.returncode is None:
            assert proc.stdin is not None
            proc.stdin.close()  # (end of input: one last pass, then the writer exits)
            try:
                await asyncio.wait_for(proc.wait(), STOP_SECONDS)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        await cancel_and_wait(self._tasks)
        await self.replays.close()
        if self.reader is not None:
            await self.reader.close()

    async def _open_reader(self) -> None:
        pause = RESTART[0]
        while True:
            try:
                self.reader = await HistoryStore.open(self.db)
            except Exception as exc:  # (a database down at start delays history only)
                self.last_error = f"cannot open the database: {type(exc).__name__}: {exc}"[:300]
                await asyncio.sleep(pause)
                pause = min(pause * 2, RESTART[1])
                continue
            self._opened.set()
            return

    async def opened(self, timeout: float | None) -> HistoryStore | None:
        """The read store once the database is open (None if not within `timeout`; no
        timeout: whenever it opens)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._opened.wait(), timeout)
        return self.reader

    async def _supervise(self) -> None:
        pause = RESTART[0]
        while not self._stopped():
            started = time.monotonic()
            self._proc = await asyncio.create_subprocess_exec(
                sys.executable,
                *("-m", "dicehall.server.history.writer", "--db", self.db),
                *("--outbox", str(self.outbox.folder), "--sweep", str(self.sweep)),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                # (a session of its own: a Ctrl-C or a signal to the server's process group
                # must not end the writer before the server has closed its input, which
                # is how it stops, after one last pass)
                start_new_session=True,
            )
            await self._read_reports(self._proc)
            code = await self._proc.wait()
            self.writer_up = False
            if self._stopped():
                return
            log.error("history writer exited (status %s); starting another", code)
            pause = RESTART[0] if time.monotonic() - started > 60 else min(pause * 2, RESTART[1])
            await asyncio.sleep(pause)

    def _stopped(self) -> bool:
        """(A method, so that a type checker reads the flag anew after an await.)"""
        return self._stopping

    async def _read_reports(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            try:
                report = _REPORTS.decode(line)
            except msgspec.DecodeError:
                log.warning("history writer said: %r", line[:200])
                continue
            self._note(report)

    def _note(self, report: Report) -> None:
        if report.get("ready"):
            self.writer_up = True
            self.last_error = None
        elif "saved" in report:
            self.saved += 1
            self.last_error = None
            if self.on_stored is not None:
                self.on_stored(str(report["saved"]))
        elif "failed" in report:
            self.writer_up = False
            self.failures += 1
            self.last_error = str(report["failed"])
            log.warning("history: %s", self.last_error)
        elif "rejected" in report:
            self.failures += 1
            log.error("history: game %s refused: %s", report["rejected"], report.get("why"))
            if self.on_stored is not None:
                self.on_stored(str(report["rejected"]))

    # --- on a room's loop ------------------------------------------------------------------

    def finished(self, core: RoomCore) -> None:
        """A room's game ended: into the outbox (durable), and a word to the writer."""
        game = finished_game(core, int(time.time() * 1000))
        self.outbox.put(game)
        proc = self._proc
        if proc is not None and proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.write(game.id.encode() + b"\n")  # (buffered: never waits)

    # --- what operators see ----------------------------------------------------------------

    def waiting(self) -> int:
        return len(self.outbox.pending())

    def status(self) -> str:
        """One line for /readyz: how history is doing (play goes on either way)."""
        waiting = self.waiting()
        if self.last_error is None and waiting == 0:
            return "history: up to date"
        text = f"history: {waiting} finished game(s) waiting for the database"
        return text + (f" ({self.last_error})" if self.last_error else "")

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "dicehall_history_waiting",
            "Finished games in the outbox, not yet in the database.",
            value=self.waiting(),
        )
        yield GaugeMetricFamily(
            "dicehall_history_writer_up",
            "1 while the history writer has the database open.",
            value=int(self.writer_up),
        )
        yield CounterMetricFamily(
            "dicehall_history_saved_total", "Finished games stored.", value=self.saved
        )
        yield CounterMetricFamily(
            "dicehall_history_failures_total",
            "Failed attempts to store (the games wait and are tried again) and games refused.",
            value=self.failures,
        )
        replays = CounterMetricFamily(
            "dicehall_history_replays_total",
            "Replay steps asked of the HTTP API, by answer: computed (by the replay worker"
            " process), kept (answered from those kept), busy (refused with a 503).",
            labels=["answer"],
        )
        for answer in ("computed", "kept", "busy"):
            replays.add_metric([answer], self.replays.answers[answer])
        yield replays
        yield GaugeMetricFamily(
            "dicehall_history_replays_running",
            "Replay steps being computed or waiting for the replay worker process.",
            value=self.replays.running,
        )
