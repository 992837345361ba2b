"""Waiting for a condition that nothing announces (another process's state, a timer's
work): poll it, with a deadline, instead of sleeping for a guessed time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

POLL = 0.02
"""Seconds between two looks: short against any deadline a test waits for."""


async def eventually(
    check: Callable[[], Awaitable[bool] | bool], what: str = "it", timeout: float = 10.0
) -> None:
    """Return once `check()` (or the awaitable it returns) is true; fail after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if isinstance(result, Awaitable):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} never happened (waited {timeout:.0f} s)")
        await asyncio.sleep(POLL)
