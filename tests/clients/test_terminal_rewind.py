"""`dicehall play` when a failover takes its room back (docs/protocol.md, "Epochs"): the
unasked snapshot with a lower seq says so in the log, and the window it reopens is the
seat's to answer again, though the seat had answered it (and seen it close) in the history
that never happened. The room's messages fed straight to the terminal's `RoomLog`."""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from dicehall.clients.client import Resumed
from dicehall.clients.terminal_console import Console
from dicehall.clients.terminal_room import RoomLog
from dicehall.protocol.messages.common import Actor, RoomInfo, SeatAction, SeatInfo
from dicehall.protocol.messages.server import Snapshot, TurnWindow, Window, WindowClosed

ROOM = "r1"
INFO = RoomInfo(
    room=ROOM,
    name="Ann's table",
    game="qwixx",
    options={},
    status="playing",
    public=False,
    turn_window=30,
    seats=[
        SeatInfo(seat=0, kind="human", name="Ann", connected=True),
        SeatInfo(seat=1, kind="bot", name="strong-bot-1", connected=True),
    ],
)
DEADLINE = 1767225679000
ACTORS = [Actor(seat=0, kinds=["pass"]), Actor(seat=1, kinds=["pass"])]


@dataclass
class StubClient:
    """What `RoomLog` reads of its `Client`."""

    seats: dict[str, int] = field(default_factory=lambda: {ROOM: 0})
    resumes: list[Resumed] = field(default_factory=list)
    reconnects: int = 0
    url: str = "ws://stub/ws"


def snapshot(seq: int, window: int, epoch: int) -> Snapshot:
    turn = TurnWindow(window=window, deadline=DEADLINE, actors=ACTORS)
    return Snapshot(room=ROOM, seq=seq, seat=0, view={}, info=INFO, turn=turn, epoch=epoch)


def window(seq: int, number: int) -> Window:
    return Window(room=ROOM, seq=seq, window=number, deadline=DEADLINE, actors=ACTORS)


def closed(seq: int, number: int) -> WindowClosed:
    actions = [
        SeatAction(seat=0, action={"type": "pass"}, default=False),
        SeatAction(seat=1, action={"type": "pass"}, default=False),
    ]
    return WindowClosed(room=ROOM, seq=seq, window=number, actions=actions)


def test_a_room_taken_back_reopens_the_window_the_seat_answered() -> None:
    client = StubClient()
    screen = io.StringIO()
    room = RoomLog(client, ROOM, Console(screen))  # type: ignore[arg-type]
    room.note(snapshot(1, 0, 0))
    room.note(closed(2, 0))
    room.note(window(3, 1))
    room.done.add(1)  # (the seat answered window 1, as `Terminal.ask` marks it)
    room.note(closed(4, 1))
    room.note(window(5, 2))
    client.resumes.append(Resumed(ROOM, 3, "events", 5))  # a reconnect caught up to 5
    assert room._ours() is not None and room._ours().window == 2  # type: ignore[union-attr]
    assert not room._open_for_us(1) and room.replayed(5)

    # a failover took the room back to seq 3: window 1 open, the seat's answer lost
    room.note(snapshot(3, 1, 1))
    assert "went back to an earlier point (message 3)" in screen.getvalue()
    ours = room._ours()
    assert ours is not None and ours.window == 1
    assert room._open_for_us(1) and room.seq == 3
    # what follows is news, though the seqs were seen once: not a resume's replay
    assert not room.replayed(4) and not room.replayed(5)
    room.note(closed(4, 1))
    room.note(window(5, 2))
    assert room._ours() is not None and room._open_for_us(2) and not room._open_for_us(1)


def test_an_ordinary_snapshot_forgets_nothing() -> None:
    """A snapshot at or above the last seq (a join, a resume) is no failover: no line."""
    room = RoomLog(StubClient(), ROOM, Console(io.StringIO()))  # type: ignore[arg-type]
    room.note(snapshot(1, 0, 0))
    room.note(closed(2, 0))
    room.note(snapshot(2, 1, 0))
    assert 0 in room.closed and room.latest == 1
    assert "earlier point" not in room.console.out.getvalue()  # type: ignore[attr-defined]
