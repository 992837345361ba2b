"""What a room's actor runs and commits: a command run (`Ran`), and the batch its commit
carries to the room's host and store."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from ..commands import Command
from ..journal import Entry
from ..outgoing import Outgoing
from ..room import RoomCore


class Reply:
    """The encoded answer to a command another process forwarded (`asker`, its request
    id `rid`): a store that shares rooms between processes sends it with the commit the
    command made, in the same round trip; a store alone in its deployment never sees one."""

    __slots__ = ("asker", "data", "rid")

    def __init__(self, asker: str, rid: int, data: bytes) -> None:
        self.asker = asker
        self.rid = rid
        self.data = data


Rider = Callable[[Any], Reply]
"""Turns a forwarded command's result into the `Reply` its commit carries."""


class CommitBatch:
    """A room's messages made by one command, with what else its store may need: the
    commands run since the last commit (`ran`, kept only when the store asks for them:
    server/journal.py) and a forwarded command's `reply`."""

    __slots__ = ("core", "out", "ran", "reply")

    def __init__(
        self, core: RoomCore, out: list[Outgoing], ran: list[Entry], reply: Reply | None
    ) -> None:
        self.core = core
        self.out = out
        self.ran = ran
        self.reply = reply


Pending = Coroutine[Any, Any, None]
Commit = Callable[[CommitBatch], Pending | None]
"""Commits a batch: None when that is done already (nothing to wait for: the store keeps
nothing elsewhere), else the coroutine the room's task awaits before its next command."""


class Ran:
    """A command the room ran, with what it made, and its commit if that must be awaited
    before the command is answered."""

    __slots__ = ("cmd", "now", "out", "pending", "result")

    def __init__(self, cmd: Command[Any], now: float, result: Any, out: list[Outgoing]) -> None:
        self.cmd = cmd
        self.now = now
        self.result = result
        self.out = out
        self.pending: Pending | None = None


Queued = tuple[Command[Any] | Ran, asyncio.Future[Any] | None, Rider | None]
"""An inbox item: a command to run (or one run already, to commit), the future of its
caller if one waits, and its rider."""
