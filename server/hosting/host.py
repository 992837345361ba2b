"""The rooms this process runs, the same in both deployments: their actors, the one commit
path (durable in the store first, then shown through the hub), the hand-off of finished
games to history, who-has-answered progress, and closing rooms nobody is in.

The store (server/hosting/store.py) says only what differs between deployments: where a
commit is kept, and what happens when a room is created, ends its game or stops running
here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from dicehall.protocol.errors import NoSuchRoomError

from ..connections.hub import Hub
from ..rooms.commands import Command, R
from ..rooms.outgoing import Outgoing
from ..rooms.room import RoomCore
from .actor import BotSpawner, CommitBatch, Pending, RoomActor
from .local import LocalRooms
from .room_task import run_room, stop_room
from .store import Release, RoomStore

log = logging.getLogger("dicehall.room")

Deliver = Callable[[str, list[Outgoing]], None]
"""Shows a room's committed messages to this process's members (the hub, or the Redis
relay, which notes what it delivered)."""
Progress = Callable[[RoomCore], None]
REAPER = "dicehall-reaper"
"""The name of the task that closes rooms nobody is in."""


class RoomHost:
    def __init__(
        self,
        hub: Hub,
        store: RoomStore,
        *,
        spawn_bot: BotSpawner | None = None,
        drop_bots: Callable[[str], None] | None = None,
        idle_seconds: float = 600.0,
        over_seconds: float = 30.0,
        empty_seconds: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.hub = hub
        self.store = store
        self.spawn_bot = spawn_bot
        self.drop_bots = drop_bots
        """Called with a room's id when it stops running here: its house bots go with it."""
        self.idle_seconds = idle_seconds
        self.over_seconds = min(over_seconds, idle_seconds)
        """A finished game nobody is in closes sooner: its record is kept apart, and under
        a steady churn of games its log would otherwise pile up for `idle_seconds`
        (docs/benchmarks/journal.md, "Load"). A disconnected seat has this long to resume
        and see the end; a finished room every person left with `leave` closes at once
        (`RoomCore.deserted`)."""
        self.empty_seconds = min(empty_seconds, idle_seconds)
        """A room nobody has sat in closes sooner, before its game starts (lobby spam:
        `RoomCore.closable`)."""
        self.clock = clock
        self.actors = LocalRooms()
        self.deliver: Deliver = hub.deliver
        self.show_progress: Progress = self._progress_here
        self.on_game_over: Callable[[RoomCore], None] | None = None
        """Called once per game, by the room's owner, when its end is committed (history)."""
        self._ended: set[str] = set()
        """Rooms run here whose finished game was handed to history (once per owner)."""
        self._unstored: set[str] = set()
        """Rooms run here whose finished game a durable store keeps until history has
        stored it (`stored`): not closed before, since closing deletes it."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._reaper: asyncio.Task[None] | None = None

    # --- lifecycle ---------------------------------------------------------------------

    async def start(self) -> None:
        self._reaper = asyncio.get_running_loop().create_task(self._reap_forever(), name=REAPER)

    async def stop(self) -> None:
        """Let every room go after the commands already queued (a durable store hands
        them to another process)."""
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for room in list(self.actors):
            await self.let_go(room, Release.HANDED)

    def spawn(self, job: Coroutine[Any, Any, None]) -> None:
        """Run `job` in a task kept until it is done (and waited for at stop)."""
        task = asyncio.get_running_loop().create_task(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- rooms -------------------------------------------------------------------------

    async def create(self, core: RoomCore) -> bool:
        """Run a new room here: False if its id is taken (the caller picks another)."""
        if core.id in self.actors or not await self.store.create(core):
            return False
        core.last_activity = self.clock()
        await self.own(core)
        return True

    async def own(self, core: RoomCore) -> None:
        """Run `core`'s room here (new, or taken over): its actor, then its house bots."""
        actor = RoomActor(
            core,
            self.commit,
            self.spawn_bot,
            expired=self.actors.windows_expired,
            journal=self.store.journal,
            progress=self.show_progress,
            run=run_room,
        )
        self.actors[core.id] = actor
        actor.start()
        await self.store.owned(core)
        if self.spawn_bot is not None and core.status != "over":
            for seat, s in enumerate(core.seats):
                if s.kind == "bot" and s.bot is not None:
                    self.spawn_bot(core.id, seat, s.bot)

    def actor(self, room: str) -> RoomActor:
        actor = self.actors.get(room)
        if actor is None:
            raise NoSuchRoomError(f"no room {room!r}")
        return actor

    def call(self, room: str, cmd: Command[R]) -> asyncio.Future[R]:
        """Run `cmd` on a room run here (`RoomActor.submit`); NoSuchRoomError if none is."""
        return self.actor(room).submit(cmd)

    async def let_go(self, room: str, why: Release) -> None:
        """Stop running `room` here after the commands already queued."""
        actor = self.actors.pop(room, None)
        if actor is None:
            return
        if self.drop_bots is not None:
            self.drop_bots(room)
        await stop_room(actor)
        self._ended.discard(room)
        self._unstored.discard(room)  # (the next owner hands it again if it still waits)
        await self.store.released(actor.core, why, actor.unwritten())
        if why is Release.CLOSED:
            self.actors.rooms_closed += 1

    def lose(self, room: str, core: RoomCore) -> None:
        """Another process runs `room` now: stop `core` at once, run nothing more of it.
        Commands still queued are cancelled, which tells their callers they were not run
        (they try again, on the new owner)."""
        actor = self.actors.get(room)
        if actor is None or actor.core is not core:
            return
        del self.actors[room]
        log.warning("room %s belongs to another process now; stopping it here", room)
        if self.drop_bots is not None:
            self.drop_bots(room)
        self.spawn(self._retire(room, actor))

    async def _retire(self, room: str, actor: RoomActor) -> None:
        await stop_room(actor, grace=0)
        if room not in self.actors:  # (it may be ours again already)
            self._ended.discard(room)
            self._unstored.discard(room)
        await self.store.released(actor.core, Release.LOST, False)

    # --- the one commit path -----------------------------------------------------------

    def commit(self, batch: CommitBatch) -> Pending | None:
        """Durable first (the store), visible second (`deliver`); then, once per game, the
        end handed to history, and a finished room everyone left closed."""
        core = batch.core
        ending = core.status == "over" and core.id not in self._ended
        store = self.store
        if store.durable and not store.behind:
            return self._commit_durably(batch, ending)
        if store.behind:  # (else nothing is kept elsewhere) shown now, written soon
            store.write_behind(batch, ending)
        self._committed(batch, ending)
        return None

    async def _commit_durably(self, batch: CommitBatch, ending: bool) -> None:
        """(The store's commit is made here, when awaited: a room that stops first closes
        this coroutine, and nothing of it was started.)"""
        await self.store.commit(batch, ending)
        self._committed(batch, ending)

    def _committed(self, batch: CommitBatch, ending: bool) -> None:
        core = batch.core
        self.deliver(core.id, batch.out)
        if ending:
            self.ended(core)
        if core.status == "over" and core.deserted:
            self._close_soon(core.id)

    def ended(self, core: RoomCore, hand: bool = True) -> None:
        """Hand `core`'s finished game to history, once per owner (`hand` False: it has
        it already). Its failure (a full disk) is logged and never reaches the room: play
        goes on without history."""
        self._ended.add(core.id)
        self.store.game_over(core)
        if not hand or self.on_game_over is None:
            return
        try:
            self.on_game_over(core)
        except Exception:
            log.exception("room %s: its finished game could not be handed to history", core.id)
            return
        if self.store.durable:
            self._unstored.add(core.id)

    def stored(self, room: str) -> None:
        """History has `room`'s finished game: the room may close now."""
        self._unstored.discard(room)
        actor = self.actors.get(room)
        if actor is not None and actor.core.deserted:
            self._close_soon(room)

    def _progress_here(self, core: RoomCore) -> None:
        """Who has answered the open window, after an answer the room kept back."""
        progress = core.progress() if self.hub.wants_progress(core.id) else None
        if progress is not None:
            self.hub.progress(core.id, Outgoing(progress))

    # --- closing -----------------------------------------------------------------------

    def _close_soon(self, room: str) -> None:
        """Not from inside the room's own command: its actor stops in a task of its own."""
        self.spawn(self._close_if(room))

    async def _close_if(self, room: str) -> None:
        actor = self.actors.get(room)
        if actor is not None and self._may_close(room, actor.core, self.clock()):
            await self.let_go(room, Release.CLOSED)

    def _may_close(self, room: str, core: RoomCore, now: float) -> bool:
        if room in self._unstored or self.store.busy(room):
            return False
        return core.closable(now, self.idle_seconds, self.over_seconds, self.empty_seconds)

    async def reap(self) -> None:
        """Close the rooms nobody is in that were quiet long enough (`RoomCore.closable`)."""
        now = self.clock()
        for room, actor in list(self.actors.items()):
            if self._may_close(room, actor.core, now):
                await self.let_go(room, Release.CLOSED)

    async def _reap_forever(self) -> None:
        """Once a second at most (a room a member elsewhere just left waits for it:
        `RoomStore.busy`); `closable` is about a microsecond a room."""
        while True:
            await asyncio.sleep(min(1.0, self.over_seconds / 2, self.empty_seconds / 2))
            try:
                await self.reap()
            except Exception:  # (a store that cannot be reached now: the next round tries)
                log.exception("closing idle rooms failed")
