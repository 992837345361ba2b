"""The flusher writes what a turn queued one turn later, for every socket at once, and one
socket's failure does not keep the others from being written."""

from __future__ import annotations

import asyncio
from typing import Any

from dicehall.server.connections.outbox import Flusher


async def turns(n: int) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def test_what_a_turn_queued_is_written_after_the_next_turn_in_order() -> None:
    flusher = Flusher()
    done: list[str] = []
    flusher.due(lambda: done.append("a"))
    flusher.due(lambda: done.append("b"))
    await turns(1)
    assert done == [], "the next turn is the reply's: not yet"
    flusher.due(lambda: done.append("c"))  # asked in the next turn: its own two turns
    await turns(1)
    assert done == ["a", "b"]
    await turns(1)
    assert done == ["a", "b", "c"]


async def test_one_failing_flush_is_reported_and_the_others_still_run() -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        flusher = Flusher()
        done: list[str] = []

        def broken() -> None:
            raise RuntimeError("socket gone wrong")

        flusher.due(broken)
        flusher.due(lambda: done.append("after"))
        await turns(3)
        assert done == ["after"]
        assert [type(c["exception"]) for c in reported] == [RuntimeError]
    finally:
        loop.set_exception_handler(None)
