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
import time
from multiprocessing.connection import Connection
from typing import Any

from dicehall.protocol.messages.results import PingResult

from .config import LoadConfig
from .context import Context
from .probes import ProcProbe
from .seat import Seat
from .stats import Interval
from .table import Table


class Worker:
    """One load-generating process: its tables, its event loop, its reports."""

    def __init__(self, index: int, cfg: LoadConfig, pipe: Connection) -> None:
        self.cfg = cfg
        self.pipe = pipe
        self.context = Context(index, cfg)
        self.loop = self.context.loop
        self.tables = [Table(self.context, n) for n in range(index, cfg.rooms, cfg.procs)]
        self.offset_info: dict[str, float] = {}
        self._commands: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()

    async def run(self) -> None:
        context = self.context
        self.loop.add_reader(self.pipe.fileno(), self._command)
        limit = asyncio.Semaphore(self.cfg.connect_concurrency)
        seats = [s for t in self.tables for s in t.seats]
        results = await asyncio.gather(
            *(self._connect(s, limit) for s in seats), return_exceptions=True
        )
        failed = [r for r in results if isinstance(r, BaseException)]
        for exc in failed:
            context.current.errors[f"connect:{type(exc).__name__}"] += 1
        live = [s for s, r in zip(seats, results, strict=True) if r is None]
        if live:
            await self._measure_offset(live[0])
        self.pipe.send(
            ("connected", len(seats) - len(failed), context.current.to_wire(), context.server_name)
        )
        command = await self._commands.get()
        if command[0] == "play":
            start = command[1]
            context.current = Interval(0)
            self._tick(start, 0)
            for table in self.tables:
                if all(s.ws is not None and not s.ws.closed for s in table.seats):
                    context.spawn(table.new_game())
            while (await self._commands.get())[0] != "stop":
                pass
        context.stopping = True
        for seat in seats:
            if seat.ws is not None:
                seat.ws.close(1000)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5.0):
                await context.all_closed.wait()
        for seat in seats:
            if seat.ws is not None and not seat.ws.closed:
                seat.ws.abort()
        await context.cancel_tasks()
        cpu = os.times()
        waited = ProcProbe([os.getpid()]).waited() or 0.0
        self.pipe.send(("interval", context.current.to_wire()))
        done = {"cpu_seconds": cpu.user + cpu.system, "wait_seconds": waited}
        self.pipe.send(("done", {**done, "offset": self.offset_info}))

    @staticmethod
    async def _connect(seat: Seat, limit: asyncio.Semaphore) -> None:
        async with limit:
            await seat.connect()

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
        context = self.context
        if context.stopping:
            return
        done, context.current = context.current, Interval(index + 1)
        self.pipe.send(("interval", done.to_wire()))
        self._tick(start, index + 1)

    async def _measure_offset(self, seat: Seat) -> None:
        """Server clock minus ours, from the fastest of a few pings; 0 when within error."""
        context = self.context
        if self.cfg.clock_offset_ms is not None:
            context.offset_us = self.cfg.clock_offset_ms * 1000
            self.offset_info = {"offset_ms": self.cfg.clock_offset_ms, "given": 1.0}
            return
        best: tuple[float, float] | None = None
        for _ in range(7):
            t0 = time.time_ns() / 1000
            reply = await seat.call("ping", {"time": int(t0 / 1000)})
            t1 = time.time_ns() / 1000
            if not reply.ok:
                continue
            ping = seat.codec.result(reply.result, PingResult)
            # The server's clock is whole milliseconds: its true time is 0..1 ms later.
            offset = ping.time * 1000 + 500 - (t0 + t1) / 2
            error = (t1 - t0) / 2 + 500
            if best is None or error < best[1]:
                best = (offset, error)
        if best is None:
            return
        offset, error = best
        context.offset_us = offset if abs(offset) > error else 0.0
        self.offset_info = {
            "measured_ms": round(offset / 1000, 3),
            "error_ms": round(error / 1000, 3),
            "offset_ms": round(context.offset_us / 1000, 3),
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
