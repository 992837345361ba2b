"""Pacing a client's frames under the server's token bucket, so that a busy bot waits
instead of being refused with `rate-limited`."""

from __future__ import annotations

import asyncio
import time


class Pacer:
    """Keeps the client under the server's token bucket (`rate` per second, `burst`).

    The server measures arrivals, the client departures; arrivals can bunch up after a
    network hiccup, so the client keeps a margin of the burst in reserve.
    """

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = float(rate)
        self.capacity = float(max(1, burst - max(2, burst // 8)))
        self.tokens = self.capacity
        self._last = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self._last) * self.rate)
        self._last = now

    async def take(self) -> None:
        """Wait until one frame may be sent, and count it."""
        while True:
            self._refill()
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return
            await asyncio.sleep((1.0 - self.tokens) / self.rate)

    def refused(self) -> None:
        """The server said `rate-limited` anyway: its bucket is empty, so is ours now."""
        self._refill()
        self.tokens = min(self.tokens, -1.0)
