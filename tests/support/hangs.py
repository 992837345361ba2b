"""What an event loop was waiting on when a test hung: every task's stack, printed before
pytest-timeout fails the test.

pytest-timeout shows the main thread's frames, and a hung asyncio test is always in the
selector (the loop is fine; some task waits forever), which says nothing. A timer thread
signals the main thread a while before the timeout; the handler runs between two bytecodes
of the running loop and prints each task (its coroutine's line, what it waits for) and its
stack to stderr, which pytest shows with the failure.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from types import FrameType

SIGNAL = signal.SIGUSR1
EARLY = 30.0
"""Seconds before the test's timeout that the stacks are printed."""


def install() -> None:
    """Print the running loop's tasks on `SIGNAL` (once per process, at configure time)."""
    signal.signal(SIGNAL, _print_tasks)


def _print_tasks(signum: int, frame: FrameType | None) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        print("hung outside an event loop (see pytest-timeout's stacks)", file=sys.stderr)
        return
    tasks = asyncio.all_tasks()
    print(f"--- {len(tasks)} asyncio tasks of the hung test ---", file=sys.stderr)
    for task in tasks:  # (the header names the task's line and the future it waits for)
        task.print_stack(file=sys.stderr)


def watch(timeout: float) -> threading.Timer:
    """A started timer that signals the main thread `EARLY` seconds before `timeout`."""
    main = threading.main_thread().ident
    assert main is not None
    timer = threading.Timer(max(1.0, timeout - EARLY), signal.pthread_kill, (main, SIGNAL))
    timer.daemon = True
    timer.start()
    return timer
