"""One valid instance of every message and result type, built through the real classes."""

from __future__ import annotations

import hashlib

import msgspec

from dicehall.protocol import (
    Act,
    Action,
    Actor,
    AddBots,
    AddBotsResult,
    Chat,
    ChatResult,
    Create,
    CreateResult,
    Empty,
    ErrorBody,
    ErrorMessage,
    Event,
    GameInfo,
    GameOver,
    Games,
    GamesResult,
    Goodbye,
    HeldSeat,
    Hello,
    HelloResult,
    Join,
    JoinResult,
    Leave,
    Legal,
    LegalResult,
    Limits,
    OptionInfo,
    Ping,
    PingResult,
    PlayerIdentity,
    Progress,
    Reply,
    Resume,
    ResumeResult,
    RoomInfo,
    Rooms,
    RoomsResult,
    RoomUpdate,
    SeatAction,
    SeatInfo,
    SendChat,
    Snapshot,
    Spectate,
    Start,
    StartResult,
    TurnWindow,
    Welcome,
    Window,
    WindowClosed,
)
from dicehall.protocol.messages.results import Result

SEED = bytes(range(32))
COMMITMENT = hashlib.sha256(SEED).hexdigest()

ROOM = RoomInfo(
    room="r7Kx2",
    name="Friday dice",
    game="qwinto",
    options={"reroll": False},
    status="open",
    public=True,
    turn_window=30,
    seats=[
        SeatInfo(seat=0, kind="human", name="Ada", connected=True),
        SeatInfo(seat=1, kind="open"),
    ],
)

QWINTO = GameInfo(
    name="qwinto",
    title="Qwinto",
    min_seats=1,
    max_seats=6,
    options=[OptionInfo(name="reroll", default=False, description="One reroll per turn.")],
    presets={"official": {"reroll": True}},
    bots=["random", "strong"],
)

ACTIONS: list[Action] = [
    {"type": "roll", "dice": ["red", "yellow"]},
    {"type": "reroll"},
    {"type": "enter", "row": "red", "box": 3},
    {"type": "mark", "row": "green", "number": 12},
    {"type": "place", "tiles": [{"color": "red", "shape": "star", "x": 0, "y": -1}]},
    {"type": "swap", "tiles": [{"color": "blue", "shape": "cross"}]},
    {"type": "roll", "hold": [0, 2, 5]},
    {"type": "call", "row": "kenta"},
    {"type": "write", "column": "down", "row": "1"},
    {"type": "pass"},
]

CLIENT = [
    Hello(
        id=0,
        client="dicehall-py/0.1",
        name="Ada",
        tokens=["t.1.abc"],
        features=["x", "identity"],
        key="pk1.p1.mac",
    ),
    Games(id=1),
    Rooms(id=2, game="qwinto"),
    Create(
        id=3,
        game="qwinto",
        seats=2,
        options={"reroll": True},
        preset="official",
        turn_window=30,
        public=False,
        name="Friday dice",
    ),
    Join(id=4, room="r7Kx2", seat=0, name="Ada"),
    Spectate(id=5, room="r7Kx2"),
    Leave(id=6, room="r7Kx2"),
    Start(id=7, room="r7Kx2"),
    AddBots(id=8, room="r7Kx2", kind="random", count=1),
    *[Act(id=9 + i, room="r7Kx2", action=a, window=4) for i, a in enumerate(ACTIONS)],
    Legal(id=29, room="r7Kx2"),
    Resume(id=30, room="r7Kx2", last_seq=12),
    Ping(id=31, time=1_700_000_000_000),
    SendChat(id=32, room="r7Kx2", text="good luck!"),
]

SERVER = [
    Welcome(server="dicehall/0.1.0", protocol="dicehall.v1.json", limits=Limits()),
    Reply(id=4, ok=True, result=JoinResult(room="r7Kx2", seat=0, token="t.1.abc")),
    Reply(
        id=5, ok=False, error=ErrorBody(code=3001, name="illegal-action", message="no", rule="r")
    ),
    ErrorMessage(error=ErrorBody(code=1001, name="malformed", message="not valid json")),
    Snapshot(
        room="r7Kx2",
        seq=3,
        seat=0,
        view={"sheets": [{"red": [None] * 10}], "dice": {"red": 4}},
        info=ROOM,
        turn=TurnWindow(
            window=4, deadline=1_700_000_030_000, actors=[Actor(seat=0, kinds=["pass"])]
        ),
    ),
    RoomUpdate(room="r7Kx2", seq=4, info=ROOM),
    Event(room="r7Kx2", seq=5, event={"type": "roll", "dice": {"red": 4, "yellow": 2}, "sum": 6}),
    Window(
        room="r7Kx2",
        seq=6,
        window=5,
        deadline=1_700_000_060_000,
        actors=[Actor(seat=0, kinds=["enter", "pass"]), Actor(seat=1, kinds=["enter", "pass"])],
    ),
    WindowClosed(
        room="r7Kx2",
        seq=7,
        window=5,
        actions=[
            SeatAction(seat=0, action={"type": "enter", "row": "red", "box": 3}, default=False),
            SeatAction(seat=1, action={"type": "pass"}, default=True),
        ],
    ),
    GameOver(
        room="r7Kx2", seq=8, scores=[28, -5], winners=[0], seed=SEED.hex(), commitment=COMMITMENT
    ),
    Chat(room="r7Kx2", seq=9, sender="Ada", seat=0, text="gg"),
    Progress(room="r7Kx2", seq=6, window=5, answered=[1]),
    Goodbye(code=1001, reason="server restart", retry_ms=2000),
]

RESULTS: dict[type, Result] = {
    Hello: HelloResult(
        name="Ada",
        seats=[HeldSeat(room="r7Kx2", seat=0)],
        rejected=[1],
        player=PlayerIdentity(id="p1", key="pk1.p1.mac"),
    ),
    Games: GamesResult(games=[QWINTO]),
    Rooms: RoomsResult(rooms=[ROOM]),
    Create: CreateResult(room=ROOM),
    Join: JoinResult(room="r7Kx2", seat=0, token="t.1.abc"),
    Spectate: Empty(),
    Leave: Empty(),
    Start: StartResult(commitment=COMMITMENT),
    AddBots: AddBotsResult(seats=[1]),
    Act: Empty(),
    Legal: LegalResult(window=4, actions=[{"type": "pass"}], view={"game": "qwinto"}),
    Resume: ResumeResult(mode="events", seq=12),
    Ping: PingResult(time=1_700_000_000_050, echo=1_700_000_000_000),
    SendChat: ChatResult(seq=9),
}


def builtins(message: msgspec.Struct) -> object:
    """The plain map a message is on the wire."""
    return msgspec.to_builtins(message)
