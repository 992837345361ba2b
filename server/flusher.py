"""`Flusher`: the sockets that had frames queued during one turn of the event loop get
them written one turn later, all from one callback.

Why one turn later: a room's commit queues its messages for every member in the turn of
the request that caused it, and that request's reply is queued when its task resumes, in
the next turn; written after that, the reply and the messages leave in one write
(server/peer.py). Why one callback for all: a commit touches every member of its room, and
two `call_soon` handles per member and commit were a measurable share of the fan-out's
CPU (docs/benchmarks/journal.md, "Faster than the frameworks...").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class Flusher:
    """Runs each `due` callback once, two turns of the loop after the first `due` of its
    turn (the turn it was asked in, then the one its reply comes in)."""

    __slots__ = ("_due", "_loop", "turns")

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        """The loop of the first `due` (the process's; its server may be built before)."""
        self._due: list[Callable[[], None]] = []
        self.turns = 0
        """The turns that had a flush due so far: what was made for one turn's writes (the
        sockets' `WireCache`, server/outbox.py) is stale once this has moved on."""

    def due(self, flush: Callable[[], None]) -> None:
        """`flush` runs after the next turn (the caller asks once per turn at most)."""
        self._due.append(flush)
        if len(self._due) == 1:
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
            loop.call_soon(self._next_turn, loop)

    def _next_turn(self, loop: asyncio.AbstractEventLoop) -> None:
        self.turns += 1
        batch, self._due = self._due, []
        loop.call_soon(self._run, batch, loop)

    def _run(self, batch: list[Callable[[], None]], loop: asyncio.AbstractEventLoop) -> None:
        for flush in batch:
            try:
                flush()
            except Exception as exc:  # one socket's failure is not the others'
                loop.call_exception_handler(
                    {"message": "flushing a socket failed", "exception": exc}
                )
