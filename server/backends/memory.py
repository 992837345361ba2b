"""The embedded backend: every room runs in this process, and nothing is kept elsewhere."""

from __future__ import annotations

import time
import zlib
from collections import OrderedDict
from collections.abc import Callable

import msgspec

from dicehall.protocol.messages.common import RoomInfo
from dicehall.protocol.messages.results import RoomsResult

from ..connections.hub import Hub
from ..hosting.actor import BotSpawner
from ..hosting.host import RoomHost
from ..hosting.store import RoomStore
from ..jsonvalue import JsonObject
from ..rooms.room import RoomCore
from .base import Backend, RoomSpec, new_room_id, page_of

RECORD_LEVEL = 6
"""zlib level of the records kept: a 4-seat Qwixx record of ~7.2 KB as JSON keeps ~840
bytes at 6 (51 µs), ~1,180 at 1 (32 µs); a long Yamb game 93 KB -> 7.4 KB (1.4 ms).
Once per game, and decompressed (~10-200 µs) only when asked for (docs/benchmarks/journal.md,
"Memory")."""


class MemoryStore(RoomStore):
    """Keeps nothing but the records of the last `keep` finished games, as zlib-compressed
    JSON (decompressed when asked for): a commit has nothing to wait for."""

    def __init__(self, keep: int = 1000) -> None:
        self._records: OrderedDict[str, bytes] = OrderedDict()
        self._keep = keep

    async def create(self, core: RoomCore) -> bool:
        return True

    def game_over(self, core: RoomCore) -> None:
        if core.id not in self._records:
            self._records[core.id] = zlib.compress(msgspec.json.encode(core.record), RECORD_LEVEL)
            while len(self._records) > self._keep:
                self._records.popitem(last=False)

    def record(self, room: str) -> JsonObject | None:
        packed = self._records.get(room)
        if packed is None:
            return None
        record: JsonObject = msgspec.json.decode(zlib.decompress(packed))
        return record


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
        self.store = MemoryStore(keep_records)
        host = RoomHost(
            hub,
            self.store,
            spawn_bot=spawn_bot,
            drop_bots=drop_bots,
            idle_seconds=idle_seconds,
            over_seconds=over_seconds,
            empty_seconds=empty_seconds,
            clock=clock,
        )
        super().__init__(hub, host)
        self.call = host.call
        self.history = history
        """Messages a room keeps for `resume`: about 15 s of a fast Qwixx table, minutes at
        a human pace; a client that missed more gets a snapshot instead (docs/protocol.md).
        Each costs ~20 bytes once its block of 32 is compressed, ~125 until then
        (`MessageLog`; docs/benchmarks/journal.md, "Memory")."""

    async def start(self) -> None:
        await self.host.start()

    async def stop(self) -> None:
        await self.host.stop()

    async def create(self, spec: RoomSpec) -> RoomInfo:
        while True:
            core = spec.core(new_room_id(), self.history)
            if await self.host.create(core):
                return self.advertised(core.info())

    async def subscribe(self, room: str) -> None:
        """Every room is local: the hub already receives all of its messages."""

    def unsubscribe(self, room: str) -> None:
        """Nothing to undo (see `subscribe`)."""

    async def rooms(self, game: str | None = None) -> list[RoomInfo]:
        cores = [a.core for a in self.host.actors.values()]
        return [
            self.advertised(c.info())
            for c in sorted(cores, key=lambda c: -c.last_activity)
            if c.public and (game is None or c.game.name == game)
        ]

    async def lobby(self, game: str | None, limit: int, after: str | None) -> RoomsResult:
        actors = self.host.actors
        listed = sorted(
            room
            for room, actor in actors.items()
            if actor.core.public and (game is None or actor.core.game.name == game)
        )
        page, cursor = page_of(listed, limit, after)
        rooms = [self.advertised(actors[room].core.info()) for room in page]
        return RoomsResult(rooms=rooms, total=len(listed), next=cursor)

    async def record(self, room: str) -> JsonObject | None:
        return self.store.record(room)

    async def reap(self) -> None:
        """Close the rooms nobody is in that were quiet long enough (the host's `reap`)."""
        await self.host.reap()
