"""Structures that appear inside several messages: errors, actions, game and room info."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from ..limits import (
    MAX_BOX,
    MAX_COORD,
    MAX_DICE,
    MAX_DIE_INDEX,
    MAX_NUMBER,
    MAX_ROW_INDEX,
    MAX_TILES,
    MAX_TURN_WINDOW,
    MAX_WORD,
    MIN_NUMBER,
)
from .fields import (
    Count,
    Name,
    OptionInt,
    Options,
    OptionValue,
    RoomId,
    RoomName,
    Seat,
    SeatCount,
    ServerUrl,
    Text,
    Word,
)


class ErrorBody(msgspec.Struct, omit_defaults=True, kw_only=True):
    """An error from the catalogue (docs/protocol.md): `code` and `name` are stable."""

    code: int
    name: str
    message: Text
    rule: Word | None = None
    """For `illegal-action`: the rules engine's name of the broken rule."""


# --- actions ---------------------------------------------------------------------------

Box = Annotated[int, Meta(ge=0, le=MAX_BOX)]
Number = Annotated[int, Meta(ge=MIN_NUMBER, le=MAX_NUMBER)]
DieIndex = Annotated[int, Meta(ge=0, le=MAX_DIE_INDEX)]
RowIndex = Annotated[int, Meta(ge=0, le=MAX_ROW_INDEX)]
Coord = Annotated[int, Meta(ge=-MAX_COORD, le=MAX_COORD)]
ActionType = Annotated[str, Meta(min_length=1, max_length=MAX_WORD)]


class Tile(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """A Qwirkle tile: `x` and `y` when placed, absent when swapped."""

    color: Word
    shape: Word
    x: Coord | None = None
    y: Coord | None = None


class Action(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """A game action (docs/rules.md, "Actions on the wire"); the game checks its legality.

    Every field but `type` is optional here; each game requires its own (qwinto `enter`:
    `row`, `box`; qwixx `mark`: `row`, `number`; qwirkle `place`/`swap`: `tiles`; yamb
    `roll`: `hold`, `call`: `row`, `write`: `column`, `row`; every game: `pass`).
    """

    type: ActionType
    dice: Annotated[list[Word], Meta(max_length=MAX_DICE)] | None = None
    row: Word | RowIndex | None = None
    box: Box | None = None
    number: Number | None = None
    tiles: Annotated[list[Tile], Meta(max_length=MAX_TILES)] | None = None
    hold: Annotated[list[DieIndex], Meta(max_length=MAX_DICE)] | None = None
    column: Word | None = None

    def as_dict(self) -> dict[str, Any]:
        """The plain map the rules engine takes (absent fields left out)."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


# --- games -------------------------------------------------------------------------------


class OptionInfo(msgspec.Struct, omit_defaults=True, kw_only=True):
    """One option of a game: a bool, an integer in [min, max], or one of `choices`."""

    name: Word
    default: OptionValue
    description: Text
    min: OptionInt | None = None
    max: OptionInt | None = None
    choices: list[Word] | None = None


class GameInfo(msgspec.Struct, kw_only=True):
    """What `games` tells about one game (and what `create` may ask of it)."""

    name: Word
    title: Text
    min_seats: SeatCount
    max_seats: SeatCount
    options: list[OptionInfo]
    presets: dict[Word, Options]
    bots: list[Word] = []
    """House bot kinds `add_bots` accepts for this game."""


# --- rooms -------------------------------------------------------------------------------


class SeatInfo(msgspec.Struct, kw_only=True):
    """Who holds a seat. `name` is null for an open seat."""

    seat: Seat
    kind: Literal["open", "human", "bot"]
    name: Name | None = None
    connected: bool = False


class RoomInfo(msgspec.Struct, kw_only=True):
    """The public description of a room, as `rooms`, `create` and snapshots show it."""

    room: RoomId
    name: RoomName
    game: Word
    options: Options
    """The resolved options: defaults, then the preset, then the creator's."""
    status: Literal["open", "playing", "over"]
    public: bool
    turn_window: Annotated[int, Meta(ge=1, le=MAX_TURN_WINDOW)]
    """Seconds each turn window stays open."""
    seats: list[SeatInfo]
    spectators: Count = 0
    commitment: str | None = None
    """SHA-256 (hex) of the dice seed, published when the game starts."""
    host: Seat | None = None
    """The seat of the room's host, the one who starts the game and adds bots; null while
    no seat hosts (the creator has not sat down, or no person sits since the host left)."""
    url: ServerUrl | None = None
    """Where the server process that runs the room takes connections (docs/protocol.md,
    "Following a room to its server"): in `rooms` entries and `create`'s reply, when the
    deployment advertises its processes' addresses; null in room messages."""


class HeldSeat(msgspec.Struct, kw_only=True):
    """A seat this connection holds."""

    room: RoomId
    seat: Seat


class Actor(msgspec.Struct, kw_only=True):
    """A seat that may act in a turn window and the action types legal for it."""

    seat: Seat
    kinds: list[Word]


class SeatAction(msgspec.Struct, kw_only=True):
    """What one actor did in a closed window; `default` marks the rules' time-out default."""

    seat: Seat
    action: dict[str, Any] | None
    """The action applied (null when the default was to do nothing)."""
    default: bool
