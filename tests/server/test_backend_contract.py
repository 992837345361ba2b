"""The contract of server/backends/base.py `Backend`, checked on every backend.

Each backend runs in a real `Server` (the memory backend alone; the Redis backend against a
real `redis-server`, one fresh database per test) and is driven only through the abstract
interface: create, rooms, call, subscribe, record, local_room, game_of, stats. A backend
that passes may replace another under the sessions without them noticing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from random import Random
from typing import Any

import pytest

from dicehall.protocol import errors
from dicehall.protocol.messages.server import GameOver, RoomMessage, Snapshot, Window
from dicehall.rules.records import replay
from dicehall.server.backends import RoomSpec
from dicehall.server.backends.base import Backend
from dicehall.server.edge.process import Server
from dicehall.server.edge.settings import Config
from dicehall.server.rooms.commands import ActCmd, JoinCmd, LegalCmd, PresenceCmd, StartCmd, SyncCmd
from dicehall.server.rooms.outgoing import Outgoing
from tests.support.redis import RedisServer
from tests.support.wait import eventually

BACKENDS = ["memory", "redis"]


class Listener:
    """A hub member that keeps every message of its rooms, in arrival order."""

    progress = False

    def __init__(self) -> None:
        self.got: list[RoomMessage] = []
        self.heard = asyncio.Event()

    def deliver(self, room: str, outgoing: list[Outgoing]) -> None:
        self.got += [o.for_seat(None) for o in outgoing]
        self.heard.set()

    def deliver_progress(self, room: str, progress: Outgoing) -> None:
        """Not asked for."""

    def rewound(self, room: str) -> None:
        """(never called: no failover here)"""


@contextlib.asynccontextmanager
async def running(
    kind: str, redis_server: Callable[[], RedisServer], **settings: Any
) -> AsyncIterator[Backend]:
    config = Config(**settings)
    if kind == "redis":
        config.redis = _fresh(redis_server())
    server = Server(config)
    await server.start()
    try:
        yield server.backend
    finally:
        await server.stop()


def _fresh(r: RedisServer) -> str:
    return r.url_db(r.fresh_db())


@pytest.fixture(params=BACKENDS)
def kind(request: pytest.FixtureRequest) -> str:
    param: str = request.param
    return param


@pytest.fixture
def redis_factory(request: pytest.FixtureRequest) -> Callable[[], RedisServer]:
    """The session's redis-server, started only for the Redis backend's tests."""
    return lambda: request.getfixturevalue("redis_server")  # type: ignore[no-any-return]


def spec(game: str = "qwixx", seats: int = 2, public: bool = True) -> RoomSpec:
    return RoomSpec(game=game, options={}, seats=seats, turn_window=600, public=public)


async def test_a_created_room_is_listed_only_when_public(
    kind: str, redis_factory: Callable[[], RedisServer]
) -> None:
    async with running(kind, redis_factory) as backend:
        shown = await backend.create(spec("qwixx"))
        hidden = await backend.create(spec("yamb", public=False))
        assert shown.room != hidden.room and shown.status == "open"
        listed = [r.room for r in await backend.rooms()]
        assert shown.room in listed and hidden.room not in listed
        assert [r.room for r in await backend.rooms("yamb")] == []
        assert backend.game_of(hidden.room) == "yamb"  # the creating process runs it
        assert backend.local_room(shown.room) is not None


async def test_the_lobby_comes_a_page_at_a_time_each_room_once(
    kind: str, redis_factory: Callable[[], RedisServer]
) -> None:
    """Pages in an order that holds, the total said, the next page's cursor given: a room
    created between two pages never makes another be seen twice or missed."""
    async with running(kind, redis_factory) as backend:
        games = ["qwixx", "yamb", "qwixx", "qwinto", "qwixx", "yamb", "qwixx"]
        public = {(await backend.create(spec(game))).room: game for game in games}
        await backend.create(spec("qwixx", public=False))
        pages = [await backend.lobby(None, 3, None)]
        added = (await backend.create(spec("qwinto"))).room
        while pages[-1].next is not None:
            pages.append(await backend.lobby(None, 3, pages[-1].next))
        seen = [r.room for page in pages for r in page.rooms]
        assert len(seen) == len(set(seen)), "a room seen twice"
        assert set(public) <= set(seen) <= {*public, added}
        assert [len(page.rooms) for page in pages[:-1]] == [3] * (len(pages) - 1)
        assert pages[0].total == len(public)
        qwixx = await backend.lobby("qwixx", 100, None)
        assert {r.room for r in qwixx.rooms} == {r for r, g in public.items() if g == "qwixx"}
        assert qwixx.total == 4 and qwixx.next is None
        assert (await backend.lobby("chess", 100, None)).total == 0
        assert backend.rooms_here() == len(public) + 2


async def test_a_room_nobody_sits_in_closes_after_empty_seconds(
    kind: str, redis_factory: Callable[[], RedisServer]
) -> None:
    """Before its game starts, a room where no person holds a seat closes after
    `empty_seconds`, not the idle time-out; one a person sits in stays until that
    person's connection goes (issue 33: quick match seated people with the ghost)."""
    async with running(kind, redis_factory, empty_seconds=0.5) as backend:
        empty = (await backend.create(spec())).room
        seated = (await backend.create(spec())).room
        await backend.call(seated, JoinCmd(name="Ada", seat=None, nonce="a"))

        async def closed() -> bool:
            return empty not in {r.room for r in (await backend.lobby(None, 100, None)).rooms}

        await eventually(closed, "the empty room's close")
        with pytest.raises(errors.NoSuchRoomError):
            await backend.call(empty, SyncCmd(seat=None))
        assert [r.room for r in (await backend.lobby(None, 100, None)).rooms] == [seated]
        assert backend.rooms_here() == 1
        await backend.call(seated, PresenceCmd(seat=0, delta=-1))

        async def all_closed() -> bool:  # (the lobby entry goes before the room's actor)
            return not (await backend.lobby(None, 100, None)).rooms and not backend.rooms_here()

        await eventually(all_closed, "the deserted room's close")


async def test_an_unknown_room_is_no_such_room(
    kind: str, redis_factory: Callable[[], RedisServer]
) -> None:
    async with running(kind, redis_factory) as backend:
        with pytest.raises(errors.NoSuchRoomError):
            await backend.call("nope", LegalCmd(seat=None))
        assert await backend.record("nope") is None


async def test_commands_run_in_order_and_their_messages_reach_the_hub_in_seq_order(
    kind: str, redis_factory: Callable[[], RedisServer]
) -> None:
    async with running(kind, redis_factory) as backend:
        room = (await backend.create(spec())).room
        listener = Listener()
        backend.hub.add(room, listener)
        await backend.subscribe(room)
        assert await backend.call(room, JoinCmd(name="Ada", seat=None, nonce="a")) == 0
        assert await backend.call(room, JoinCmd(name="Bo", seat=None, nonce="b")) == 1
        with pytest.raises(errors.NotStartedError):
            await backend.call(room, LegalCmd(seat=0))
        with pytest.raises(errors.SeatTakenError):
            await backend.call(room, JoinCmd(name="Cy", seat=1, nonce="c"))
        await backend.call(room, StartCmd(seat=0))
        await eventually(lambda: any(isinstance(m, Window) for m in listener.got), "a window")
        seqs = [m.seq for m in listener.got]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "gaps or reordering"
        sync = await backend.call(room, SyncCmd(seat=0, last_seq=seqs[0] - 1))
        assert sync.messages is not None
        assert [m.seq for m in sync.messages] == seqs[: len(sync.messages)]
        fresh = await backend.call(room, SyncCmd(seat=0))
        assert isinstance(fresh.snapshot, Snapshot) and fresh.snapshot.seat == 0
        stats = backend.stats()
        assert stats["rooms"] >= 1 and stats["rooms_playing"] == 1 and stats["seats_taken"] == 2


async def test_a_game_played_through_call_ends_with_a_record_that_replays(
    kind: str, redis_factory: Callable[[], RedisServer]
) -> None:
    async with running(kind, redis_factory) as backend:
        room = (await backend.create(spec("qwinto"))).room
        listener = Listener()
        backend.hub.add(room, listener)
        await backend.subscribe(room)
        for seat, name in enumerate(("Ada", "Bo")):
            await backend.call(room, JoinCmd(name=name, seat=seat, nonce=name))
        await backend.call(room, StartCmd(seat=0))
        rng = Random(kind)
        for _ in range(2_000):
            if any(isinstance(m, GameOver) for m in listener.got):
                break
            window, acted = await _act_once(backend, room, rng)
            assert acted or window is None
        over = next(m for m in listener.got if isinstance(m, GameOver))
        record = await backend.record(room)
        assert record is not None
        replayed = replay(record)
        assert replayed.verified is True and replayed.state.scores() == over.scores


async def _act_once(backend: Backend, room: str, rng: Random) -> tuple[int | None, bool]:
    """One legal action of some seat that may act now (both seats are ours)."""
    for seat in (0, 1):
        window, actions, _ = await backend.call(room, LegalCmd(seat=seat, view=False))
        if actions:
            answer: Any = await backend.call(
                room, ActCmd(seat=seat, action=rng.choice(actions), window=window)
            )
            assert answer[0] == window
            return window, True
    return None, False
