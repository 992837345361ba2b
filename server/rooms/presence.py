"""Whether anybody is in a room, and when nobody has been for long enough that it closes.

Plain functions of the seats, spectators and status a room keeps: the host
(server/hosting/host.py) asks the room (`RoomView`, server/rooms/roomview.py), the room asks
these, so that the closing rules read in one place apart from what the room does.
"""

from __future__ import annotations

from .seat import Seat, Status


def deserted(status: Status, spectators: int, seats: list[Seat]) -> bool:
    """The game is over and nobody will come back to it: every seat a person held was
    given up with `leave` (none is merely disconnected, whose holder may resume to see
    the end) and nobody watches. House bots do not count: they go with the room."""
    return status == "over" and spectators == 0 and all(s.left for s in seats if s.kind == "human")


def closable(
    status: Status,
    spectators: int,
    seats: list[Seat],
    quiet: float,
    idle_seconds: float,
    over_seconds: float,
    empty_seconds: float = 0.0,
) -> bool:
    """Nobody is in the room and it has been `quiet` long enough: `idle_seconds`, or
    `over_seconds` once the game is over, or no time at all once it is `deserted`, or
    `empty_seconds` (when given) before the start: a room created and never sat in, or
    whose people all went (closed the tab: a reload comes back well within it), is
    lobby spam and a trap for quick match more often than a table waiting for people.

    Nobody: no connected person in a seat, no spectator. House bots do not count: they
    never leave by themselves, and they go with the room."""
    if spectators > 0 or any(s.kind == "human" and s.connected for s in seats):
        return False
    if deserted(status, spectators, seats):
        return True
    limit = over_seconds if status == "over" else idle_seconds
    if empty_seconds and status == "open":
        limit = min(limit, empty_seconds)
    return quiet > limit


def forget_presence(seats: list[Seat]) -> None:
    """Nobody is connected (a process took the room over: connections are per
    process, and each comes back with `hello` or `spectate`); house bots are, since
    the new owner seats them again."""
    for s in seats:
        s.connected = 1 if s.kind == "bot" else 0
