"""The backend interface: create and list rooms, run commands on a room's owner.

A session never touches a room directly: it sends a command with `call`, and receives
the room's messages through the process's hub, to which the backend delivers them. With
one process the owner is always local; with Redis it may be another process.
"""

from __future__ import annotations

import bisect
import secrets
from abc import ABC, abstractmethod
from collections.abc import Awaitable
from typing import Protocol

import msgspec

from dicehall.protocol.messages.common import RoomInfo
from dicehall.protocol.messages.results import RoomsResult
from dicehall.rules import get_game

from ..connections.hub import Hub
from ..hosting.host import RoomHost
from ..jsonvalue import JsonObject
from ..rooms.commands import Command, R
from ..rooms.room import RoomCore


class RoomSpec(msgspec.Struct, kw_only=True):
    """A validated `create` request."""

    game: str
    options: dict[str, object]
    seats: int
    turn_window: int
    public: bool
    name: str | None = None
    autostart: bool = False
    host_key: str = ""

    def core(self, room_id: str, history: int) -> RoomCore:
        """A new room of this spec, not started."""
        return RoomCore(
            room_id,
            get_game(self.game),
            self.options,
            self.seats,
            self.turn_window,
            public=self.public,
            name=self.name,
            autostart=self.autostart,
            host_key=self.host_key,
            history=history,
        )


def new_room_id() -> str:
    """Eight URL-safe characters, never starting with "-": a room id is typed after
    options on command lines (`dicehall bot --room ID`), where it would read as one."""
    while True:
        room = secrets.token_urlsafe(6)
        if not room.startswith("-"):
            return room


def page_of(listed: list[str], limit: int, after: str | None) -> tuple[list[str], str | None]:
    """The first `limit` of the sorted room ids `listed` that come after `after`, and the
    cursor of the page that follows them (None: none does). A cursor is the last id of its
    page, so rooms that come or go between pages never shift the others: each room listed
    throughout is seen exactly once."""
    start = 0 if after is None else bisect.bisect_right(listed, after)
    page = listed[start : start + limit]
    return page, page[-1] if start + limit < len(listed) else None


class Caller(Protocol):
    def __call__(self, room: str, cmd: Command[R]) -> Awaitable[R]:
        """Run `cmd` on the room's owner; raises NoSuchRoomError or the command's error."""


class Rooms(Protocol):
    """What a session sees of the rooms, wherever they run."""

    call: Caller

    async def create(self, spec: RoomSpec) -> RoomInfo: ...

    async def subscribe(self, room: str) -> None:
        """Make sure this process receives `room`'s messages (before a member catches up)."""

    def unsubscribe(self, room: str) -> None:
        """A member left; stop receiving when none is left (may finish in the background)."""

    async def lobby(self, game: str | None, limit: int, after: str | None) -> RoomsResult:
        """A page of the public rooms (of `game`), by room id from the one after `after`."""

    async def owner_url(self, room: str) -> str | None:
        """Where the process that runs `room` takes connections (None: not advertised)."""


class Backend(ABC):
    """What sessions and the process see of the rooms: the rooms run here are the host's
    (`RoomHost`, the same in both deployments); a backend adds where the others are."""

    call: Caller
    """Run a command on its room's owner (each backend sets it: with every room here, the
    host's own `call`, with nothing in between)."""

    def __init__(self, hub: Hub, host: RoomHost) -> None:
        self.hub = hub
        self.host = host
        self.public_url: str | None = None
        """Where clients reach this process directly (`--public-url`), if advertised."""

    @abstractmethod
    async def start(self) -> None:
        """Connect, start background tasks."""

    @abstractmethod
    async def stop(self) -> None:
        """Hand rooms over or stop them; close connections."""

    def ready(self) -> bool:
        return True

    def history_stored(self, room: str) -> None:
        """History has `room`'s finished game (a writer stored it): the room may close."""
        self.host.stored(room)

    async def shared_secret(self) -> bytes | None:
        """A token-signing secret every process of this deployment shares (None: no peers)."""
        return None

    @abstractmethod
    async def subscribe(self, room: str) -> None:
        """Make sure this process receives `room`'s messages (before a member catches up)."""

    @abstractmethod
    def unsubscribe(self, room: str) -> None:
        """A member left; stop receiving when none is left (may finish in the background)."""

    @abstractmethod
    async def create(self, spec: RoomSpec) -> RoomInfo: ...

    @abstractmethod
    async def rooms(self, game: str | None = None) -> list[RoomInfo]:
        """Public rooms, newest first."""

    @abstractmethod
    async def lobby(self, game: str | None, limit: int, after: str | None) -> RoomsResult:
        """A page of the public rooms (of `game`), by room id from the one after `after`
        (`page_of`), with how many there are in all: the `rooms` reply."""

    def rooms_here(self) -> int:
        """How many rooms this process runs now (what `--max-rooms` bounds)."""
        return len(self.host.actors)

    async def owner_url(self, room: str) -> str | None:
        """Where the process that runs `room` takes connections (None: not advertised, or
        not known now). Never raises: a client that is not told stays where it is."""
        return self.public_url

    def advertised(self, info: RoomInfo) -> RoomInfo:
        """A lobby entry of a room this process runs, with where to reach it."""
        if self.public_url is None:
            return info
        return msgspec.structs.replace(info, url=self.public_url)

    @abstractmethod
    async def record(self, room: str) -> JsonObject | None:
        """The game record once the game is over (None: no such room or not over)."""

    def local_room(self, room: str) -> RoomCore | None:
        """The room's core if this process runs it now (to read, never to change: every
        change goes through `call`)."""
        return self.host.actors.core(room)

    def game_of(self, room: str) -> str:
        """The game of a room run by this process (house bots need it)."""
        return self.host.actors.game_of(room)

    def stats(self) -> dict[str, int]:
        """Counts for /metrics: rooms, seats taken, windows expired..."""
        return self.host.actors.stats()
