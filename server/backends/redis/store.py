"""The durable side of the rooms a process owns: each commit, and the lobby entries.

A commit is one fenced script (scripts.py): the room's new messages appended to its log,
what its record gained appended to the record's log, the snapshot written (or, between
snapshots, the commands that made the messages appended to the room's journal:
server/hosting/journal.py), the lease held, and only then the messages published and the
forwarded command's reply kept and published. What subscribers see is always committed,
and one round trip does it all.

The snapshot is written every `SNAPSHOT_EVERY` commits, at the first commit of a room
this process starts running, whenever a room is written back whole, and when its game
ends; a new owner loads it and runs the journal again (leases.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import NamedTuple

import msgspec
from redis.exceptions import RedisError

from dicehall.protocol.messages.common import RoomInfo

from ...hosting.actor import Entry
from ...hosting.journal import encode as encode_journal
from ...rooms.room import RoomCore
from .backoff import Backoff
from .errors import Fenced
from .groupcommit import GroupCommit
from .keys import LOBBY, RECORD_TTL, event_channel
from .link import Link
from .packing import ENCODER, pack_outgoing
from .scripts import CommitArgs, Committed, RidingReply

log = logging.getLogger("dicehall.redis")

SNAPSHOT_EVERY = 8
"""Commits per snapshot: the snapshot is about a tenth of a commit's work on its owner
(docs/benchmarks/journal.md, "Scale-out that pays"); a new owner runs at most this many commits'
commands again."""


class FencedStore:
    """Each owned room's fenced commits and its lobby entry."""

    def __init__(
        self,
        link: Callable[[], Link],
        proc: str,
        *,
        lease_ms: int,
        history: int,
        reply_ms: int,
        cluster: bool,
        restore_secret: Callable[[], Awaitable[None]],
        advertised: Callable[[RoomInfo], RoomInfo],
    ) -> None:
        self._link = link
        self.group = GroupCommit(link)
        self.proc = proc
        self.lease_ms = lease_ms
        self.history = history
        self.reply_ms = reply_ms
        self._publish = "spublish" if cluster else "publish"
        self._restore_secret = restore_secret
        self._advertised = advertised
        """A lobby entry with where to reach the room's process."""
        """Called after Redis was found to have lost data: put the token secret back."""
        self._writing: dict[str, asyncio.Lock] = {}
        """One writer per room at a time: the actor's commits, lease upkeep, resyncs."""
        self._lobby: dict[str, tuple[object, ...]] = {}
        """Each owned room's `lobby_key` as last written: most commits leave it as it is."""
        self._record_written: dict[str, int] = {}
        """Each owned room's record log bytes already in Redis: a commit appends the rest."""
        self._since: dict[str, int] = {}
        """Each owned room's commits since its last snapshot (absent: write one next)."""
        self._heard: set[str] = set()
        """Owned rooms whose last published commit reached another process."""
        self.behind = False
        """This process writes its rooms behind: its snapshots say so (`SavedRoom.behind`)."""
        self.written_at: dict[str, float] = {}
        """Each owned room's last commit (monotonic seconds): it renewed the lease too."""

    def forget(self, room: str) -> None:
        """The room is no longer run here."""
        self._writing.pop(room, None)
        self._lobby.pop(room, None)
        self._record_written.pop(room, None)
        self._since.pop(room, None)
        self._heard.discard(room)
        self.written_at.pop(room, None)

    def heard(self, room: str) -> bool:
        """Members elsewhere heard the room's last commit (so they may want its progress)."""
        return room in self._heard

    async def announce(self, room: str, payload: bytes) -> None:
        """Publish what is not committed (a `progress`) on the room's event channel."""
        with contextlib.suppress(RedisError):
            await self._link().publish(event_channel(room), payload)

    def forget_lobby(self) -> None:
        """Redis may have lost the lobby: write every entry again at its next commit."""
        self._lobby.clear()

    def taken_over(self, room: str, record_log_bytes: int) -> None:
        """A room taken over with this much of its record's log in Redis already."""
        self._record_written[room] = record_log_bytes

    async def persist(
        self,
        core: RoomCore,
        entries: list[tuple[int, bytes]],
        payload: bytes = b"",
        reply: RidingReply | None = None,
        journal: Sequence[Entry] = (),
    ) -> None:
        """Retry until Redis takes it: a room pauses while Redis is away, it never forgets.
        `payload` (the messages for other processes) is published once they are written,
        and `reply` after it. `journal`: the commands that made `entries` (a snapshot is
        written instead when one is due; without entries, always).

        Raises `Fenced` when another process runs the room now."""
        backoff = Backoff()
        lock = self._writing.setdefault(core.id, asyncio.Lock())
        while True:
            try:
                async with lock:
                    status = await self._write(
                        core, entries, payload, reply, rewrite=False, journal=journal
                    )
                    if status is Committed.BEHIND:  # Redis lost the log: write the room back
                        log.warning("room %s: Redis lost its log; writing it back", core.id)
                        self._lobby.pop(core.id, None)
                        whole = [(o.seq, pack_outgoing(o)) for o in core.log]
                        status = await self._write(core, whole, payload, reply, rewrite=True)
                        await self._restore_secret()
                if status is Committed.FENCED:
                    raise Fenced(core.id)
                await self.list_in_lobby(core)
                return
            except RedisError as exc:
                log.warning("redis commit of room %s failed: %s", core.id, exc)
                await asyncio.sleep(backoff.next())

    async def list_in_lobby(self, core: RoomCore) -> None:
        """Keep the room's lobby entry as the room is (gone once the game is over)."""
        if self.listed(core):
            return
        key = core.lobby_key()
        link = self._link()
        if core.status == "over":
            await link.command("HDEL", LOBBY, core.id)
        else:
            entry = ENCODER.encode(self._advertised(core.info()))
            await link.command("HSET", LOBBY, core.id, entry)
        self._lobby[core.id] = key

    async def _write(
        self,
        core: RoomCore,
        entries: list[tuple[int, bytes]],
        payload: bytes,
        reply: RidingReply | None,
        rewrite: bool,
        journal: Sequence[Entry] = (),
    ) -> Committed:
        """One fenced, atomic write of the room: log entries, snapshot or journal, record,
        lease."""
        write = self.prepare(core, entries, payload, reply, rewrite, journal)
        status = await self.group.submit(core.id, write.args)
        self.settle(core, write, status)
        return status

    def prepare(
        self,
        core: RoomCore,
        entries: list[tuple[int, bytes]],
        payload: bytes,
        reply: RidingReply | None,
        rewrite: bool,
        journal: Sequence[Entry] = (),
    ) -> Write:
        """The script's arguments for a write of the room as it is now."""
        since = self._since.get(core.id)
        whole = (
            rewrite
            or not entries
            or not journal
            or since is None
            or since + 1 >= SNAPSHOT_EVERY
            or core.status == "over"
        )
        record = b""
        if core.status == "over" and core.record is not None:
            record = msgspec.json.encode(core.record)
        record_log = core.record_log.data
        size = len(record_log)
        done = 0 if rewrite else min(self._record_written.get(core.id, 0), size)
        snapshot = b""
        if whole:
            saved = core.save()
            saved.behind = self.behind
            snapshot = ENCODER.encode(saved)
        args = CommitArgs(
            owner=self.proc,
            lease_ms=self.lease_ms,
            history=self.history,
            snapshot=snapshot,
            journal=b"" if whole else encode_journal(journal),
            seq=core.seq,
            entries=entries,
            record=record,
            record_ttl=RECORD_TTL,
            record_done=done,
            record_new=bytes(record_log[done:]),
            rewrite=rewrite,
            publish=self._publish,
            channel=event_channel(core.id),
            payload=payload,
            reply=reply,
            reply_ms=self.reply_ms,
        )
        return Write(args, whole, size)

    def settle(self, core: RoomCore, write: Write, status: Committed) -> None:
        """What a write's status says about the room's state in Redis."""
        since = self._since.get(core.id)
        if status in (Committed.WRITTEN, Committed.HEARD):
            self.written_at[core.id] = time.monotonic()
            self._record_written[core.id] = write.size
            self._since[core.id] = 0 if write.whole else (since or 0) + 1
        if status is Committed.HEARD:
            self._heard.add(core.id)
        elif status is Committed.WRITTEN and write.args.payload:
            self._heard.discard(core.id)

    def listed(self, core: RoomCore) -> bool:
        """The room's lobby entry is as the room is."""
        return self._lobby.get(core.id) == core.lobby_key()


class Write(NamedTuple):
    """A write of a room, prepared: the script's arguments, and what it writes."""

    args: CommitArgs
    whole: bool
    """It writes the snapshot."""
    size: int
    """The record log's length in it."""
