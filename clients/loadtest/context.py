"""What one worker process's tables and seats share with it.

A worker (worker.py) makes one `Context` and hands it to its tables and their seats: the
run's config, the codec, the random source, the `Interval` being counted (the worker
swaps in the next one each second), the server's clock offset, the tasks the tables
spawn and the count of sockets still open. Seats and tables read it and count into it;
the worker drives it. So the modules import one way only: context, then seat, table,
worker.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Coroutine
from typing import Any

from .config import LoadConfig
from .messages import Codec
from .stats import Interval


class Context:
    """One worker process's shared state: its config, codec, random source and counts."""

    def __init__(self, index: int, cfg: LoadConfig) -> None:
        self.cfg = cfg
        self.codec = Codec(cfg.encoding)
        self.rng = random.Random(f"{cfg.seed}/{index}")
        self.loop = asyncio.get_running_loop()
        self.current = Interval(-1)
        """The interval being counted into (the worker swaps it each second)."""
        self.offset_us = 0.0
        """The server's clock minus ours, as the worker measured it."""
        self.server_name = ""
        self.stopping = False
        """The run is ending: closes are not disconnects, games are not started again."""
        self.all_closed = asyncio.Event()
        self._open = 0
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run `coro` as a task of the worker's, its exception counted as an error."""
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

    async def cancel_tasks(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def opened_one(self) -> None:
        self._open += 1
        self.all_closed.clear()

    def closed_one(self) -> None:
        self._open -= 1
        if self._open <= 0:
            self.all_closed.set()
