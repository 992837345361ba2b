"""Stopping background tasks whose cancellation a library may lose.

On Python 3.11, `asyncio.wait_for` can return the result of what it awaits when that
finishes in the same step as the cancel, and the cancel is lost (CPython gh-86296, fixed
in 3.12, where `wait_for` is built on `asyncio.timeout`). redis-py awaits every write
with it whenever a socket time-out is set, as it is by default: measured here, a task
looping on one `RedisCluster` command lost 44 of 60 cancellations (docs/benchmarks.md has
no place for it: tests/server/test_cancelling.py holds the check). A task stopped with one
`cancel()` may then go on for ever, and whoever awaits it hangs: CI hung 300 s in a
process's `stop()` that way.

So cancellation is level-triggered here, as in Trio and AnyIO: a task is cancelled again
until it ends, at every turn of the event loop at first (the window in which `wait_for`
loses a cancel is a turn or two wide: measured, a cancel repeated every 50 ms could land
in it 60 times in a row on a loaded machine), then every `AGAIN` seconds; and given up
(logged) after a deadline rather than waited for for ever.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

log = logging.getLogger("dicehall.server")

BUSY_TURNS = 100
"""Turns of the loop in which a task that has not ended is cancelled again at once."""

AGAIN = 0.01
"""Seconds between two cancels after those turns (a task that takes long to end)."""

STOP_SECONDS = 10.0
"""How long `cancel_and_wait` waits in all before giving up on the tasks left."""


async def cancel_and_wait(
    tasks: Iterable[asyncio.Task[object]], timeout: float = STOP_SECONDS
) -> None:
    """Cancel `tasks` until each has ended, for at most `timeout` seconds. An exception a
    task ended with (other than its cancellation) is logged, not raised: a stop goes on
    (a lost connection to Redis, say, is no reason to leave the rest running)."""
    tasks = list(tasks)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    pending = {task for task in tasks if not task.done()}
    turns = 0
    while pending:
        for task in pending:
            task.cancel()
        await asyncio.sleep(0 if turns < BUSY_TURNS else AGAIN)
        turns += 1
        pending = {task for task in pending if not task.done()}
        if pending and loop.time() >= deadline:
            for task in pending:
                log.error("task %s did not end %.0f s after it was cancelled", task, timeout)
            break
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            log.warning("task %s ended with %r", task, task.exception())
