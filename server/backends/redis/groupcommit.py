"""Group commit: the commits of all the rooms this process runs that fall due in one tick
go to Redis together, as one script call.

A commit sent alone costs its process a command to pack, a write, a reply to read and a
future to wake, and Redis a script call of its own; sent together, those are paid once per
tick, so the cost of a commit falls as load rises instead of staying flat. The tick is one
turn of the event loop: waiting 2 or 5 ms for more rooms saved nothing measurable at 300
rooms (docs/benchmarks.md, "Scale-out that pays").

In a cluster a script names the keys of one slot only, so each room is its own call there
(sent together all the same).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from .link import Link
from .scripts import Call, CommitArgs, Committed, commit, commit_args

MAX_ROOMS = 64
"""Rooms per script call: Redis runs a script to its end before anything else, so a call is
kept short (about a millisecond of Redis's time)."""


class GroupCommit:
    def __init__(self, link: Callable[[], Link]) -> None:
        self._link = link
        self._due: list[tuple[Call, asyncio.Future[Committed]]] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self.calls = 0
        """Script calls made (commits made: `commits`)."""
        self.commits = 0

    def submit(self, room: str, args: CommitArgs) -> asyncio.Future[Committed]:
        """Commit one room with the others due: its status once Redis has run it; the
        connection's error if the call failed (nothing known of it: send it again)."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Committed] = loop.create_future()
        if not self._due:
            loop.call_soon(self._flush)
        self._due.append((commit_args(room, args), fut))
        return fut

    def _flush(self) -> None:
        due, self._due = self._due, []
        size = MAX_ROOMS if self._link().multi_room else 1
        loop = asyncio.get_running_loop()
        for start in range(0, len(due), size):
            task = loop.create_task(self._send(due[start : start + size]))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _send(self, group: list[tuple[Call, asyncio.Future[Committed]]]) -> None:
        self.calls += 1
        self.commits += len(group)
        try:
            statuses = await commit(self._link(), [call for call, _ in group])
        except Exception as exc:
            for _, fut in group:
                if not fut.done():
                    fut.set_exception(exc)
            return
        except asyncio.CancelledError:
            for _, fut in group:
                fut.cancel()
            raise
        for (_, fut), status in zip(group, statuses, strict=True):
            if not fut.done():  # (its room may have stopped waiting for it)
                fut.set_result(status)
