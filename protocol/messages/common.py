"""Structures that appear inside several messages: errors, actions, game and room info."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from ..limits import MAX_ACTION_FIELDS, MAX_SAFE_INT, MAX_TURN_WINDOW, MAX_WORD
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

_Int = Annotated[int, Meta(ge=-MAX_SAFE_INT, le=MAX_SAFE_INT)]
_Scalar = bool | _Int | str | None
_Value1 = _Scalar | list[_Scalar] | dict[str, _Scalar]
_Value2 = _Scalar | list[_Value1] | dict[str, _Value1]
ActionValue = _Scalar | list[_Value2] | dict[str, _Value2]
"""A field of an action: what JSON and MessagePack share but floats (v1 has none), lists
and maps nested at most three deep (a Qwirkle tile in `tiles` is two)."""

Action = Annotated[
    dict[str, ActionValue],
    Meta(
        max_length=MAX_ACTION_FIELDS,
        description="A game action: a map with a `type`, an action word, and the fields of the"
        " room's game, which the server checks against that game's own schema (docs/games/,"
        ' each game\'s page; docs/rules.md, "Actions on the wire"); the game checks its'
        " legality.",
        extra_json_schema={
            "properties": {
                "type": {"type": "string", "minLength": 1, "maxLength": MAX_WORD},
            },
            "required": ["type"],
        },
    ),
]
"""An action as the protocol carries it: a plain map. What fields it may have is each
game's (rules/NAME/actions.py), checked by the server where it knows the room's game."""


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
