"""The embedded backend: every room is an actor in this process."""

from __future__ import annotations

import asyncio
import contextlib
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import msgspec

from dicehall.protocol.errors import NoSuchRoomError
from dicehall.protocol.messages.common import RoomInfo
from dicehall.protocol.messages.results import RoomsResult

from ..actor import BotSpawner, RoomActor
from ..commands import Command, R
from ..hub import Hub
from ..outgoing import Outgoing
from ..room import RoomCore
from .base import Backend, RoomSpec, new_room_id, page_of
from .local import LocalRooms

RECORD_LEVEL = 6
"""zlib level of the records kept: a 4-seat Qwixx record of ~7.2 KB as JSON keeps ~840
bytes at 6 (51 µs), ~1,180 at 1 (32 µs); a long Yamb game 93 KB -> 7.4 KB (1.4 ms).
Once per game, and decompressed (~10-200 µs) only when asked for (docs/benchmarks/journal.md,
"Memory")."""


class MemoryBackend(Backend):
    def __init__(
        self,
        hub: Hub,
        spawn_bot: BotSpawner | None = None,
        idle_seconds: float = 600.0,
        keep_records: int = 1000,
        clock: Callable[[], float] = time.time,
        drop_bots: Callable[[str], None] | None = None,
        over_seconds: float = 30.0,
        history: int = 128,
        empty_seconds: float = 60.0,
    ) -> None:
        super().__init__(hub)
        self.spawn_bot = spawn_bot
        self.drop_bots = drop_bots
        """Called with a room's id when it closes: its house bots go with it."""
        self.idle_seconds = idle_seconds
        self.history = history
        """Messages a room keeps for `resume`: about 15 s of a fast Qwixx table, minutes at
        a human pace; a client that missed more gets a snapshot instead (docs/protocol.md).
        Each costs ~20 bytes once its block of 32 is compressed, ~125 until then
        (`MessageLog`; docs/benchmarks/journal.md, "Memory")."""
        self.over_seconds = min(over_seconds, idle_seconds)
        """A finished game nobody is in closes sooner: its record is kept apart (`record`),
        and under a steady churn of games its log would otherwise pile up for
        `idle_seconds` (docs/benchmarks/journal.md, "Load"). A disconnected seat has this long to
        resume and see the end; a finished room every person left with `leave` closes at
        once (`RoomCore.deserted`)."""
        self.empty_seconds = min(empty_seconds, idle_seconds)
        """A room nobody has sat in closes sooner, before its game starts (lobby spam:
        `RoomCore.closable`)."""
        self._actors = LocalRooms()
        self._records: OrderedDict[str, bytes] = OrderedDict()
        """Records of finished games, as zlib-compressed JSON (decompressed when asked for)."""
        self._closing: set[asyncio.Task[None]] = set()
        self._keep_records = keep_records
        self._clock = clock
        self._reaper: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._reaper = asyncio.get_running_loop().create_task(self._reap_forever())

    async def stop(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
        for actor in list(self._actors.values()):
            await actor.stop()
        self._actors.clear()

    async def create(self, spec: RoomSpec) -> RoomInfo:
        room_id = new_room_id()
        while room_id in self._actors:
            room_id = new_room_id()
        core = spec.core(room_id, self.history)
        core.last_activity = self._clock()
        actor = RoomActor(
            core,
            self._commit,
            self.spawn_bot,
            commit_now=self._commit_now,
            expired=self._actors.windows_expired,
            progress=self._progress,
        )
        self._actors[room_id] = actor
        actor.start()
        return self.advertised(core.info())

    async def _commit(
        self, core: RoomCore, out: list[Outgoing], _rider: object, _journal: object
    ) -> None:
        self._commit_now(core, out)

    def _commit_now(self, core: RoomCore, out: list[Outgoing]) -> None:
        """Nothing to persist: deliver, keep the record of a finished game, and close a
        finished room once everyone has left it."""
        self.hub.deliver(core.id, out)
        if core.status != "over":
            return
        if core.id not in self._records:
            self._records[core.id] = zlib.compress(msgspec.json.encode(core.record), RECORD_LEVEL)
            self.game_over(core)
            while len(self._records) > self._keep_records:
                self._records.popitem(last=False)
        if core.deserted:
            # not from inside the room's own command: its actor stops in a task of its own
            task = asyncio.get_running_loop().create_task(self._close_deserted(core.id))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    def _progress(self, core: RoomCore) -> None:
        progress = core.progress() if self.hub.wants_progress(core.id) else None
        if progress is not None:
            self.hub.progress(core.id, Outgoing(progress))

    async def rooms(self, game: str | None = None) -> list[RoomInfo]:
        cores = [a.core for a in self._actors.values()]
        return [
            self.advertised(c.info())
            for c in sorted(cores, key=lambda c: -c.last_activity)
            if c.public and (game is None or c.game.name == game)
        ]

    async def lobby(self, game: str | None, limit: int, after: str | None) -> RoomsResult:
        listed = sorted(
            room
            for room, actor in self._actors.items()
            if actor.core.public and (game is None or actor.core.game.name == game)
        )
        page, cursor = page_of(listed, limit, after)
        rooms = [self.advertised(self._actors[room].core.info()) for room in page]
        return RoomsResult(rooms=rooms, total=len(listed), next=cursor)

    def rooms_here(self) -> int:
        return len(self._actors)

    async def call(self, room: str, cmd: Command[R]) -> R:
        actor = self._actors.get(room)
        if actor is None:
            raise NoSuchRoomError(f"no room {room!r}")
        return await actor.submit(cmd)

    async def subscribe(self, room: str) -> None:
        """Every room is local: the hub already receives all of its messages."""

    def unsubscribe(self, room: str) -> None:
        """Nothing to undo (see `subscribe`)."""

    def local_room(self, room: str) -> RoomCore | None:
        return self._actors.core(room)

    def game_of(self, room: str) -> str:
        return self._actors.game_of(room)

    async def record(self, room: str) -> dict[str, Any] | None:
        packed = self._records.get(room)
        if packed is None:
            return None
        record: dict[str, Any] = msgspec.json.decode(zlib.decompress(packed))
        return record

    def stats(self) -> dict[str, int]:
        return self._actors.stats()

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(
                min(30.0, self.idle_seconds / 4, self.over_seconds / 2, self.empty_seconds / 2)
            )
            await self.reap()

    async def reap(self) -> None:
        """Close the rooms nobody is in that were quiet long enough (`RoomCore.closable`)."""
        now = self._clock()
        for room_id, actor in list(self._actors.items()):
            if actor.core.closable(now, self.idle_seconds, self.over_seconds, self.empty_seconds):
                await self._close(room_id, actor)

    async def _close_deserted(self, room_id: str) -> None:
        """Close a finished room at once if it is still deserted (nobody has come back or
        started watching since)."""
        actor = self._actors.get(room_id)
        if actor is not None and actor.core.deserted:
            await self._close(room_id, actor)

    async def _close(self, room_id: str, actor: RoomActor) -> None:
        if self._actors.get(room_id) is not actor:
            return  # closed already
        del self._actors[room_id]
        await actor.stop()
        self._actors.rooms_closed += 1
        if self.drop_bots is not None:
            self.drop_bots(room_id)
