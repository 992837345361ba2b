"""Where a host's rooms are kept besides this process: the one interface both deployments
implement (the memory store keeps nothing elsewhere; the Redis store writes fenced
commits, holds leases and takes rooms over: server/backends/redis/).

A store is told what happened to the rooms (created, committed, let go); the host decides
everything else, once for both (server/hosting/host.py).
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod

from ..rooms.room import RoomCore
from .actor import CommitBatch, Pending


class Release(enum.Enum):
    """Why a room stopped running here."""

    HANDED = "handed"
    """This process stops (a drain): the room is written and its lease let go, for
    another process to take it over."""
    CLOSED = "closed"
    """Closed for good (idle, or finished and deserted): everything of it goes but the
    finished game's record."""
    LOST = "lost"
    """Another process runs it now: nothing of it is written again from here."""


class RoomStore(ABC):
    journal = False
    """Batches carry the commands run since the last commit (server/hosting/journal.py): the store
    replays them when another process takes the room over."""
    durable = False
    """Rooms outlive this process: each commit is made durable here before it is shown
    (`commit`), and a finished room stays open until history has stored its game, since
    closing it deletes what another process would take it over from. A store that is not
    durable is never asked to commit."""

    @abstractmethod
    async def create(self, core: RoomCore) -> bool:
        """Keep a new room: False if its id is taken (the host picks another)."""

    behind = False
    """A durable store that writes commits after they are shown (`write_behind`): a
    failover may take a room back to its last written point (docs/protocol.md, "Epochs")."""

    def commit(self, batch: CommitBatch, ending: bool) -> Pending:
        """Make `batch` durable (a `durable` store): the coroutine to await before it is
        shown. `ending`: the batch commits the end of the game, the first time this
        process commits it."""
        raise NotImplementedError("a store that is not durable commits nothing")

    def write_behind(self, batch: CommitBatch, ending: bool) -> None:
        """Write `batch`, shown already, soon (a store that writes `behind`)."""
        raise NotImplementedError("this store writes nothing behind")

    def game_over(self, core: RoomCore) -> None:
        """A game ended in a room run here (once per process that runs it)."""
        return None

    async def owned(self, core: RoomCore) -> None:
        """The host runs `core`'s room now (created or taken over)."""
        return None

    async def released(self, core: RoomCore, why: Release, unwritten: bool) -> None:
        """The host stopped running the room (`unwritten`: answers it kept back were
        never committed)."""
        return None

    def busy(self, room: str) -> bool:
        """Someone elsewhere keeps the room open, whatever its core says."""
        return False
