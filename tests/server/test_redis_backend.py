"""The Redis backend with two servers' parts in one event loop and one real Redis.

Each `Server` here is what one `dicehall serve --redis` process runs (its own process id,
hub, sessions, house bots and Redis connections), without the sockets: the sessions'
sinks record every message, so each test checks whole streams. Real processes (kill -9,
SIGTERM, Redis trouble, a cluster) are in tests/e2e.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
import redis

from dicehall.protocol import errors
from dicehall.protocol.messages import client as requests
from dicehall.protocol.messages.server import (
    Chat,
    Event,
    GameOver,
    Progress,
    RoomUpdate,
    ServerMessage,
    Window,
    WindowClosed,
)
from dicehall.server.backends.redis import RedisBackend
from dicehall.server.backends.redis.keys import (
    HISTORY_WAITING,
    LOBBY,
    SECRET,
    command_channel,
    event_channel,
    journal_key,
    lease_key,
    log_key,
    record_key,
    record_log_key,
    reply_channel,
    snap_key,
)
from dicehall.server.edge.process import Server
from dicehall.server.edge.settings import Config
from dicehall.server.hosting.store import Release
from dicehall.server.rooms import snapshot
from dicehall.server.rooms.room import RoomCore
from tests.support.redis import (
    RedisServer,
    committed_log,
    committed_seq,
    lease_owner,
    running_redis,
    snapshot_seq,
)
from tests.support.wait import eventually

from .connections.test_session import Member, act, contiguous, create, hello


@pytest.fixture
def db(redis_server: RedisServer) -> tuple[str, redis.Redis]:
    db = redis_server.fresh_db()
    return redis_server.url_db(db), redis_server.client(db)


@contextlib.asynccontextmanager
async def processes(
    url: str, n: int = 2, lease_ms: int = 2000, **settings: Any
) -> AsyncIterator[list[Server]]:
    """`n` servers sharing Redis at `url`; the token secret comes from Redis, as in
    production (no DICEHALL_SECRET)."""
    servers = [Server(Config(redis=url, lease_ms=lease_ms, **settings)) for _ in range(n)]
    started: list[Server] = []
    try:
        for server in servers:
            await server.start()
            started.append(server)
        yield servers
    finally:
        for server in reversed(started):
            await server.stop()


def backend(server: Server) -> RedisBackend:
    assert isinstance(server.backend, RedisBackend)
    return server.backend


class Seated(Member):
    """A member that hears of each message it gets, to answer its turns."""

    def __init__(self, server: Server) -> None:
        super().__init__(server)
        self.changed = asyncio.Event()

    def _got(self, message: ServerMessage) -> None:
        super()._got(message)
        self.changed.set()


async def seated(server: Server, name: str) -> Seated:
    member = Seated(server)
    await member.ask(requests.Hello, client="test", name=name, tokens=[])
    return member


async def play(m: Seated, room: str) -> None:
    """After each message, answer the open window with the first legal action, until the
    game is over."""
    while not m.over.is_set():
        await asyncio.wait_for(m.changed.wait(), 30)
        m.changed.clear()
        try:
            legal = await m.ask(requests.Legal, room=room)
        except errors.GameOverError:
            return
        if legal.window is not None and legal.actions:
            with contextlib.suppress(errors.WindowClosedError, errors.NotYourTurnError):
                await m.ask(
                    requests.Act, room=room, action=act(legal.actions[0]), window=legal.window
                )


async def test_a_room_lives_in_redis_lease_log_snapshot_and_lobby(
    db: tuple[str, redis.Redis],
) -> None:
    url, r = db
    async with processes(url) as (a, b):
        host = await hello(a, "Ada")
        room = (await host.ask(requests.Create, game="qwixx", seats=2, name="pub")).room.room
        assert lease_owner(r, room) == backend(a).proc
        assert 0 < r.pttl(lease_key(room)) <= 2000
        assert backend(a).stats()["rooms"] == 1 and backend(b).stats()["rooms"] == 0

        # The lobby is one: the room B lists is the room A runs.
        listed = await (await hello(b)).ask(requests.Rooms)
        assert [i.room for i in listed.rooms] == [room]

        await host.ask(requests.Spectate, room=room)
        await host.ask(requests.AddBots, room=room)
        await host.ask(requests.Start, room=room)
        await asyncio.wait_for(host.over.wait(), 30)

        # Every message the host got is in the log under its seq, as it saw it; the
        # snapshot is the room as of the last one, and reloads to the same room.
        log = committed_log(r, room)
        stream = host.stream(room)
        assert contiguous(stream)[-1] == max(log)
        assert all(m == log[m.seq].for_seat(None) for m in stream[1:])
        core = backend(a).local_room(room)
        assert core is not None
        saved = snapshot.decode(r.get(snap_key(room)))
        loaded = RoomCore.restore(saved, record_log=r.get(record_log_key(room)), presence=True)
        assert loaded.save() == core.save()  # (the game's end writes one)
        assert loaded.record == core.record  # its log was appended to, commit by commit
        assert loaded.seq == max(log)
        # A game over leaves the lobby; its record stays, readable from every process.
        assert r.hget(LOBBY, room) is None
        over = next(m for m in stream if isinstance(m, GameOver))
        for server in (a, b):
            record = await server.backend.record(room)
            assert record is not None and record["seed"] == over.seed


async def test_another_process_forwards_commands_and_listens_once_per_room(
    db: tuple[str, redis.Redis],
) -> None:
    url, r = db
    async with processes(url) as (a, b):
        host = await seated(a, "Ada")
        room = await create(host, "qwinto", 3)
        await host.ask(requests.Join, room=room)
        # Two seats and a spectator on B: their joins, chats and acts reach A over Redis.
        bo, cy, watcher = await seated(b, "Bo"), await seated(b, "Cy"), await seated(b, "W")
        assert (await bo.ask(requests.Join, room=room)).seat == 1
        assert (await cy.ask(requests.Join, room=room)).seat == 2
        await watcher.ask(requests.Spectate, room=room)

        def numsub() -> int:
            return int(r.pubsub_numsub(event_channel(room))[0][1])

        assert numsub() == 1  # B, once for three members; A, the owner, delivers its own

        chat = await bo.ask(requests.SendChat, room=room, text="hi from B")
        assert chat.seq == committed_seq(r, room)
        with pytest.raises(errors.NotStartedError):  # errors come back as themselves
            await bo.ask(requests.Act, room=room, action=act({"type": "roll"}), window=None)

        with pytest.raises(errors.ForbiddenError):  # only the host (Ada, seat 0) starts
            await bo.ask(requests.Start, room=room)
        await host.ask(requests.Leave, room=room)  # the role passes to Bo, on B
        rejoined = len(host.out)
        assert (await host.ask(requests.Join, room=room)).seat == 0
        await bo.ask(requests.Start, room=room)
        hosts = [m.info.host for m in watcher.stream(room) if isinstance(m, RoomUpdate)]
        assert hosts[-3:] == [1, 1, 1]  # told to all: Ada left, Ada sat again, the start
        members = (host, bo, cy, watcher)

        await asyncio.wait_for(asyncio.gather(*(play(m, room) for m in members[:3])), 60)
        await asyncio.wait_for(watcher.over.wait(), 10)

        log = committed_log(r, room)
        ends = set()
        for seat, m in enumerate(members):
            stream = m.stream(room, rejoined if m is host else 0)
            ends.add(contiguous(stream)[-1])
            view = None if m is watcher else seat
            assert all(msg == log[msg.seq].for_seat(view) for msg in stream[1:])
        assert ends == {max(log)}
        said = [m for m in watcher.stream(room) if isinstance(m, Chat)]
        assert [(c.text, c.seat) for c in said] == [("hi from B", 1)]

        # The last member on B gone, B stops listening to the room.
        for m in (bo, cy, watcher):
            await m.ask(requests.Leave, room=room)
        await eventually(lambda: numsub() == 0)


async def two_seats(a: Server, b: Server, **fields: Any) -> tuple[Member, Member, str]:
    """Ada on A creates a 2-seat Qwixx room (A owns it), Bo on B takes the other seat."""
    ada, bo = await hello(a, "Ada"), await hello(b, "Bo")
    room = await create(ada, "qwixx", 2, **fields)
    await ada.ask(requests.Join, room=room)
    await bo.ask(requests.Join, room=room)
    return ada, bo, room


async def test_a_forwarded_command_that_commits_is_answered_by_its_commit(
    db: tuple[str, redis.Redis],
) -> None:
    """The owner's commit script publishes the room's messages, then the reply: one round
    trip for both, and the asker still sees the messages before the reply. A command that
    commits nothing (`legal`) is answered on its own."""
    url, r = db
    async with processes(url) as (a, b):
        _, bo, room = await two_seats(a, b)
        owner = backend(a)
        link = owner.link
        answered: list[str] = []
        answer = link.answer

        async def counted(key: str, data: bytes, px: int, channel: str) -> None:
            answered.append(key)
            await answer(key, data, px, channel)

        link.answer = counted  # type: ignore[method-assign]
        chat = await bo.ask(requests.SendChat, room=room, text="one trip")
        assert bo.stream(room)[-1].seq == chat.seq, "the message came before the reply"
        assert answered == [] and r.get(snap_key(room)) is not None
        with pytest.raises(errors.NotStartedError):  # (errors commit nothing either)
            await bo.ask(requests.Legal, room=room)
        assert len(answered) == 1


async def test_a_command_nobody_hears_is_sent_again_until_the_owner_hears_it(
    db: tuple[str, redis.Redis],
) -> None:
    """The asker does not wait for Redis to count who heard a forwarded command: when
    nobody did, the script that published it answers "retry" (kept and published), and
    the asker sends it again until the owner hears it. It runs once."""
    url, r = db
    async with processes(url) as (a, b):
        ada, bo, room = await two_seats(a, b)
        owner = backend(a)
        await owner.link.unsubscribe(command_channel(room))  # deaf for a while
        said = asyncio.ensure_future(bo.ask(requests.SendChat, room=room, text="again"))
        replies = f"dh:{{proc-{backend(b).proc}}}:reply:*"

        def told_to_retry() -> int:
            answers = [msgspec.msgpack.decode(r.get(k)) for k in r.keys(replies)]
            return sum(x.get("retry", False) and not x["ok"] for x in answers)

        await eventually(lambda: told_to_retry() >= 2)
        assert not said.done()
        await owner.link.subscribe(command_channel(room))
        chat = await asyncio.wait_for(said, 10)
        chats = [m for m in ada.stream(room) if isinstance(m, Chat)]
        assert [(c.seq, c.text) for c in chats] == [(chat.seq, "again")]


async def test_garbage_on_the_command_and_reply_channels_changes_nothing(
    db: tuple[str, redis.Redis],
) -> None:
    """Anything with access to Redis may publish: what is not a command or an answer is
    dropped, and both processes go on serving the room."""
    url, r = db
    async with processes(url) as (a, b):
        _, bo, room = await two_seats(a, b)
        before = committed_seq(r, room)
        junk = [b"", b"\xc1", b"not msgpack", msgspec.msgpack.encode({"from": 1, "rid": "x"})]
        junk.append(msgspec.msgpack.encode({"from": "p", "rid": 1, "cmd": {"type": "nope"}}))
        for data in junk:
            assert r.publish(command_channel(room), data) == 1
            r.publish(reply_channel(backend(b).proc), data)
        # The chat's command and its answer travel the same channels after the junk, and
        # a channel keeps its order: once it is answered, the junk was read, and if any
        # of it had been taken for a command, the chat would not be the next message.
        chat = await bo.ask(requests.SendChat, room=room, text="still here")
        assert chat.seq == before + 1 == committed_seq(r, room)


@contextlib.asynccontextmanager
async def remote_seat_game(url: str, feature: str) -> AsyncIterator[tuple[Member, Seated, str]]:
    """A started 2-seat Qwixx room owned by process A, its second seat held on process B by
    a connection with `feature` on: (A's member, B's member, the room)."""
    async with processes(url) as (a, b):
        ada, bo = await hello(a, "Ada"), Seated(b)
        await bo.ask(requests.Hello, client="bot", name="Bo", tokens=[], features=[feature])
        room = await create(ada, "qwixx", 2, turn_window=600)
        await ada.ask(requests.Join, room=room)
        await bo.ask(requests.Join, room=room)
        await ada.ask(requests.Start, room=room)
        yield ada, bo, room


async def test_legal_without_the_view_crosses_to_the_owner(db: tuple[str, redis.Redis]) -> None:
    url, _ = db
    async with remote_seat_game(url, "legal_without_view") as (_, bo, room):
        bare = await bo.ask(requests.Legal, room=room, view=False)
        full = await bo.ask(requests.Legal, room=room)
        assert bare.view is None and full.view["you"] == 1 and bare.actions == full.actions


async def test_a_window_brings_the_legal_actions_to_a_seat_on_another_process(
    db: tuple[str, redis.Redis],
) -> None:
    """`legal_in_window` over Redis: the owner builds the seat's copy of the `window` and
    publishes it with the others; the process that holds the seat delivers it."""
    url, _ = db
    async with remote_seat_game(url, "legal_in_window") as (ada, bo, room):

        def windows(member: Member) -> list[Window]:
            return [m for m in member.stream(room) if isinstance(m, Window)]

        await eventually(lambda: windows(bo) and windows(ada), "the first window")
        mine, plain = windows(bo)[0], windows(ada)[0]
        asked = await bo.ask(requests.Legal, room=room)
        assert mine.seq == plain.seq and plain.legal is None
        assert mine.legal == asked.actions and mine.legal


async def test_seat_tokens_and_resume_work_on_every_process(db: tuple[str, redis.Redis]) -> None:
    url, r = db
    async with processes(url) as (a, b):
        ada, bo = await hello(a, "Ada"), await hello(a, "Bo")
        room = await create(ada, "qwixx", 2, turn_window=600)
        token = (await ada.ask(requests.Join, room=room)).token
        await bo.ask(requests.Join, room=room)
        await ada.ask(requests.Start, room=room)
        last_seq = ada.stream(room)[-1].seq
        await ada.session.disconnected()
        await bo.ask(requests.SendChat, room=room, text="while Ada was away")

        back = await hello(b, "Ada", [token])
        held = back.out[0][2]
        assert [(h.room, h.seat) for h in held.seats] == [(room, 0)] and held.rejected == []
        resumed = await back.ask(requests.Resume, room=room, last_seq=last_seq)
        assert resumed.mode == "events"
        await bo.ask(requests.SendChat, room=room, text="welcome back")
        await eventually(lambda: sum(isinstance(m, Chat) for m in back.stream(room)) == 2)
        caught = back.stream(room)
        assert [m.seq for m in caught] == list(range(last_seq + 1, last_seq + 1 + len(caught)))
        assert [m.text for m in caught if isinstance(m, Chat)] == [
            "while Ada was away",
            "welcome back",
        ]
        updates = [m for m in caught if isinstance(m, RoomUpdate)]
        assert [u.info.seats[0].connected for u in updates] == [False, True]
        assert r.get(SECRET) is not None


async def test_a_draining_process_hands_its_rooms_over(db: tuple[str, redis.Redis]) -> None:
    """A stops (what SIGTERM does): its queued commands finish, it releases the lease, and
    B takes the room over at once (long before the lease would have run out), house bots
    included; B's spectator sees no seam."""
    url, r = db
    async with processes(url, 1, 10_000) as (a,), processes(url, 1, 10_000) as (b,):
        host = await hello(a)
        room = await create(host, "yamb", 2, turn_window=600)
        await host.ask(requests.AddBots, room=room)
        watcher = await hello(b)
        await watcher.ask(requests.Spectate, room=room)
        await host.ask(requests.Start, room=room)
        await eventually(lambda: watcher.stream(room)[-1].seq > 20)
        owner = lease_owner(r, room)

        await a.stop()
        assert backend(a).stats()["rooms"] == 0
        await eventually(lambda: backend(b).local_room(room) is not None, timeout=5.0)
        assert lease_owner(r, room) == backend(b).proc != owner
        assert backend(b).stats()["takeovers"] == 1
        await asyncio.wait_for(watcher.over.wait(), 60)
        contiguous(watcher.stream(room))
        assert {seat for room_id, seat in b.bots if room_id == room} == {0, 1}


async def test_an_owner_that_lost_its_lease_writes_nothing_more(
    db: tuple[str, redis.Redis],
) -> None:
    """A missed its lease renewals (its lease is gone) and B took the room over: A's next
    commit is fenced off; the command that made it is run again, once, by B."""
    url, r = db
    async with processes(url, lease_ms=60_000) as (a, b):
        ada, bo, room = await two_seats(a, b)
        before = committed_seq(r, room)

        r.delete(lease_key(room))  # as if it had expired
        await eventually(lambda: lease_owner(r, room) == backend(b).proc)
        chat = await ada.ask(requests.SendChat, room=room, text="after the move")
        assert chat.seq == before + 1
        assert backend(a).local_room(room) is None
        log = committed_log(r, room)
        assert max(log) == before + 1 and committed_seq(r, room) == before + 1
        for m in (ada, bo):  # (B delivers once its commit returns: A may have its reply first)
            await eventually(lambda m=m: m.stream(room)[-1:] and m.stream(room)[-1].seq >= chat.seq)
        # A listens to the room's channel now, and B, its new owner, no longer does.
        assert r.pubsub_numsub(event_channel(room))[0][1] == 1
        assert backend(a).relay.listening(room) and not backend(b).relay.listening(room)
        for m in (ada, bo):
            texts = [x.text for x in m.stream(room) if isinstance(x, Chat)]
            assert texts == ["after the move"]
            contiguous(m.stream(room))


async def test_an_owner_writes_its_room_back_when_redis_lost_it(
    db: tuple[str, redis.Redis],
) -> None:
    """FLUSHDB is Redis coming back empty: the owner puts back lease, log, snapshot, lobby
    and token secret, and B's players carry on."""
    url, r = db
    async with processes(url) as (a, b):
        ada, bo, room = await two_seats(a, b, turn_window=600)
        await ada.ask(requests.Start, room=room)
        secret = r.get(SECRET)
        seq = committed_seq(r, room)

        r.flushdb()
        await eventually(lambda: r.exists(log_key(room), LOBBY, SECRET) == 3)
        assert lease_owner(r, room) == backend(a).proc
        assert max(committed_log(r, room)) == seq == committed_seq(r, room)
        assert snapshot_seq(r, room) == seq  # written back whole: a snapshot
        assert r.hget(LOBBY, room) is not None and r.get(SECRET) == secret

        chat = await bo.ask(requests.SendChat, room=room, text="still here")
        assert chat.seq == seq + 1
        await eventually(lambda: ada.stream(room)[-1].seq == chat.seq)
        contiguous(ada.stream(room))
        contiguous(bo.stream(room))


async def test_finished_rooms_close_once_left_or_after_a_while_and_keep_their_record(
    db: tuple[str, redis.Redis],
) -> None:
    """Left by everyone: closed at the next scan. Merely disconnected: `over_seconds`
    later (its player may come back to see the end). Either way only the record stays."""
    url, r = db
    async with processes(url, n=1) as (a,):
        backend(a).host.over_seconds = 3.0
        played = []
        for name in ("Ada", "Bo"):
            m = await seated(a, name)
            room = await create(m, "qwinto", 1)
            await m.ask(requests.Join, room=room)
            await m.ask(requests.Start, room=room)
            await asyncio.wait_for(play(m, room), 60)
            assert r.exists(snap_key(room), log_key(room), lease_key(room)) == 3
            played.append((m, room))
        (ada, left), (bo, dropped) = played
        await ada.ask(requests.Leave, room=left)
        await bo.session.disconnected()
        await eventually(lambda: backend(a).stats()["rooms_closed"] == 1)
        assert backend(a).local_room(left) is None and backend(a).local_room(dropped) is not None
        await eventually(lambda: backend(a).stats()["rooms_closed"] == 2)
        for room in (left, dropped):
            assert r.exists(snap_key(room), log_key(room), lease_key(room)) == 0
            assert r.exists(record_log_key(room)) == 0
            assert r.hget(LOBBY, room) is None
            assert r.exists(record_key(room)) == 1


async def test_an_answer_kept_back_commits_nothing_and_its_progress_crosses_to_members_elsewhere(
    db: tuple[str, redis.Redis],
) -> None:
    """An answer that leaves a shared window open is not written (one commit per window),
    and members on another process that asked for `progress` hear who answered."""
    url, r = db
    async with processes(url) as (a, b):
        ada = await hello(a, "Ada")
        bo, cy = Member(b), Member(b)
        for member, name in ((bo, "Bo"), (cy, "Cy")):
            await member.ask(
                requests.Hello, client="t", name=name, tokens=[], features=["progress"]
            )
        room = await create(ada, "qwixx", 3, turn_window=600)
        for member in (ada, bo, cy):
            await member.ask(requests.Join, room=room)
        await ada.ask(requests.Start, room=room)
        window = (await ada.ask(requests.Legal, room=room)).window
        await eventually(
            lambda: (
                len(bo.stream(room)) > 0
                and bo.stream(room)[-1].seq == cy.stream(room)[-1].seq == ada.stream(room)[-1].seq
            )
        )
        seq = committed_seq(r, room)
        snap = r.get(snap_key(room))
        journal_len = r.llen(journal_key(room))

        await ada.ask(requests.Act, room=room, window=window, action=act({"type": "pass"}))
        await eventually(lambda: any(isinstance(m, Progress) for m in cy.stream(room)))
        hint = next(m for m in cy.stream(room) if isinstance(m, Progress))
        assert (hint.seq, hint.window, hint.answered) == (seq, window, [0])
        await bo.ask(requests.Act, room=room, window=window, action=act({"type": "pass"}))
        assert committed_seq(r, room) == seq and r.get(snap_key(room)) == snap
        assert r.llen(journal_key(room)) == journal_len, "nothing written for either answer"

        await cy.ask(requests.Act, room=room, window=window, action=act({"type": "pass"}))
        await eventually(lambda: ada.stream(room)[-1].seq > seq)
        assert committed_seq(r, room) > seq
        contiguous(ada.stream(room))
        answered = [
            m.event["seat"]
            for m in ada.stream(room)
            if isinstance(m, Event) and m.event["type"] == "answered"
        ]
        assert answered == [0, 1, 2]


async def test_a_room_handed_over_keeps_the_answers_its_window_kept_back(
    db: tuple[str, redis.Redis],
) -> None:
    """A hand-over (what a drain does to each room) is not a failover: the answers a shared
    window kept back are written before the lease goes, and nobody answers again."""
    url, r = db
    async with processes(url) as (a, b):
        ada, bo, room = await two_seats(a, b, turn_window=600)
        await ada.ask(requests.Start, room=room)
        window = (await ada.ask(requests.Legal, room=room)).window
        await bo.ask(requests.Act, room=room, window=window, action=act({"type": "pass"}))
        seq = committed_seq(r, room)

        await backend(a).host.let_go(room, Release.HANDED)
        await ada.ask(requests.Legal, room=room)  # (a process takes the room over to answer)
        owner = a if lease_owner(r, room) == backend(a).proc else b
        core = backend(owner).local_room(room)
        assert core is not None and core.window_id == window and core.seq >= seq
        progress = core.progress()
        assert progress is not None and progress.answered == [1]
        with pytest.raises(errors.NotYourTurnError):  # seat 1's answer is in
            await bo.ask(requests.Act, room=room, window=window, action=act({"type": "pass"}))
        await ada.ask(requests.Act, room=room, window=window, action=act({"type": "pass"}))
        await eventually(lambda: any(isinstance(m, WindowClosed) for m in bo.stream(room)))
        closed = next(m for m in bo.stream(room) if isinstance(m, WindowClosed))
        assert [(x.seat, x.default) for x in closed.actions] == [(0, False), (1, False)]
        contiguous(bo.stream(room))


async def test_a_finished_game_is_listed_for_history_even_if_redis_refused_at_first(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The list of games waiting for history is how a process finds a dead owner's games;
    a refusal when the game ends (here Redis's ACL takes SADD away: a real refusal, for
    that command only) delays the end's commit until the listing goes through."""
    with running_redis() as own:
        r = own.client()
        async with processes(own.url_db(0), n=1) as (a,):
            m = await seated(a, "Ada")
            room = await create(m, "qwinto", 1)
            await m.ask(requests.Join, room=room)
            r.execute_command("ACL", "SETUSER", "default", "-sadd")
            try:
                await m.ask(requests.Start, room=room)
                playing = asyncio.create_task(play(m, room))
                core = backend(a).local_room(room)
                assert core is not None
                await eventually(lambda: core.status == "over", timeout=60)
                await eventually(lambda: len(refusals(caplog)) >= 2, "refused twice")
                assert not m.over.is_set(), "the end waits for its listing"
                assert not r.sismember(HISTORY_WAITING, room)
            finally:
                r.execute_command("ACL", "SETUSER", "default", "+sadd")
            await asyncio.wait_for(playing, 30)
            assert m.over.is_set()
            assert r.sismember(HISTORY_WAITING, room)


def refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "listing its game" in r.getMessage()]
