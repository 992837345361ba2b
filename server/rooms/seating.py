"""Who may take which of a room's seats, and which seat hosts: rules over the seat list.

Plain functions of the seats (and the host's seat and key) the room keeps, so that the
room (server/rooms/room.py) only decides when to ask and what to tell its members after.
"""

from __future__ import annotations

from dicehall.protocol import errors

from ..connections.identity import house_player
from .seat import Seat, Status


def open_seats(seats: list[Seat]) -> list[int]:
    return [i for i, s in enumerate(seats) if s.kind == "open"]


def seat_to_join(seats: list[Seat], seat: int | None) -> int:
    """The seat a human joins: the one asked for if it is open, else the first open one."""
    if seat is None:
        free = open_seats(seats)
        if not free:
            raise errors.RoomFullError("every seat is taken")
        return free[0]
    if not 0 <= seat < len(seats):
        raise errors.NoSuchSeatError(f"this room has seats 0..{len(seats) - 1}")
    if seats[seat].kind != "open":
        raise errors.SeatTakenError(f"seat {seat} is taken")
    return seat


def bot_seat(kind: str, seat: int) -> Seat:
    """A house bot's seat: present from the start (it never connects), played as
    `house:<kind>`."""
    return Seat("bot", f"{kind}-bot-{seat}", None, bot=kind, connected=1, player=house_player(kind))


def not_started(status: Status) -> None:
    """Seats are joined and filled with bots before the start only (the catalogue's
    `already-started`); every seat is held once the game runs."""
    if status == "over":
        raise errors.GameOverError("the game in this room is over")
    if status == "playing":
        raise errors.AlreadyStartedError("the game has started: its seats are all held")


def holds_token(seats: list[Seat], seat: int, nonce: str) -> bool:
    return 0 <= seat < len(seats) and seats[seat].nonce == nonce


# --- the host -------------------------------------------------------------------------
# The creator hosts (by its key) until it sits; then its seat does, whichever connection
# holds it. The role passes on when the host goes (`next_host`).


def check_host(host: int | None, host_key: str, key: str | None, seat: int | None) -> None:
    """Refuse (`forbidden`) whoever is not the host: the host's seat, or while no seat
    hosts, the creator's key."""
    if host is not None:
        if seat == host:
            return
    elif key and key == host_key:
        return
    who = "the creator" if host is None else f"seat {host}"
    raise errors.ForbiddenError(f"only the room's host ({who}) may do that")


def may_take_host(s: Seat) -> bool:
    return s.kind == "human" and not s.left


def someone_present_may_host(seats: list[Seat]) -> bool:
    """A connected person sits who could take the role (a host who goes hands it on only
    then: with nobody there, it keeps it until someone comes)."""
    return any(s.connected for s in seats if may_take_host(s))


def next_host(seats: list[Seat], host: int | None) -> int | None:
    """The next seated person after the host in seat order, one with a connection first;
    None with nobody seated (then the next person to sit hosts)."""
    n = len(seats)
    after = host if host is not None else n - 1
    order = [(after + step) % n for step in range(1, n + 1)]
    people = [i for i in order if i != host and may_take_host(seats[i])]
    present = [i for i in people if seats[i].connected]
    return (present or people)[0] if people else None
