"""The memory backend closes rooms that went quiet with nobody in them, in-process.

The backend takes its clock as a parameter, so idleness is a number the test sets; the
house-bot case runs a whole server's parts (bots need them) with a short idle time.
"""

from __future__ import annotations

import asyncio
import random
import time
import zlib

import msgspec
import pytest

from dicehall.protocol import errors
from dicehall.protocol.messages import client as requests
from dicehall.server.backends import MemoryBackend, RoomSpec, base
from dicehall.server.connections.hub import Hub
from dicehall.server.edge.process import Server
from dicehall.server.edge.settings import Config
from dicehall.server.rooms.commands import (
    ActCmd,
    JoinCmd,
    LeaveCmd,
    LegalCmd,
    PresenceCmd,
    StartCmd,
    SyncCmd,
    WatchCmd,
)

from .connections.test_session import Member, create, hello

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
        with pytest.raises(errors.NoSuchRoomError):
            await backend.call(empty, SyncCmd(seat=None))

        # Once the spectator leaves, that room goes too; a room whose player's connection
        # went waits a minute for a reload (issue 33), and then goes.
        await backend.call(seated, PresenceCmd(seat=0, delta=-1))
        await backend.call(watched, WatchCmd(delta=-1))
        await backend.reap()
        assert {r.room for r in await backend.rooms()} == {seated, fresh}
        clock.now = time.time() + backend.host.empty_seconds + 1  # (stamped in real time)
        await backend.reap()
        assert not await backend.rooms(), "(fresh, empty as long, went with it)"
        assert backend.stats()["rooms_closed"] == 4
    finally:
        await backend.stop()


async def test_windows_closed_by_deadline_stay_counted_when_their_room_is_gone() -> None:
    """`dicehall_windows_closed_by_deadline_total` is a counter: it never goes down."""
    clock = Clock()
    backend = MemoryBackend(Hub(), idle_seconds=IDLE, clock=clock)
    try:
        quick = RoomSpec(game="qwinto", options={}, seats=1, turn_window=1, public=True)
        room = (await backend.create(quick)).room
        await backend.call(room, JoinCmd(name="Ada", seat=0, nonce="n"))
        await backend.call(room, StartCmd(seat=0))
        deadline = time.monotonic() + 10
        while backend.stats()["windows_expired"] < 1:  # the first window's deadline
            assert time.monotonic() < deadline, "no window closed by its deadline"
            await asyncio.sleep(0.05)
        await backend.call(room, PresenceCmd(seat=0, delta=-1))
        expired = backend.stats()["windows_expired"]
        clock.now = time.time() + IDLE + 1  # (the room's activity is stamped in real time)
        await backend.reap()
        assert backend.stats()["rooms"] == 0, "the room closed"
        assert backend.stats()["windows_expired"] >= expired >= 1
    finally:
        await backend.stop()


async def exists(server: Server, room: str) -> bool:
    try:
        await server.backend.call(room, SyncCmd(seat=None))
    except errors.NoSuchRoomError:
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
        await watcher.ask(requests.Hello, client="test")
        await watcher.ask(requests.Spectate, room=room)
        await host.ask(requests.AddBots, room=room)
        await host.ask(requests.Start, room=room)
        await asyncio.wait_for(watcher.over.wait(), 30)
        assert any(r == room for r, _ in server.bots)
        await watcher.ask(requests.Leave, room=room)

        deadline = time.monotonic() + 10
        while await exists(server, room) or server.hub.members(room):
            assert time.monotonic() < deadline, "the finished bot game was never closed"
            await asyncio.sleep(0.05)  # the reaper runs on its own timer
        assert not any(r == room for r, _ in server.bots)
        record = await server.backend.record(room)
        assert record is not None and record["seats"] == ["random-bot-0", "random-bot-1"]
    finally:
        await server.stop()


async def finished_game(backend: MemoryBackend, seats: int = 2, seed: int = 5) -> str:
    """A room whose game is over, every seat held by a connected person."""
    room = (await backend.create(spec(seats=seats))).room
    for seat in range(seats):
        await backend.call(room, JoinCmd(name=f"p{seat}", seat=seat, nonce=f"n{seat}"))
    await backend.call(room, StartCmd(seat=0))
    rng = random.Random(seed)
    for _ in range(1000):
        moved = False
        for seat in range(seats):
            window, actions, _ = await backend.call(room, LegalCmd(seat=seat))
            if actions:
                await backend.call(
                    room, ActCmd(seat=seat, action=rng.choice(actions), window=window)
                )
                moved = True
        if not moved:
            return room
    raise AssertionError("the game did not end")


async def closed(backend: MemoryBackend, room: str) -> bool:
    for _ in range(10):  # the close runs in a task of its own
        await asyncio.sleep(0)
    try:
        await backend.call(room, SyncCmd(seat=None))
    except errors.NoSuchRoomError:
        return True
    return False


async def test_a_finished_room_everyone_left_closes_at_once() -> None:
    """No seat can resume into it; a seat merely disconnected keeps its `over_seconds` to
    come back and see the end, and a spectator keeps the room open while it watches."""
    clock = Clock()
    backend = MemoryBackend(Hub(), idle_seconds=600, over_seconds=30, clock=clock)
    try:
        left, dropped, watched = [await finished_game(backend) for _ in range(3)]
        await backend.call(watched, SyncCmd(seat=None, watch=1))
        for room in (left, dropped, watched):
            await backend.call(room, LeaveCmd(seat=0))
        assert not await closed(backend, left), "seat 1 is still there"
        for room in (left, watched):
            await backend.call(room, LeaveCmd(seat=1))
        await backend.call(dropped, PresenceCmd(seat=1, delta=-1))

        assert await closed(backend, left)
        assert backend.stats()["rooms_closed"] == 1
        assert await backend.record(left) is not None, "its record outlives it"
        assert not await closed(backend, dropped)
        assert not await closed(backend, watched)

        await backend.call(watched, WatchCmd(delta=-1))
        clock.now = time.time() + 29
        await backend.reap()
        assert not await closed(backend, dropped), "29 s: it may still resume"
        clock.now = time.time() + 31
        await backend.reap()
        assert await closed(backend, dropped) and await closed(backend, watched)
        assert backend.stats()["rooms_closed"] == 3
    finally:
        await backend.stop()


async def test_a_seat_back_after_leaving_keeps_the_finished_room_open() -> None:
    backend = MemoryBackend(Hub(), idle_seconds=600, over_seconds=30)
    try:
        room = await finished_game(backend)
        await backend.call(room, LeaveCmd(seat=0))
        await backend.call(room, PresenceCmd(seat=0, delta=1))  # its token took it back
        await backend.call(room, LeaveCmd(seat=1))
        assert not await closed(backend, room)
    finally:
        await backend.stop()


async def test_finished_records_are_kept_compressed_and_the_oldest_go() -> None:
    backend = MemoryBackend(Hub(), keep_records=2)
    try:
        rooms = [await finished_game(backend, seed=s) for s in range(3)]
        core = backend.local_room(rooms[2])
        assert core is not None
        as_json = msgspec.json.encode(core.record)
        kept = backend.store._records[rooms[2]]
        assert len(kept) < len(as_json) / 4 and zlib.decompress(kept) == as_json
        assert await backend.record(rooms[2]) == core.record
        assert await backend.record(rooms[0]) is None, "only the last 2 are kept"
        assert await backend.record(rooms[1]) is not None
    finally:
        await backend.stop()


def test_room_ids_never_start_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    """A room id follows options on command lines (`dicehall bot --room ID`)."""
    drawn = iter(["-dash1234", "_ok12345"])
    monkeypatch.setattr(base.secrets, "token_urlsafe", lambda n: next(drawn))
    assert base.new_room_id() == "_ok12345"
    monkeypatch.undo()
    assert not any(base.new_room_id().startswith("-") for _ in range(2000))
