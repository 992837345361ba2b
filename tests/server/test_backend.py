"""The memory backend closes rooms that went quiet with nobody in them, in-process.

The backend takes its clock as a parameter, so idleness is a number the test sets; the
house-bot case runs a whole server's parts (bots need them) with a short idle time.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from protocol import errors as E
from protocol.messages import client as C
from server.app import Config, Server
from server.backends import MemoryBackend, RoomSpec
from server.commands import JoinCmd, PresenceCmd, SyncCmd, WatchCmd
from server.hub import Hub

from .test_session import Member, create, hello

IDLE = 60.0


class Clock:
    """Unix time that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1_767_225_600.0

    def __call__(self) -> float:
        return self.now


def spec(game: str = "qwixx", seats: int = 2) -> RoomSpec:
    return RoomSpec(game=game, options={}, seats=seats, turn_window=30, public=True)


async def test_quiet_rooms_nobody_is_in_are_closed() -> None:
    clock = Clock()
    backend = MemoryBackend(Hub(), idle_seconds=IDLE, clock=clock)
    try:
        empty = (await backend.create(spec())).room
        seated = (await backend.create(spec())).room
        watched = (await backend.create(spec())).room
        await backend.call(seated, JoinCmd(name="Ada", seat=None, nonce="n"))
        await backend.call(watched, SyncCmd(seat=None, watch=1))

        clock.now += IDLE / 2
        fresh = (await backend.create(spec())).room
        await backend.reap()
        assert {r.room for r in await backend.rooms()} == {empty, seated, watched, fresh}

        clock.now += IDLE / 2 + 1
        await backend.reap()
        assert {r.room for r in await backend.rooms()} == {seated, watched, fresh}
        assert backend.stats()["rooms_closed"] == 1
        with pytest.raises(E.NoSuchRoomError):
            await backend.call(empty, SyncCmd(seat=None))

        # Once the player is gone and the spectator leaves, those rooms go too.
        await backend.call(seated, PresenceCmd(seat=0, delta=-1))
        await backend.call(watched, WatchCmd(delta=-1))
        await backend.reap()
        assert {r.room for r in await backend.rooms()} == {fresh}
        assert backend.stats()["rooms_closed"] == 3
    finally:
        await backend.stop()


async def exists(server: Server, room: str) -> bool:
    try:
        await server.backend.call(room, SyncCmd(seat=None))
    except E.NoSuchRoomError:
        return False
    return True


async def test_a_finished_house_bot_game_is_closed_and_its_bots_released() -> None:
    """Bots hold their seats through the hub like everyone else; they must not keep an
    abandoned room (and themselves) alive forever. The record outlives the room."""
    server = Server(Config(secret=b"0123456789abcdef0123456789abcdef", idle_seconds=0.2))
    await server.start()
    try:
        host = await hello(server)
        room = await create(host, "qwinto", 2)
        watcher = Member(server)
        await watcher.ask(C.Hello, client="test")
        await watcher.ask(C.Spectate, room=room)
        await host.ask(C.AddBots, room=room)
        await host.ask(C.Start, room=room)
        await asyncio.wait_for(watcher.over.wait(), 30)
        assert any(r == room for r, _ in server.bots)
        await watcher.ask(C.Leave, room=room)

        deadline = time.monotonic() + 10
        while await exists(server, room) or server.hub.members(room):
            assert time.monotonic() < deadline, "the finished bot game was never closed"
            await asyncio.sleep(0.05)  # the reaper runs on its own timer
        assert not any(r == room for r, _ in server.bots)
        record = await server.backend.record(room)
        assert record is not None and record["seats"] == ["random-bot-0", "random-bot-1"]
    finally:
        await server.stop()
