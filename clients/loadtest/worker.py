"""A worker process: its tables' sockets, its event loop, its reports to the coordinator.

The coordinator starts P of these (`worker_main`, in a `spawn`ed process: it is looked up
by its module and name, so it stays a top-level function here). Each owns every P-th
table, opens one socket per seat (at most `connect_concurrency` at once), says `hello`
with the `timestamps` feature, measures the clock offset to the server with `ping`, and
reports `connected`. On `play` its tables start their games, and each second it sends the
`Interval` it filled; on `stop` (or when the coordinator's end of the pipe is gone) it
closes its sockets and sends its last interval and its own CPU time (`done`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import time
from multiprocessing.connection import Connection
from typing import Any

from .client import Codec, HelloResult, PingResult, open_socket
from .config import LoadConfig, LoadTestError
from .probes import ProcProbe
from .stats import Interval
from .table import Seat, Table

PROGRAM = "dicehall-loadtest/0.1"

LEAN_LEGAL = "legal_without_view"
"""The feature that lets a bot that needs no view ask `legal` for the actions alone."""
GIVEN_LEGAL = "legal_in_window"
"""The feature that brings a seat its legal actions with each window and `act` reply."""

ONE_ANSWER_GAMES = frozenset({"qwixx", "qwinto", "qwirkle"})
"""Games where a seat answers a turn window once; in the others (Yamb) a seat keeps asking
`legal` after each action until its part of the window is done."""


class Worker:
    """One load-generating process: its tables, its event loop, its reports."""

    def __init__(self, index: int, cfg: LoadConfig, pipe: Connection) -> None:
        self.index = index
        self.cfg = cfg
        self.pipe = pipe
        self.codec = Codec(cfg.encoding)
        self.rng = random.Random(f"{cfg.seed}/{index}")
        self.loop = asyncio.get_running_loop()
        self.multi_step = cfg.game not in ONE_ANSWER_GAMES
        self.tables = [Table(self, n) for n in range(index, cfg.rooms, cfg.procs)]
        self.current = Interval(-1)
        self.offset_us = 0.0
        self.offset_info: dict[str, float] = {}
        self.server_name = ""
        self.stopping = False
        self._open = 0
        self._all_closed = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._commands: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()

    def spawn(self, coro: Any) -> None:
        task = self.loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None and not self.stopping:
            self.current.errors[f"table:{type(exc).__name__}"] += 1

    def closed_one(self) -> None:
        self._open -= 1
        if self._open <= 0:
            self._all_closed.set()

    async def run(self) -> None:
        self.loop.add_reader(self.pipe.fileno(), self._command)
        limit = asyncio.Semaphore(self.cfg.connect_concurrency)
        seats = [s for t in self.tables for s in t.seats]
        results = await asyncio.gather(
            *(self._connect(s, limit) for s in seats), return_exceptions=True
        )
        failed = [r for r in results if isinstance(r, BaseException)]
        for exc in failed:
            self.current.errors[f"connect:{type(exc).__name__}"] += 1
        live = [s for s, r in zip(seats, results, strict=True) if r is None]
        if live:
            await self._measure_offset(live[0])
        self.pipe.send(
            ("connected", len(seats) - len(failed), self.current.to_wire(), self.server_name)
        )
        command = await self._commands.get()
        if command[0] == "play":
            start = command[1]
            self.current = Interval(0)
            self._tick(start, 0)
            for table in self.tables:
                if all(s.ws is not None and not s.ws.closed for s in table.seats):
                    self.spawn(table.new_game())
            while (await self._commands.get())[0] != "stop":
                pass
        self.stopping = True
        for seat in seats:
            if seat.ws is not None:
                seat.ws.close(1000)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5.0):
                await self._all_closed.wait()
        for seat in seats:
            if seat.ws is not None and not seat.ws.closed:
                seat.ws.abort()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        cpu = os.times()
        waited = ProcProbe([os.getpid()]).waited() or 0.0
        self.pipe.send(("interval", self.current.to_wire()))
        done = {"cpu_seconds": cpu.user + cpu.system, "wait_seconds": waited}
        self.pipe.send(("done", {**done, "offset": self.offset_info}))

    def _command(self) -> None:
        try:
            self._commands.put_nowait(self.pipe.recv())
        except EOFError:
            self.loop.remove_reader(self.pipe.fileno())
            self._commands.put_nowait(("stop",))

    def _tick(self, start: float, index: int) -> None:
        """Close interval `index` at start + (index + 1) * interval, wall clock."""
        due = start + (index + 1) * self.cfg.interval
        self.loop.call_later(max(0.0, due - time.time()), self._close_interval, start, index)

    def _close_interval(self, start: float, index: int) -> None:
        if self.stopping:
            return
        done, self.current = self.current, Interval(index + 1)
        self.pipe.send(("interval", done.to_wire()))
        self._tick(start, index + 1)

    async def move(self, seat: Seat, url: str) -> None:
        """Reconnect `seat` to `url` (where its next room is run); where that cannot be
        reached, back to where it was (the server forwards)."""
        old, seat.url = seat.url, url
        if seat.ws is not None:
            seat.moving = True
            seat.ws.close()
            await seat.closed.wait()
            seat.moving = False
        seat.welcome = self.loop.create_future()
        try:
            await self._connect(seat, asyncio.Semaphore(1))
        except (OSError, TimeoutError, LoadTestError) as exc:
            self.current.errors[f"move:{type(exc).__name__}"] += 1
            seat.url = old
            seat.welcome = self.loop.create_future()
            await self._connect(seat, asyncio.Semaphore(1))
            return
        seat.moves += 1
        self.current.moves += 1

    async def _connect(self, seat: Seat, limit: asyncio.Semaphore) -> None:
        async with limit:
            seat.closed.clear()
            seat.ws = await open_socket(seat.url, self.codec.subprotocol, seat)
            self._open += 1
            self._all_closed.clear()
            async with asyncio.timeout(10.0):
                welcome = await seat.welcome
            self.server_name = welcome.server or "?"
            if "timestamps" not in (welcome.features or []):
                self.current.errors["no-timestamps-feature"] += 1
            features = ["timestamps"]
            if self.cfg.policy in ("window", "legal"):
                features.append(LEAN_LEGAL)
            if self.cfg.policy == "window":
                features.append(GIVEN_LEGAL)
            reply = await seat.call(
                "hello",
                {
                    "client": PROGRAM,
                    "name": f"bot{seat.table.number}.{seat.index}",
                    "features": features,
                },
            )
            if not reply.ok:
                raise LoadTestError("hello refused")
            hello = self.codec.result(reply.result, HelloResult)
            assert isinstance(hello, HelloResult)
            seat.lean = LEAN_LEGAL in hello.features
            seat.given = GIVEN_LEGAL in hello.features

    async def _measure_offset(self, seat: Seat) -> None:
        """Server clock minus ours, from the fastest of a few pings; 0 when within error."""
        if self.cfg.clock_offset_ms is not None:
            self.offset_us = self.cfg.clock_offset_ms * 1000
            self.offset_info = {"offset_ms": self.cfg.clock_offset_ms, "given": 1.0}
            return
        best: tuple[float, float] | None = None
        for _ in range(7):
            t0 = time.time_ns() / 1000
            reply = await seat.call("ping", {"time": int(t0 / 1000)})
            t1 = time.time_ns() / 1000
            if not reply.ok:
                continue
            ping = self.codec.result(reply.result, PingResult)
            assert isinstance(ping, PingResult)
            # The server's clock is whole milliseconds: its true time is 0..1 ms later.
            offset = ping.time * 1000 + 500 - (t0 + t1) / 2
            error = (t1 - t0) / 2 + 500
            if best is None or error < best[1]:
                best = (offset, error)
        if best is None:
            return
        offset, error = best
        self.offset_us = offset if abs(offset) > error else 0.0
        self.offset_info = {
            "measured_ms": round(offset / 1000, 3),
            "error_ms": round(error / 1000, 3),
            "offset_ms": round(self.offset_us / 1000, 3),
        }


def worker_main(index: int, cfg: LoadConfig, pipe: Connection) -> None:
    """Entry point of a worker process: as many sockets as the hard limit allows."""
    import resource

    import uvloop

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    async def main() -> None:
        await Worker(index, cfg, pipe).run()

    uvloop.run(main())
