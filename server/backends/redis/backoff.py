"""The waits between tries while Redis is away: doubling from 50 ms to a ceiling.

Every loop that retries until Redis answers (a commit, an answer kept for an asker, a
finished game listed for history, the pub/sub readers) waits the same way: short at first,
so a blip costs a room little, and no longer than the ceiling, so a room comes back within
that long of Redis coming back. (redis-py's own `Retry` retries one command a few times;
these loops retry a whole step for as long as the step must wait.)
"""

from __future__ import annotations

FIRST = 0.05
"""Seconds before the first retry."""


class Backoff:
    """One retry loop's waits: `delay` seconds next, doubled after each up to `ceiling`.
    (It says how long; the loop sleeps: `await asyncio.sleep(backoff.next())`.)"""

    __slots__ = ("ceiling", "delay")

    def __init__(self, ceiling: float = 2.0) -> None:
        self.ceiling = ceiling
        self.delay = FIRST

    def next(self) -> float:
        """Seconds to wait before the next try."""
        delay = self.delay
        self.delay = min(self.ceiling, delay * 2)
        return delay

    def reset(self) -> None:
        """Redis answered: the next outage starts short again."""
        self.delay = FIRST
