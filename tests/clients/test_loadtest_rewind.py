"""The load tester's seat when a failover takes its room back (docs/protocol.md, "Epochs"):
the unasked snapshot with a lower seq resets the seat's last seq, so the messages that
follow (seqs it saw once, in the history that never happened) are no `seq-gap` error, and
the window the snapshot reopens is answered again. It asks for `epochs` when offered."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
import pytest
from websockets.asyncio.server import ServerConnection as Socket
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from dicehall.clients.loadtest.config import LoadConfig
from dicehall.clients.loadtest.context import Context
from dicehall.clients.loadtest.messages import ActorHead, Incoming
from dicehall.clients.loadtest.seat import Seat
from dicehall.protocol import Encoding, ServerConnection
from dicehall.protocol.features import EPOCHS

ROOM = "r1"
ACTORS = [{"seat": 0, "kinds": ["pass"]}, {"seat": 1, "kinds": ["pass"]}]


class Table:
    """What a seat tells its table, recorded."""

    number = 0

    def __init__(self) -> None:
        self.turns: list[int] = []
        self.windows: list[int | None] = []

    def on_turn(
        self,
        seat: Seat,
        window: int,
        actors: list[ActorHead],
        now_us: int,
        legal: list[msgspec.Raw] | None,
    ) -> None:
        self.turns.append(window)

    def on_window(self, seat: Seat, msg: Incoming, now_us: int) -> None:
        self.windows.append(msg.window)

    def on_window_closed(self, seat: Seat, msg: Incoming, now_us: int) -> None:
        pass

    def on_game_over(self, seat: Seat) -> None:
        pass

    def acted(self, window: int, now_us: int) -> None:
        pass


def config(url: str = "ws://unused/ws") -> LoadConfig:
    return LoadConfig(urls=[url], rooms=1, seats=2, game="qwixx", duration=1.0, encoding="json")


def frame(message: dict[str, Any]) -> bytes:
    return json.dumps({"room": ROOM, **message}).encode()


def snapshot(seq: int, window: int) -> bytes:
    turn = {"window": window, "deadline": 1, "actors": ACTORS}
    return frame({"type": "snapshot", "seq": seq, "seat": 0, "turn": turn, "epoch": seq % 2})


def window(seq: int, number: int) -> bytes:
    return frame({"type": "window", "seq": seq, "window": number, "deadline": 1, "actors": ACTORS})


def closed(seq: int, number: int) -> bytes:
    return frame({"type": "window_closed", "seq": seq, "window": number, "actions": []})


async def test_a_room_taken_back_is_no_seq_gap() -> None:
    context = Context(0, config())
    table = Table()
    seat = Seat(context, table, 0, "ws://unused/ws")
    seat.room = ROOM
    for data in [snapshot(1, 0), closed(2, 0), window(3, 1), closed(4, 1), window(5, 2)]:
        seat.on_message(data, 0)
    # a failover took the room back to seq 3 (window 1 open again), and it goes on
    for data in [snapshot(3, 1), closed(4, 1), window(5, 2), closed(6, 2)]:
        seat.on_message(data, 0)
    assert dict(context.current.errors) == {}
    assert seat.last_seq == 6
    assert table.turns == [0, 1] and table.windows == [1, 2, 2]


@pytest.mark.parametrize("offered", [True, False])
async def test_epochs_is_asked_for_when_offered(offered: bool) -> None:
    features = ["timestamps", "legal_without_view", "legal_in_window"]
    features += [EPOCHS] if offered else []
    hellos: list[dict[str, Any]] = []

    async def handle(ws: Socket) -> None:
        await ws.send(ServerConnection(Encoding.JSON, now=0).welcome("scripted", features))
        try:
            async for data in ws:
                request = json.loads(data)
                if request["type"] == "hello":
                    hellos.append(request)
                    asked = [f for f in request["features"] if f in features]
                    reply = {"type": "reply", "id": request["id"], "ok": True}
                    await ws.send(json.dumps(reply | {"result": {"features": asked}}))
        except ConnectionClosed:
            pass

    async with serve(handle, "127.0.0.1", 0, subprotocols=[Subprotocol("dicehall.v1.json")]) as s:
        url = f"ws://127.0.0.1:{next(iter(s.sockets)).getsockname()[1]}/ws"
        context = Context(0, config(url))
        seat = Seat(context, Table(), 0, url)
        await seat.connect()
        assert seat.ws is not None
        seat.ws.close()
        async with asyncio.timeout(5):
            await seat.closed.wait()
    [hello] = hellos
    assert (EPOCHS in hello["features"]) is offered
