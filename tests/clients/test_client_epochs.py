"""The client library when a failover takes a room back (docs/protocol.md, "Epochs"),
against a scripted server on a real socket that says exactly what the test crafts: an
unasked `snapshot` with a lower seq mid-stream replaces the room (its last seq included)
and the messages after it are news, not repeats; the feature `epochs` is asked for when
offered; `resume` says the room's epoch only then; a `resume` reply's epoch is kept."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from websockets.asyncio.server import ServerConnection as Socket
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from dicehall.clients.botrunner import SeatBot
from dicehall.clients.client import Client, Delivery
from dicehall.protocol import Encoding, ServerConnection
from dicehall.protocol.features import EPOCHS, IDENTITY, LOBBY_PAGES
from dicehall.protocol.messages.common import RoomInfo, SeatInfo
from dicehall.protocol.messages.server import Chat, RoomMessage, Snapshot

ROOM = "r1"
INFO = RoomInfo(
    room=ROOM,
    name="Ada's table",
    game="qwinto",
    options={"reroll": False},
    status="playing",
    public=False,
    turn_window=30,
    seats=[SeatInfo(seat=0, kind="human", name="Ada", connected=True)],
)


def snapshot(seq: int, epoch: int, *, window: int | None = None) -> dict[str, Any]:
    turn = None
    if window is not None:
        actors = [{"seat": 0, "kinds": ["enter", "pass"]}]
        turn = {"window": window, "deadline": 1767225679000, "actors": actors}
    info = msgspec.to_builtins(INFO)
    return {
        "type": "snapshot",
        "room": ROOM,
        "seq": seq,
        "seat": 0,
        "view": {},
        "info": info,
        "turn": turn,
        "epoch": epoch,
    }


def chat(seq: int, text: str) -> dict[str, Any]:
    return {"type": "chat", "room": ROOM, "seq": seq, "from": "Ada", "seat": 0, "text": text}


class Scripted:
    """A server that answers `hello`, `join`, `resume` and `ping` as told and sends the
    room messages the test gives it; it records every request."""

    def __init__(self, features: list[str]) -> None:
        self.features = features
        self.requests: list[dict[str, Any]] = []
        self.socket: Socket | None = None
        self.connected = asyncio.Event()
        self.resume_reply: dict[str, Any] = {"mode": "events", "seq": 0}
        self.after_resume: list[dict[str, Any]] = []
        self.window: int | None = None
        """The open turn window, as `legal` says it."""
        self.acts: list[int] = []
        """The window of each `act` received."""
        self.url = ""

    async def send(self, *messages: dict[str, Any]) -> None:
        assert self.socket is not None
        for message in messages:
            await self.socket.send(json.dumps(message))

    async def handle(self, ws: Socket) -> None:
        self.socket = ws
        await ws.send(ServerConnection(Encoding.JSON, now=0).welcome("scripted", self.features))
        try:
            async for frame in ws:
                request = json.loads(frame)
                self.requests.append(request)
                await self.answer(ws, request)
        except ConnectionClosed:
            pass

    async def answer(self, ws: Socket, request: dict[str, Any]) -> None:
        kind, rid = request["type"], request["id"]

        async def reply(result: dict[str, Any]) -> None:
            await ws.send(json.dumps({"type": "reply", "id": rid, "ok": True, "result": result}))

        if kind == "hello":
            asked = [f for f in request.get("features", []) if f in self.features]
            seats = [{"room": ROOM, "seat": 0}] if request.get("tokens") else []
            await reply({"name": "Ada", "features": asked, "seats": seats})
            if not seats:
                self.connected.set()
        elif kind == "join":
            await reply({"room": ROOM, "seat": 0, "token": "st1.r1.0.tok"})
            await self.send(snapshot(1, 0, window=self.window))
        elif kind == "resume":
            await reply(self.resume_reply)
            await self.send(*self.after_resume)
            self.connected.set()
        elif kind == "legal":
            await reply({"window": self.window, "actions": [{"type": "pass"}], "view": {}})
        elif kind == "act":
            self.acts.append(request["window"])
            await reply({"window": request["window"], "owes": []})
        elif kind == "ping":
            await reply({"time": request.get("time", 0), "echo": request.get("time")})


@pytest.fixture(params=[True, False], ids=["epochs-offered", "epochs-not-offered"])
async def scripted(request: pytest.FixtureRequest) -> AsyncIterator[Scripted]:
    offered = [IDENTITY, LOBBY_PAGES] + ([EPOCHS] if request.param else [])
    server = Scripted(["timestamps", *offered])
    async with serve(
        server.handle, "127.0.0.1", 0, subprotocols=[Subprotocol("dicehall.v1.json")]
    ) as ws_server:
        port = next(iter(ws_server.sockets)).getsockname()[1]
        server.url = f"ws://127.0.0.1:{port}/ws"
        yield server


async def take(client: Client, n: int) -> list[Delivery]:
    return [await client.receive(timeout=5) for _ in range(n)]


def seqs(items: list[Delivery]) -> list[tuple[str, int]]:
    return [(type(m).__name__, m.seq) for m in items if isinstance(m, RoomMessage)]


async def test_a_snapshot_that_goes_back_replaces_the_room(scripted: Scripted) -> None:
    async with Client(scripted.url, name="Ada", encoding="json", backoff=(0.05, 0.1)) as client:
        await client.join(ROOM)
        await scripted.send(*(chat(seq, f"line {seq}") for seq in range(2, 6)))
        assert seqs(await take(client, 5)) == [("Snapshot", 1)] + [("Chat", s) for s in range(2, 6)]
        assert client.last_seq(ROOM) == 5 and client.epoch(ROOM) == 0
        # a failover took the room back to seq 3: 4 and 5 never happened; the next 4 and 5
        # are news (another history), and a window opened in it
        await scripted.send(snapshot(3, 1, window=2), chat(4, "again 4"), chat(5, "again 5"))
        back, *after = await take(client, 3)
        assert isinstance(back, Snapshot) and (back.seq, back.epoch) == (3, 1)
        assert [(m.seq, m.text) for m in after if isinstance(m, Chat)] == [
            (4, "again 4"),
            (5, "again 5"),
        ]
        assert client.last_seq(ROOM) == 5 and client.epoch(ROOM) == 1
        turn = client.turn(ROOM)
        assert turn is not None and turn.window == 2
        # a snapshot at the same seq (nothing of the lost part seen past it) replaces too
        await scripted.send(snapshot(5, 2), chat(6, "six"))
        same, six = await take(client, 2)
        assert isinstance(same, Snapshot) and same.seq == 5 and client.turn(ROOM) is None
        assert isinstance(six, Chat) and six.seq == 6 and client.epoch(ROOM) == 2


async def test_resume_says_the_epoch_only_with_the_feature(scripted: Scripted) -> None:
    offered = EPOCHS in scripted.features
    async with Client(scripted.url, name="Ada", encoding="json", backoff=(0.05, 0.1)) as client:
        [hello] = [r for r in scripted.requests if r["type"] == "hello"]
        assert (EPOCHS in hello.get("features", [])) is offered
        assert client.epochs is offered
        await client.join(ROOM)
        await scripted.send(chat(2, "two"), chat(3, "three"), snapshot(2, 1), chat(3, "new 3"))
        await take(client, 5)
        assert (client.last_seq(ROOM), client.epoch(ROOM)) == (3, 1)

        # the connection drops; the reconnect resumes the seat after seq 3 of epoch 1, and
        # the reply says a later epoch (the events that follow are of it)
        scripted.connected.clear()
        scripted.resume_reply = {"mode": "events", "seq": 5, "epoch": 2}
        scripted.after_resume = [chat(4, "four"), chat(5, "five")]
        assert scripted.socket is not None
        await scripted.socket.close(1012, "restart")
        async with asyncio.timeout(5):
            await scripted.connected.wait()
        assert seqs(await take(client, 2)) == [("Chat", 4), ("Chat", 5)]
        [resume] = [r for r in scripted.requests if r["type"] == "resume"]
        assert resume["room"] == ROOM and resume["last_seq"] == 3
        if offered:
            assert resume["epoch"] == 1
        else:
            assert "epoch" not in resume  # (a server without the feature refuses it)
        assert client.epoch(ROOM) == 2
        assert (client.resumes[-1].seq, client.resumes[-1].epoch) == (5, 2)


def window(seq: int, number: int) -> dict[str, Any]:
    actors = [{"seat": 0, "kinds": ["pass"]}]
    message = {"type": "window", "room": ROOM, "seq": seq, "window": number, "deadline": 1}
    return message | {"actors": actors}


def closed(seq: int, number: int) -> dict[str, Any]:
    actions = [{"seat": 0, "action": {"type": "pass"}, "default": False}]
    message = {"type": "window_closed", "room": ROOM, "seq": seq, "window": number}
    return message | {"actions": actions}


async def test_a_bot_answers_again_the_window_a_failover_reopened(scripted: Scripted) -> None:
    """The bot runner's seat answers window 0 (open in the join's snapshot), then window 1;
    a failover takes the room back to before its answer to window 1: it answers again,
    and the game over that follows (at a seq it saw once) ends its game."""
    over = {"type": "game_over", "room": ROOM, "seq": 4, "scores": [3], "winners": [0]}
    over |= {"seed": "ab" * 32, "commitment": "cd" * 32}
    async with Client(scripted.url, name="Ada", encoding="json") as client:
        bot = SeatBot(client, "random", "qwinto")
        scripted.window = 0
        await bot.join(ROOM)
        playing = asyncio.create_task(bot.run())
        async with asyncio.timeout(5):
            while scripted.acts != [0]:
                await asyncio.sleep(0.01)
            scripted.window = 1
            await scripted.send(closed(2, 0), window(3, 1))
            while scripted.acts != [0, 1]:
                await asyncio.sleep(0.01)
            await scripted.send(closed(4, 1), window(5, 2))
            await scripted.send(snapshot(3, 1, window=1))  # (the answer to 1 was lost)
            while scripted.acts != [0, 1, 1]:
                await asyncio.sleep(0.01)
            await scripted.send(over)
            ended = await playing
    assert ended.seq == 4 and bot.actions == 3
