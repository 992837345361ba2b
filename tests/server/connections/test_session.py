"""Sessions with an in-memory sink: the real server parts (backend, room actors, hub,
house bots), no sockets.

The sink records what a connection would have written, as message objects, so each test
can check a member's whole stream: one reply per request, then a snapshot or the missed
messages, then live ones, without a gap or a duplicate, however commands interleave.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Sequence
from typing import Any

import msgspec
import pytest

from dicehall.protocol import errors
from dicehall.protocol.features import LEGAL_IN_WINDOW
from dicehall.protocol.messages import client as requests
from dicehall.protocol.messages.client import CLIENT_MESSAGES
from dicehall.protocol.messages.common import Action
from dicehall.protocol.messages.server import (
    Chat,
    Event,
    GameOver,
    Progress,
    RoomMessage,
    RoomUpdate,
    ServerMessage,
    Snapshot,
    Window,
)
from dicehall.server.connections.session import HANDLERS, Session
from dicehall.server.edge.process import Server
from dicehall.server.edge.settings import Config
from dicehall.server.rooms.outgoing import Outgoing


@contextlib.asynccontextmanager
async def running() -> AsyncIterator[Server]:
    """The process-wide parts of a server, started in this event loop."""
    server = Server(Config(secret=b"0123456789abcdef0123456789abcdef"))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


class Member:
    """A session and its sink: replies and messages, in the order they were produced."""

    def __init__(self, server: Server) -> None:
        self.out: list[Any] = []
        self.session = Session(server.services, self)
        self._ids = itertools.count(1)
        self.over = asyncio.Event()

    # --- Sink -----------------------------------------------------------------------------

    def reply(self, request_id: int, result: msgspec.Struct) -> None:
        self.out.append(("reply", request_id, result))

    def fail(self, request_id: int, error: errors.ProtocolError) -> None:
        self.out.append(("fail", request_id, error))

    def message(self, message: ServerMessage) -> None:
        self._got(message)

    def room(self, outgoing: Sequence[Outgoing], seat: int | None) -> None:
        for out in outgoing:
            self._got(out.for_seat(seat))

    def replaced(self, room: str) -> None:
        self.out.append(("replaced", room))

    def _got(self, message: ServerMessage) -> None:
        self.out.append(message)
        if isinstance(message, GameOver):
            self.over.set()

    # --- requests ---------------------------------------------------------------------------

    async def ask(self, kind: type[requests.Request], **fields: Any) -> Any:
        """Handle one request; exactly one answer comes out: its result, or it raises."""
        rid = next(self._ids)
        await self.session.handle(kind(id=rid, **fields))
        answers = [a for a in self.out if isinstance(a, tuple) and a[1] == rid]
        assert len(answers) == 1, f"{len(answers)} answers to request {rid}"
        what, _, value = answers[0]
        if what == "fail":
            raise value
        return value

    def stream(self, room: str, since: int = 0) -> list[RoomMessage]:
        return [m for m in self.out[since:] if isinstance(m, RoomMessage) and m.room == room]

    def position_of_reply(self, rid: int) -> int:
        return next(i for i, a in enumerate(self.out) if isinstance(a, tuple) and a[1] == rid)


def contiguous(stream: list[RoomMessage]) -> list[int]:
    """The seqs after a leading snapshot; asserts they go up by one, no gap, no repeat."""
    assert isinstance(stream[0], Snapshot)
    numbers = [m.seq for m in stream[1:]]
    assert numbers == list(range(stream[0].seq + 1, stream[0].seq + 1 + len(numbers)))
    assert not any(isinstance(m, Snapshot) for m in stream[1:])
    return numbers


async def hello(
    server: Server,
    name: str = "p",
    tokens: list[str] | None = None,
    features: tuple[str, ...] = (),
) -> Member:
    member = Member(server)
    await member.ask(
        requests.Hello, client="test", name=name, tokens=tokens or [], features=list(features)
    )
    return member


async def create(host: Member, game: str, seats: int, **fields: Any) -> str:
    result = await host.ask(requests.Create, game=game, seats=seats, public=False, **fields)
    room: str = result.room.room
    return room


PASS = {"type": "pass"}


def act(action: dict[str, Any]) -> Action:
    return msgspec.convert(action, Action)


# --- catching up while the room moves --------------------------------------------------------


async def test_concurrent_joins_each_get_a_snapshot_then_every_later_message() -> None:
    async with running() as server:
        host = await hello(server)
        room = await create(host, "qwinto", 4, autostart=True)
        members = [await hello(server, f"p{i}") for i in range(4)]
        await asyncio.gather(*(m.ask(requests.Join, room=room) for m in members))
        ends = set()
        seats = set()
        statuses = set()
        for m in members:
            stream = m.stream(room)
            join_id = 2  # after hello
            assert m.position_of_reply(join_id) < m.out.index(stream[0]), "reply, then snapshot"
            numbers = contiguous(stream)
            snapshot = stream[0]
            assert isinstance(snapshot, Snapshot)
            ends.add((numbers or [snapshot.seq])[-1])
            seats.add(snapshot.seat)
            statuses.add(snapshot.info.status)
        assert len(ends) == 1, "every member is at the room's latest message"
        assert seats == {0, 1, 2, 3}
        assert "playing" in statuses, "the last one in saw the game started"


async def test_spectators_arriving_mid_game_miss_nothing_and_see_nothing_twice() -> None:
    """House bots play a Yamb game as fast as they can while spectators keep arriving."""
    async with running() as server:
        host = await hello(server)
        room = await create(host, "yamb", 4)
        await host.ask(requests.AddBots, room=room)
        await host.ask(requests.Start, room=room)
        watchers = []
        for _ in range(8):
            for _ in range(40):
                await asyncio.sleep(0)  # let the bots move between arrivals
            w = await hello(server)
            await w.ask(requests.Spectate, room=room)
            watchers.append(w)
        for w in watchers:
            await asyncio.wait_for(w.over.wait(), 30)
        started = [w.stream(room)[0].seq for w in watchers]
        assert len(set(started)) > 4, "the spectators arrived at different moments"
        for w in watchers:
            numbers = contiguous(w.stream(room))
            over = next(m for m in w.stream(room) if isinstance(m, GameOver))
            assert over.seq in numbers


# --- resume ----------------------------------------------------------------------------------


async def seated_pair(server: Server) -> tuple[Member, Member, str, str]:
    """Ada (seat 0, with her token) and Bo (seat 1) in a started Qwixx room."""
    ada = await hello(server, "Ada")
    bo = await hello(server, "Bo")
    room = await create(ada, "qwixx", 2, turn_window=600)
    token = (await ada.ask(requests.Join, room=room)).token
    await bo.ask(requests.Join, room=room)
    await ada.ask(requests.Start, room=room)
    return ada, bo, room, token


async def test_resume_sends_exactly_the_missed_messages_then_live_ones() -> None:
    async with running() as server:
        ada, bo, room, token = await seated_pair(server)
        last_seq = ada.stream(room)[-1].seq
        await ada.session.disconnected()
        for i in range(3):
            await bo.ask(requests.SendChat, room=room, text=f"missed {i}")

        back = await hello(server, "Ada", [token])
        held = back.out[0][2]
        assert [(s.room, s.seat) for s in held.seats] == [(room, 0)] and held.rejected == []
        await bo.ask(requests.SendChat, room=room, text="before the resume")
        assert back.stream(room) == [], "a seat taken back waits for its resume"
        with pytest.raises(errors.NotSeatedError):
            await back.ask(requests.Legal, room=room)

        mark = len(back.out)
        resumed = await back.ask(requests.Resume, room=room, last_seq=last_seq)
        assert resumed.mode == "events"
        caught = back.stream(room, mark)
        assert [m.seq for m in caught[: resumed.seq - last_seq]] == list(
            range(last_seq + 1, resumed.seq + 1)
        )
        texts = [m.text for m in caught if isinstance(m, Chat)]
        assert texts == ["missed 0", "missed 1", "missed 2", "before the resume"]
        presence = [m for m in caught if isinstance(m, RoomUpdate)]
        assert [u.info.seats[0].connected for u in presence] == [False, True]
        await bo.ask(requests.SendChat, room=room, text="live")
        whole = ada.stream(room) + back.stream(room)
        assert contiguous(whole)[-1] == whole[-1].seq
        assert isinstance(whole[-1], Chat) and whole[-1].text == "live"
        legal = await back.ask(requests.Legal, room=room)
        assert legal.view["you"] == 0


async def test_resume_after_the_log_moved_on_sends_a_snapshot() -> None:
    async with running() as server:
        ada, bo, room, token = await seated_pair(server)
        last_seq = ada.stream(room)[-1].seq
        await ada.session.disconnected()
        for i in range(1100):  # more than a room keeps
            await bo.ask(requests.SendChat, room=room, text=f"line {i}")
        back = await hello(server, "Ada", [token])
        mark = len(back.out)
        resumed = await back.ask(requests.Resume, room=room, last_seq=last_seq)
        assert resumed.mode == "snapshot"
        caught = back.stream(room, mark)
        assert isinstance(caught[0], Snapshot) and caught[0].seq == resumed.seq
        assert caught[0].seat == 0 and caught[0].info.status == "playing"
        assert contiguous(caught) == []
        assert caught[0].info.seats[0].connected, "connected again since `hello`"

        future = await back.ask(requests.Resume, room=room, last_seq=resumed.seq + 50)
        assert future.mode == "snapshot"


async def test_a_connected_member_may_resume_to_fill_a_gap() -> None:
    async with running() as server:
        ada, bo, room, _ = await seated_pair(server)
        for i in range(3):
            await bo.ask(requests.SendChat, room=room, text=f"{i}")
        seq = ada.stream(room)[-1].seq
        mark = len(ada.out)
        resumed = await ada.ask(requests.Resume, room=room, last_seq=seq - 3)
        assert (resumed.mode, resumed.seq) == ("events", seq)
        await bo.ask(requests.SendChat, room=room, text="next")
        assert [m.seq for m in ada.stream(room, mark)] == [seq - 2, seq - 1, seq, seq + 1]


async def test_hello_takes_back_only_seats_its_tokens_prove() -> None:
    async with running() as server:
        _, bo, room, token = await seated_pair(server)
        other = await create(bo, "qwixx", 2)
        forged = [
            "garbage",
            token[:-1] + ("A" if token[-1] != "A" else "B"),
            token.replace(room, other),
        ]
        thief = await hello(server, "T", [*forged, token])
        result = thief.out[0][2]
        assert result.rejected == [0, 1, 2]
        assert [(s.room, s.seat) for s in result.seats] == [(room, 0)]
        with pytest.raises(errors.NotInRoomError):
            await thief.ask(requests.Resume, room=other, last_seq=0)


async def test_hello_takes_the_seat_at_once_and_lists_it_once() -> None:
    """docs/protocol.md: `hello.tokens` takes the seats back; `resume` only starts the
    stream. The old connection is replaced at `hello`, and cannot act from then on."""
    async with running() as server:
        ada, _, room, token = await seated_pair(server)
        again = await hello(server, "Ada", [token, token])
        result = again.out[0][2]
        assert [(s.room, s.seat) for s in result.seats] == [(room, 0)], "listed once"
        assert result.rejected == [1], "one seat per room and connection"
        assert ("replaced", room) in ada.out, "replaced at hello, before any resume"
        with pytest.raises(errors.NotInRoomError):
            await ada.ask(requests.Legal, room=room)
        with pytest.raises(errors.NotSeatedError):
            await again.ask(requests.Legal, room=room)  # resume first
        await again.ask(requests.Resume, room=room, last_seq=0)
        assert (await again.ask(requests.Legal, room=room)).view["you"] == 0


# --- membership ------------------------------------------------------------------------------


async def test_a_spectator_whose_join_fails_keeps_watching() -> None:
    async with running() as server:
        _, bo, room, _ = await seated_pair(server)
        watcher = await hello(server, "W")
        await watcher.ask(requests.Spectate, room=room)
        with pytest.raises(errors.AlreadyStartedError):
            await watcher.ask(requests.Join, room=room)
        await bo.ask(requests.SendChat, room=room, text="still there?")
        await watcher.ask(requests.SendChat, room=room, text="yes")
        last = watcher.stream(room)[-2:]
        assert [m.text for m in last if isinstance(m, Chat)] == ["still there?", "yes"]
        contiguous(watcher.stream(room))


async def test_leaving_stops_the_stream_and_strangers_get_not_in_room() -> None:
    async with running() as server:
        _, bo, room, _ = await seated_pair(server)
        watcher = await hello(server, "W")
        await watcher.ask(requests.Spectate, room=room)
        await watcher.ask(requests.Leave, room=room)
        count = len(watcher.stream(room))
        await bo.ask(requests.SendChat, room=room, text="gone?")
        assert len(watcher.stream(room)) == count
        for kind, fields in (
            (requests.SendChat, {"text": "hi"}),
            (requests.Leave, {}),
            (requests.Legal, {}),
            (requests.Act, {"action": act({"type": "pass"})}),
        ):
            with pytest.raises(errors.NotInRoomError):
                await watcher.ask(kind, room=room, **fields)
        await watcher.ask(requests.Spectate, room=room)
        with pytest.raises(errors.NotSeatedError):
            await watcher.ask(requests.Act, room=room, action=act({"type": "pass"}))


async def test_disconnecting_shows_the_seat_as_gone_and_keeps_it() -> None:
    async with running() as server:
        ada, bo, room, _ = await seated_pair(server)
        await ada.session.disconnected()
        update = bo.stream(room)[-1]
        assert isinstance(update, RoomUpdate)
        assert (update.info.seats[0].kind, update.info.seats[0].connected) == ("human", False)
        intruder = await hello(server, "I")
        with pytest.raises(errors.AlreadyStartedError):
            await intruder.ask(requests.Join, room=room, seat=0)


# --- the host --------------------------------------------------------------------------------


async def test_only_the_host_starts_and_adds_bots_and_everyone_sees_the_role_pass() -> None:
    async with running() as server:
        ada, bo, cy = [await hello(server, n) for n in ("Ada", "Bo", "Cy")]
        room = await create(ada, "qwixx", 4)
        await bo.ask(requests.Join, room=room)  # a stranger sits first: the creator still hosts
        for refused in (requests.Start, requests.AddBots):
            with pytest.raises(errors.ForbiddenError, match="host"):
                await bo.ask(refused, room=room)
        assert (await ada.ask(requests.Join, room=room)).seat == 1
        await cy.ask(requests.Join, room=room)
        with pytest.raises(errors.ForbiddenError, match="seat 1"):
            await bo.ask(requests.AddBots, room=room)
        await ada.session.disconnected()  # the host's connection goes: Cy is next
        update = bo.stream(room)[-1]
        assert isinstance(update, RoomUpdate) and update.info.host == 2
        assert cy.stream(room)[-1] == update
        with pytest.raises(errors.ForbiddenError):
            await bo.ask(requests.AddBots, room=room)
        assert (await cy.ask(requests.AddBots, room=room)).seats == [3]
        await cy.ask(requests.Start, room=room)


async def test_a_creator_who_never_sits_hands_over_when_its_connection_closes() -> None:
    async with running() as server:
        ada, bo = await hello(server, "Ada"), await hello(server, "Bo")
        room = await create(ada, "qwixx", 2)
        await bo.ask(requests.Join, room=room, seat=1)
        with pytest.raises(errors.ForbiddenError):
            await bo.ask(requests.AddBots, room=room)
        await ada.session.disconnected()
        update = bo.stream(room)[-1]
        assert isinstance(update, RoomUpdate) and update.info.host == 1
        assert (await bo.ask(requests.AddBots, room=room)).seats == [0]
        await bo.ask(requests.Start, room=room)


async def test_house_bots_play_through_the_same_sessions() -> None:
    async with running() as server:
        ada = await hello(server, "Ada")
        room = await create(ada, "qwixx", 3)
        await ada.ask(requests.Spectate, room=room)
        assert (await ada.ask(requests.AddBots, room=room, count=3)).seats == [0, 1, 2]
        assert len(server.bots) >= 3
        await ada.ask(requests.Start, room=room)
        await asyncio.wait_for(ada.over.wait(), 30)
        contiguous(ada.stream(room))
        assert all(bot.errors == 0 for (r, _), bot in server.bots.items() if r == room)
        final = ada.stream(room)[-1]
        assert isinstance(final, RoomUpdate) and final.info.status == "over"


async def test_a_spectator_that_sits_down_stops_counting_as_a_spectator() -> None:
    async with running() as server:
        host = await hello(server, "H")
        room = await create(host, "qwixx", 2)
        member = await hello(server, "M")
        await member.ask(requests.Spectate, room=room)
        await host.ask(requests.AddBots, room=room, count=1)
        watched = member.stream(room)
        mark = len(member.out)
        assert (await member.ask(requests.Join, room=room)).seat == 1
        snapshot = member.stream(room, mark)[0]
        assert isinstance(snapshot, Snapshot) and snapshot.seat == 1
        assert snapshot.info.spectators == 0
        assert watched[-1].seq <= snapshot.seq, "the seat's snapshot takes over, no gap"
        await member.ask(requests.Leave, room=room)
        with pytest.raises(errors.NotInRoomError):
            await member.ask(requests.SendChat, room=room, text="hi")


async def test_a_token_takes_the_seat_over_from_a_live_connection() -> None:
    async with running() as server:
        ada, bo, room, token = await seated_pair(server)
        again = await hello(server, "Ada", [token])
        last = ada.stream(room)[-1].seq
        await again.ask(requests.Resume, room=room, last_seq=last)
        assert ("replaced", room) in ada.out
        count = len(ada.stream(room))
        await bo.ask(requests.SendChat, room=room, text="who is there?")
        assert len(ada.stream(room)) == count, "the replaced connection gets nothing more"
        with pytest.raises(errors.NotInRoomError):
            await ada.ask(requests.Legal, room=room)
        assert (await again.ask(requests.Legal, room=room)).view["you"] == 0
        updates = [m for m in bo.stream(room) if isinstance(m, RoomUpdate)]
        assert all(u.info.seats[0].connected for u in updates), "the seat never looked empty"
        await ada.session.disconnected()  # the old socket closing later changes nothing
        assert isinstance(bo.stream(room)[-1], Chat)


async def test_leaving_twice_at_once_lets_go_of_everything_exactly_once() -> None:
    """A connection cut off for reading too slowly leaves at once, and again when its
    socket closes; the two may overlap."""
    async with running() as server:
        ada, bo, room, _ = await seated_pair(server)
        other = await create(bo, "qwixx", 2)
        stays = await hello(server, "S")
        await stays.ask(requests.Spectate, room=other)
        await ada.ask(requests.Spectate, room=other)
        mark = len(bo.out)
        await asyncio.gather(ada.session.disconnected(), ada.session.disconnected())
        updates = [m for m in bo.stream(room, mark) if isinstance(m, RoomUpdate)]
        assert [u.info.seats[0].connected for u in updates] == [False]
        late = await hello(server, "L")
        await late.ask(requests.Spectate, room=other)
        snapshot = late.stream(other)[0]
        assert isinstance(snapshot, Snapshot) and snapshot.info.spectators == 2  # S and L


async def test_finished_games_do_not_count_against_the_rooms_a_connection_may_host() -> None:
    async with running() as server:
        limit = server.services.settings.max_rooms_per_session
        ada = await hello(server, "Ada")
        for _ in range(limit + 2):  # one game after the other, as a bot that plays all day
            room = await create(ada, "qwixx", 1)
            await ada.ask(requests.Join, room=room)
            ada.over.clear()
            await ada.ask(requests.Start, room=room)
            while not ada.over.is_set():
                legal = await ada.ask(requests.Legal, room=room)
                if legal.actions:
                    with contextlib.suppress(errors.ProtocolError):  # the window may close first
                        await ada.ask(requests.Act, room=room, action=act(legal.actions[-1]))
                await asyncio.sleep(0)
        for _ in range(limit):  # rooms still open do count
            await create(ada, "qwixx", 2)
        with pytest.raises(errors.TooManyRoomsError, match="too many rooms"):
            await create(ada, "qwixx", 2)


async def test_legal_leaves_the_view_out_only_with_the_feature() -> None:
    async with running() as server:
        ada = await hello(server, "Ada")
        lean = Member(server)
        result = await lean.ask(
            requests.Hello, client="bot", name="Bo", tokens=[], features=["legal_without_view"]
        )
        assert result.features == ["legal_without_view"]
        room = await create(ada, "qwixx", 2, turn_window=600)
        await ada.ask(requests.Join, room=room)
        await lean.ask(requests.Join, room=room)
        await ada.ask(requests.Start, room=room)
        seq = ada.stream(room)[-1].seq

        with pytest.raises(errors.InvalidMessageError, match="legal_without_view"):
            await ada.ask(requests.Legal, room=room, view=False)
        full = await lean.ask(requests.Legal, room=room)
        bare = await lean.ask(requests.Legal, room=room, view=False)
        assert bare.view is None and isinstance(full.view, dict) and full.view["you"] == 1
        assert (bare.window, bare.actions) == (full.window, full.actions) and bare.actions
        assert ada.stream(room)[-1].seq == seq, "asking changes nothing"


async def test_windows_bring_the_legal_actions_only_to_the_seat_whose_holder_asked() -> None:
    """`legal_in_window`: the copy of each `window` for a seat whose holder asked carries
    its legal actions; the other seats and spectators get the plain one, same seq."""
    async with running() as server:
        ada = await hello(server, "Ada")
        given = await hello(server, "Bo", features=(LEGAL_IN_WINDOW,))
        assert given.out[0][2].features == [LEGAL_IN_WINDOW]
        watcher = await hello(server, "W", features=(LEGAL_IN_WINDOW,))
        room = await create(ada, "qwixx", 2, turn_window=600)
        await ada.ask(requests.Join, room=room)
        await given.ask(requests.Join, room=room)
        await watcher.ask(requests.Spectate, room=room)
        await ada.ask(requests.Start, room=room)

        [mine] = [m for m in given.stream(room) if isinstance(m, Window)]
        [plain] = [m for m in ada.stream(room) if isinstance(m, Window)]
        [watched] = [m for m in watcher.stream(room) if isinstance(m, Window)]
        assert mine.seq == plain.seq == watched.seq
        assert plain.legal is None and watched.legal is None
        asked = await given.ask(requests.Legal, room=room)
        assert mine.legal == asked.actions and mine.legal, "the list a `legal` gives"
        assert (await ada.ask(requests.Legal, room=room)).actions != [], "ada may act too"


async def test_the_actions_go_live_only_a_resume_replays_the_plain_window() -> None:
    """The legal actions are not kept in the room's log (docs/protocol.md): a seat taken
    back and resumed from before the window gets the window without them."""
    async with running() as server:
        ada = await hello(server, "Ada")
        given = await hello(server, "Bo", features=(LEGAL_IN_WINDOW,))
        room = await create(ada, "qwixx", 2, turn_window=600)
        await ada.ask(requests.Join, room=room)
        token = (await given.ask(requests.Join, room=room)).token
        await ada.ask(requests.Start, room=room)
        [live] = [m for m in given.stream(room) if isinstance(m, Window)]
        back = await hello(server, "Bo", [token], (LEGAL_IN_WINDOW,))
        await back.ask(requests.Resume, room=room, last_seq=live.seq - 1)
        [replayed] = [m for m in back.stream(room) if isinstance(m, Window)]
        assert live.legal and replayed.seq == live.seq and replayed.legal is None


async def test_an_act_reply_that_owes_more_brings_the_next_legal_actions() -> None:
    """A Yamb turn: each `act` reply that still owes something lists what comes next;
    without the feature it lists nothing (a `legal` request tells)."""
    async with running() as server:
        ada = await hello(server, "Ada")
        given = await hello(server, "Bo", features=(LEGAL_IN_WINDOW,))
        room = await create(ada, "yamb", 2, turn_window=600)
        await given.ask(requests.Join, room=room)
        await ada.ask(requests.Join, room=room)
        await ada.ask(requests.Start, room=room)
        [window] = [m for m in given.stream(room) if isinstance(m, Window)]
        assert [a.seat for a in window.actors] == [0] and window.legal
        acted = await given.ask(
            requests.Act, room=room, window=window.window, action=act({"type": "roll", "hold": []})
        )
        assert acted.owes and acted.legal == (await given.ask(requests.Legal, room=room)).actions
        write = next(a for a in acted.legal if a["type"] == "write")
        done = await given.ask(requests.Act, room=room, window=window.window, action=act(write))
        assert done.owes == [] and done.legal is None, "its part is done: nothing to list"
        [turn] = [m for m in ada.stream(room) if isinstance(m, Window)][-1:]
        assert [a.seat for a in turn.actors] == [1] and turn.legal is None
        rolled = await ada.ask(
            requests.Act, room=room, window=turn.window, action=act({"type": "roll", "hold": []})
        )
        assert rolled.owes and rolled.legal is None, "ada did not ask for the feature"


async def test_the_wish_goes_with_the_seat_to_whoever_takes_it_back() -> None:
    """A seat token taken back by a connection without the feature: its windows come
    plain; taken back again with it, they carry the actions again."""
    async with running() as server:
        ada = await hello(server, "Ada")
        first = await hello(server, "Bo", features=(LEGAL_IN_WINDOW,))
        room = await create(ada, "qwinto", 2, turn_window=600)
        token = (await first.ask(requests.Join, room=room)).token
        await ada.ask(requests.Join, room=room)
        await ada.ask(requests.Start, room=room)
        [window] = [m for m in first.stream(room) if isinstance(m, Window)]
        assert window.legal, "seat 0 chooses its dice"
        plain = await hello(server, "Bo", [token])
        await plain.ask(requests.Resume, room=room, last_seq=0)
        given = await hello(server, "Bo", [token], (LEGAL_IN_WINDOW,))
        await given.ask(requests.Resume, room=room, last_seq=window.seq)
        choice = next(a for a in window.legal if a["type"] == "roll")
        await given.ask(requests.Act, room=room, window=window.window, action=act(choice))
        [answer] = [m for m in given.stream(room) if isinstance(m, Window)]
        assert answer.legal is not None and {"type": "pass"} in answer.legal
        plain = await hello(server, "Bo", [token])
        await plain.ask(requests.Resume, room=room, last_seq=answer.seq)
        for member in (plain, ada):  # both pass the answer window; seat 1 rolls next
            await member.ask(requests.Act, room=room, window=answer.window, action=act(PASS))
        [turn] = [m for m in ada.stream(room) if isinstance(m, Window)][-1:]
        assert [a.seat for a in turn.actors] == [1]
        roll = next(a for a in (await ada.ask(requests.Legal, room=room)).actions)
        await ada.ask(requests.Act, room=room, window=turn.window, action=act(roll))
        [again] = [m for m in plain.stream(room) if isinstance(m, Window)][-1:]
        assert 0 in [a.seat for a in again.actors] and again.legal is None, "plain again"


# --- answers kept back, and the `progress` feature -------------------------------------------


async def test_a_shared_windows_answers_show_when_it_resolves_and_progress_shows_them() -> None:
    """Qwixx's white window: an answer that leaves it open is numbered and sent only when it
    resolves; members who asked for `progress` hear who answered at once, the others not."""
    async with running() as server:
        ada, bo, cy = [await hello(server, n) for n in ("Ada", "Bo", "Cy")]
        eager = Member(server)
        result = await eager.ask(
            requests.Hello, client="t", name="Di", tokens=[], features=["progress"]
        )
        assert result.features == ["progress"]
        watcher = Member(server)
        await watcher.ask(requests.Hello, client="t", name="W", tokens=[], features=["progress"])
        room = await create(ada, "qwixx", 4, turn_window=600)
        for m in (ada, bo, cy, eager):
            await m.ask(requests.Join, room=room)
        await watcher.ask(requests.Spectate, room=room)
        await ada.ask(requests.Start, room=room)
        legal = await ada.ask(requests.Legal, room=room)
        window, seq = legal.window, ada.stream(room)[-1].seq
        marks = [len(m.out) for m in (ada, eager, watcher)]

        await bo.ask(requests.Act, room=room, window=window, action=act({"type": "pass"}))
        await eager.ask(requests.Act, room=room, window=window, action=act({"type": "pass"}))
        assert ada.stream(room, marks[0]) == [], "nothing is shown before the window resolves"
        for member, mark in zip((eager, watcher), marks[1:], strict=True):
            hints = [m for m in member.stream(room, mark) if isinstance(m, Progress)]
            assert [(p.seq, p.window, p.answered) for p in hints] == [
                (seq, window, [1]),
                (seq, window, [1, 3]),
            ]
        assert ada.stream(room)[-1].seq == seq, "a hint takes no number"
        view = (await ada.ask(requests.Legal, room=room)).view
        assert view["answered"] == [1, 3] and view["actors"] == [0, 2]

        await cy.ask(requests.Act, room=room, window=window, action=act({"type": "pass"}))
        await ada.ask(requests.Act, room=room, window=window, action=act({"type": "pass"}))
        after = ada.stream(room, marks[0])
        assert [m.seq for m in after] == list(range(seq + 1, seq + 1 + len(after)))
        answered = [m.event["seat"] for m in after if isinstance(m, Event)][:4]
        assert answered == [1, 3, 2, 0], "in the order the answers came"
        assert [m.event["type"] for m in after[:4] if isinstance(m, Event)] == ["answered"] * 4
        assert not any(isinstance(m, Progress) for m in ada.out), "not asked for, never sent"
        # the numbered stream is the same for everyone
        numbered = [m for m in watcher.stream(room, marks[2]) if not isinstance(m, Progress)]
        assert [m.seq for m in numbered] == [m.seq for m in after]


async def test_a_resume_ends_with_the_progress_of_the_open_window() -> None:
    async with running() as server:
        ada = Member(server)
        await ada.ask(requests.Hello, client="t", name="Ada", tokens=[], features=["progress"])
        bo, cy = await hello(server, "Bo"), await hello(server, "Cy")
        room = await create(ada, "qwixx", 3, turn_window=600)
        token = (await ada.ask(requests.Join, room=room)).token
        await bo.ask(requests.Join, room=room)
        await cy.ask(requests.Join, room=room)
        await ada.ask(requests.Start, room=room)
        last_seq = ada.stream(room)[-1].seq
        window = (await bo.ask(requests.Legal, room=room)).window
        await ada.session.disconnected()
        await bo.ask(requests.Act, room=room, window=window, action=act({"type": "pass"}))

        back = Member(server)
        await back.ask(
            requests.Hello, client="t", name="Ada", tokens=[token], features=["progress"]
        )
        mark = len(back.out)
        resumed = await back.ask(requests.Resume, room=room, last_seq=last_seq)
        caught = back.stream(room, mark)
        assert resumed.mode == "events" and isinstance(caught[-1], Progress)
        assert (caught[-1].seq, caught[-1].answered) == (resumed.seq, [1])


def test_every_request_of_the_protocol_has_one_handler() -> None:
    """The request table is the protocol's list of requests, no more and no less."""
    assert set(HANDLERS) == set(CLIENT_MESSAGES)
