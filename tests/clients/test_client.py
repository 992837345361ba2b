"""The client library against real `dicehall serve` processes over real sockets."""

from __future__ import annotations

import asyncio
import io
import random
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from dicehall.clients.client import (
    Client,
    ConnectError,
    ConnectionLost,
    Delivery,
    RoomLost,
    http_url,
)
from dicehall.clients.terminal import Terminal
from dicehall.protocol import errors
from dicehall.protocol.messages.server import (
    Chat,
    Event,
    GameOver,
    Progress,
    RoomMessage,
    Snapshot,
    Window,
    WindowClosed,
)
from tests.support.servers import ServerProcess, free_port, running_server


async def until(client: Client, match: Callable[[Delivery], bool]) -> list[Delivery]:
    """Everything the stream delivers up to and including the first match."""
    seen: list[Delivery] = []
    while True:
        item = await client.receive(timeout=15)
        seen.append(item)
        if match(item):
            return seen


def consecutive(messages: list[RoomMessage]) -> bool:
    seqs = [m.seq for m in messages]
    return seqs == list(range(seqs[0], seqs[0] + len(seqs)))


@pytest.mark.parametrize("encoding", ["msgpack", "json"])
async def test_handshake_requests_and_typed_room_messages(
    server: ServerProcess, encoding: str
) -> None:
    async with Client(server.ws, name="Ada", encoding=encoding) as client:
        assert client.welcome is not None
        assert client.welcome.protocol == f"dicehall.v1.{encoding}"
        assert client.hello is not None and client.hello.name == "Ada"
        assert client.url == server.ws and client.connected
        games = {g.name: g for g in await client.games()}
        assert {"qwinto", "qwixx", "qwirkle", "yamb"} <= set(games)
        assert "random" in games["yamb"].bots

        info = await client.create("qwixx", 2, turn_window=5, public=False, name="Ada's")
        assert info.status == "open" and info.name == "Ada's" and len(info.seats) == 2
        joined = await client.join(info.room, seat=1)
        assert (joined.room, joined.seat) == (info.room, 1) and joined.token
        assert client.tokens == {info.room: joined.token}

        snapshot = await client.receive(timeout=10)
        assert isinstance(snapshot, Snapshot)
        assert (snapshot.room, snapshot.seat) == (info.room, 1)
        assert snapshot.info.seats[1].name == "Ada" and snapshot.turn is None
        assert client.info(info.room) == snapshot.info

        seq = await client.chat(info.room, "hello table")
        chat = await client.receive(timeout=10)
        assert isinstance(chat, Chat)
        assert (chat.seq, chat.sender, chat.text, chat.seat) == (seq, "Ada", "hello table", 1)
        assert seq == snapshot.seq + 1 == client.last_seq(info.room)

        pong = await client.ping()
        assert pong.echo is not None and pong.time > 0


async def test_features_are_asked_for_in_every_hello(server: ServerProcess) -> None:
    async with Client(server.ws, features=["legal_without_view", "telepathy"]) as client:
        assert client.hello is not None
        always = ["identity", "lobby_pages", "epochs"]  # (asked for whenever offered)
        assert client.hello.features == ["legal_without_view", *always]
        info = await client.create("yamb", 1, public=False)
        await client.join(info.room)
        await client.start(info.room)
        bare, full = await client.legal(info.room, view=False), await client.legal(info.room)
        assert bare.view is None and full.view is not None and bare.actions == full.actions


async def test_error_replies_raise_the_catalogue_exception(server: ServerProcess) -> None:
    async with Client(server.ws) as client:
        with pytest.raises(errors.NoSuchRoomError) as missing:
            await client.join("no-such-room")
        assert missing.value.code == 2003 and isinstance(missing.value, errors.LobbyError)
        with pytest.raises(errors.NoSuchGameError):
            await client.create("chess", 2)
        with pytest.raises(errors.BadOptionsError):
            await client.create("qwirkle", 6)
        info = await client.create("qwinto", 2, public=False)
        await client.join(info.room)
        with pytest.raises(errors.NotStartedError):
            await client.legal(info.room)
        with pytest.raises(errors.ForbiddenError):
            await client.start(info.room)  # seat 1 is still open
        with pytest.raises(errors.AlreadyInRoomError):
            await client.join(info.room)
        assert (await client.ping()).time > 0  # errors never hurt the connection


async def answer(client: Client, room: str, window: int, rng: random.Random) -> None:
    """Act in `window` while this seat may (a drop in between: ask `legal` again)."""
    while (turn := client.turn(room)) is not None and turn.window == window:
        try:
            legal = await client.legal(room)
        except ConnectionLost:
            continue
        except errors.GameOverError:
            return
        if legal.window != window or not legal.actions:
            return
        try:
            await client.act(room, rng.choice(legal.actions), window)
        except ConnectionLost:
            continue
        except (errors.WindowClosedError, errors.NotYourTurnError):
            return


async def play(
    client: Client,
    room: str,
    seat: int,
    seen: list[RoomMessage],
    on_first_window: Callable[[], Awaitable[None]] | None = None,
) -> GameOver:
    rng = random.Random(seat)
    async for message in client.messages():
        assert not isinstance(message, RoomLost), message
        assert message.room == room
        seen.append(message)
        if isinstance(message, GameOver):
            return message
        if isinstance(message, Window):
            if on_first_window is not None:
                hook, on_first_window = on_first_window, None
                await hook()
            if any(a.seat == seat for a in message.actors):
                await answer(client, room, message.window, rng)
    raise AssertionError("the stream ended before the game did")


@pytest.mark.parametrize("how", ["abort", "close"])
async def test_dropped_connection_reconnects_and_resumes_without_gap_or_duplicate(
    server: ServerProcess, how: str
) -> None:
    """Ada's socket dies at her first turn window; while she is away (the first reconnect
    waits 0.5 s) Bo chats. She must get those messages exactly once, through `resume`."""
    ada = Client(server.ws, name="Ada", backoff=(0.5, 1.0))
    bo = Client(server.ws, name="Bo")
    await ada.connect()
    await bo.connect()
    info = await ada.create("qwixx", 2, turn_window=5, public=False)
    room = info.room
    await ada.join(room, 0)
    await bo.join(room, 1)
    chats: list[int] = []

    async def drop() -> None:
        wire = ada._wire
        assert wire is not None
        if how == "abort":
            wire.ws.transport.abort()
        else:
            await wire.ws.close()
        chats.extend([await bo.chat(room, f"Ada is away {i}") for i in range(3)])

    ada_seen: list[RoomMessage] = []
    bo_seen: list[RoomMessage] = []
    await ada.start(room)
    ada_over, bo_over = await asyncio.wait_for(
        asyncio.gather(play(ada, room, 0, ada_seen, drop), play(bo, room, 1, bo_seen)), 60
    )

    assert ada_over.scores == bo_over.scores and ada_over.seed == bo_over.seed
    assert ada.reconnects == 1 and bo.reconnects == 0
    [resumed] = ada.resumes
    assert resumed.room == room and resumed.mode == "events"
    assert resumed.seq - resumed.last_seq >= 3  # at least Bo's chats were caught up
    assert isinstance(ada_seen[0], Snapshot) and isinstance(bo_seen[0], Snapshot)
    assert consecutive(ada_seen) and consecutive(bo_seen)
    got = {m.seq: m.text for m in ada_seen if isinstance(m, Chat)}
    assert got == {seq: f"Ada is away {i}" for i, seq in enumerate(chats)}
    assert ada_seen[-1].seq == bo_seen[-1].seq
    await ada.close()
    await bo.close()


async def seated_alone(client: Client) -> tuple[str, Any]:
    """A room with `client` in it, its snapshot received; the room and the live wire."""
    info = await client.create("qwixx", 2, public=False)
    await client.join(info.room)
    await until(client, lambda m: isinstance(m, Snapshot))
    assert client._wire is not None
    return info.room, client._wire


async def said_once_after_a_reconnect(client: Client, room: str, text: str) -> None:
    seq = await client.chat(room, text)  # waits for the reconnect
    assert client.reconnects == 1
    seen = await until(client, lambda m: isinstance(m, Chat) and m.seq == seq)
    assert [m.text for m in seen if isinstance(m, Chat)] == [text]


async def test_request_in_flight_at_a_drop_fails_and_is_not_resent(server: ServerProcess) -> None:
    async with Client(server.ws, name="Cy", backoff=(0.05, 0.5)) as client:
        room, wire = await seated_alone(client)
        in_flight = asyncio.create_task(client.chat(room, "maybe"))
        wire.ws.transport.abort()
        with pytest.raises(ConnectionLost):
            await in_flight
        await said_once_after_a_reconnect(client, room, "surely")


async def test_request_after_a_drop_the_client_has_not_noticed_waits_for_the_reconnect(
    server: ServerProcess,
) -> None:
    """The socket is closed but the reader has not run yet: the request never left, so it
    goes out on the next connection instead of failing."""
    async with Client(server.ws, name="Cy", backoff=(0.05, 0.5)) as client:
        room, wire = await seated_alone(client)
        wire.ws.transport.abort()
        await asyncio.sleep(0)  # the socket is closed now; the reader runs at the next step
        assert not wire.closed, "the reader must not have seen the drop yet"
        await said_once_after_a_reconnect(client, room, "after the drop")


async def test_a_request_cancelled_as_its_reply_arrives_ends_cancelled(
    server: ServerProcess,
) -> None:
    """A bot that cancels a request (its player gave up on a turn, it is closing) must be
    cancelled even when the reply came in the same turn of the event loop; CPython
    3.11's `asyncio.wait_for` returned the reply instead, and a task whose only
    cancellation was swallowed so played on forever."""

    class CancelledOnReply:
        """The reply's future as the reader sees it: the requesting task is cancelled
        right after the reply is set, before it could run."""

        def __init__(self, reply: asyncio.Future[Any], task: asyncio.Task[Any]) -> None:
            self.reply, self.task = reply, task

        def done(self) -> bool:
            return self.reply.done()

        def set_result(self, value: Any) -> None:
            self.reply.set_result(value)
            self.task.cancel()

        def set_exception(self, exc: BaseException) -> None:
            self.reply.set_exception(exc)

    async with Client(server.ws, name="Cy") as client:
        for _ in range(3):
            request = asyncio.create_task(client.games())
            wire = client._wire
            while wire is None or not wire.waiters:
                await asyncio.sleep(0)
                wire = client._wire
            (rid, reply), *_ = wire.waiters.items()
            wire.waiters[rid] = CancelledOnReply(reply, request)
            with pytest.raises(asyncio.CancelledError):
                await request
        assert await client.games(), "the client goes on working"


async def test_first_url_refused_the_next_one_is_used(server: ServerProcess) -> None:
    dead = f"ws://127.0.0.1:{free_port()}/ws"
    async with Client([dead, server.ws]) as client:
        assert client.url == server.ws
        assert (await client.ping()).time > 0


async def test_no_reachable_url_is_a_connect_error(server: ServerProcess) -> None:
    dead = f"ws://127.0.0.1:{free_port()}/ws"
    with pytest.raises(ConnectError, match=r"refused|Connect call failed"):
        await Client(dead).connect()
    with pytest.raises(ConnectError, match="403"):
        await Client(server.ws.replace("/ws", "/nowhere")).connect()


async def test_server_going_away_sends_the_client_to_the_next_url(
    server: ServerProcess,
) -> None:
    """SIGTERM: the server says goodbye (1001, retry_ms); the client reconnects to the next
    URL. The room lived in the stopped process, so its seat cannot be taken back there."""
    with running_server() as first:
        client = Client([first.ws, server.ws], backoff=(0.05, 1.0))
        await client.connect()
        assert client.url == first.ws
        before = client.player
        info = await client.create("qwinto", 2, public=False)
        await client.join(info.room)
        await until(client, lambda m: isinstance(m, Snapshot))
        await asyncio.to_thread(first.terminate)
        lost = await client.receive(timeout=30)
        assert lost == RoomLost(info.room, "the server refused the seat token")
        assert client.goodbye is not None and client.goodbye.code == 1001
        assert client.goodbye.retry_ms is not None
        assert client.url == server.ws and client.reconnects == 1
        assert client.tokens == {}
        # another deployment (its own secret) does not know the player: a new one there
        assert client.player is not None and before is not None
        assert client.player.id != before.id and client.key == client.player.key
        assert (await client.ping()).time > 0
        await client.close()


def test_http_url_follows_the_websocket_url() -> None:
    assert http_url("ws://h:8000/ws", "/api/x") == "http://h:8000/api/x"
    assert http_url("wss://example.org/dice/ws", "/api/x") == "https://example.org/dice/api/x"


async def test_progress_takes_the_answered_seats_off_the_open_turn(server: ServerProcess) -> None:
    """With `progress`, the client hears who answered a shared window as they do (a hint as
    of the last seq), and `turn()` lists only the seats still to answer; the `answered`
    events come, numbered, when the window resolves."""
    async with (
        Client(server.ws, name="Ada", features=["progress"]) as ada,
        Client(server.ws, name="Bo") as bo,
        Client(server.ws, name="Cy") as cy,
    ):
        assert ada.hello is not None
        assert ada.hello.features == ["progress", "identity", "lobby_pages", "epochs"]
        room = (await ada.create("qwixx", 3, turn_window=600, public=False)).room
        for client in (ada, bo, cy):
            await client.join(room)
        await ada.start(room)
        window = (await until(ada, lambda m: isinstance(m, Window)))[-1]
        assert isinstance(window, Window)
        seq = ada.last_seq(room)

        await bo.act(room, {"type": "pass"}, window=window.window)
        hint = await ada.receive(timeout=10)
        assert isinstance(hint, Progress) and (hint.seq, hint.answered) == (seq, [1])
        turn = ada.turn(room)
        assert turn is not None and [a.seat for a in turn.actors] == [0, 2]
        assert ada.last_seq(room) == seq, "a hint takes no number"

        await cy.act(room, {"type": "pass"}, window=window.window)
        await ada.act(room, {"type": "pass"}, window=window.window)
        seen = await until(ada, lambda m: isinstance(m, WindowClosed))
        numbered = [m for m in seen if not isinstance(m, Progress)]
        assert consecutive(numbered) and numbered[0].seq == seq + 1
        answered = [m.event["seat"] for m in numbered if isinstance(m, Event)][:3]
        assert answered == [1, 2, 0]


async def test_the_terminal_says_each_answer_once(server: ServerProcess) -> None:
    """`dicehall play` asks for `progress`: "Bo answered" as Bo does, not again when the
    window resolves."""
    async with (
        Client(server.ws, name="Ada", features=["progress"]) as ada,
        Client(server.ws, name="Bo") as bo,
    ):
        room = (await ada.create("qwixx", 2, turn_window=600, public=False)).room
        await ada.join(room)
        await bo.join(room)
        await ada.start(room)
        screen = io.StringIO()
        terminal = Terminal(ada, room, out=screen)
        for message in await until(ada, lambda m: isinstance(m, Window)):
            terminal.note(message)
        window = message
        assert isinstance(window, Window)
        await bo.act(room, {"type": "pass"}, window=window.window)
        terminal.note(await ada.receive(timeout=10))
        await ada.act(room, {"type": "pass"}, window=window.window)
        for message in await until(ada, lambda m: isinstance(m, WindowClosed)):
            terminal.note(message)
        lines = screen.getvalue().splitlines()
        assert lines.count("* Bo answered") == 1 and lines.count("* Ada answered") == 1
        assert lines.index("* Bo answered") < lines.index("* Ada answered")
