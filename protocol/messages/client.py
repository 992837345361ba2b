"""Messages a client sends: every one is a request with an `id` and gets one `reply`.

Decoding is strict (unknown fields are errors): the server must never guess what a
misspelt field meant.
"""

from __future__ import annotations

import typing
from typing import Annotated

import msgspec
from msgspec import Meta

from .. import names
from ..limits import MAX_FEATURES, MAX_TOKENS, MAX_TURN_WINDOW
from .common import Action
from .fields import (
    ChatText,
    Cursor,
    Epoch,
    Name,
    Options,
    PageSize,
    PlayerKey,
    RequestId,
    RoomId,
    RoomName,
    Seat,
    SeatCount,
    Seq,
    Token,
    UnixMillis,
    WindowId,
    Word,
)


class Request(
    msgspec.Struct, tag_field="type", forbid_unknown_fields=True, omit_defaults=True, kw_only=True
):
    """Base of the requests; every subclass is kw_only too, so `id` comes first on the wire."""

    id: RequestId


class Hello(Request, tag="hello", kw_only=True):
    """The first request on a connection. `tokens` are seat tokens to take seats back."""

    client: Name
    """The client program, e.g. "dicehall-py/0.1"."""
    name: Name | None = None
    """The player's display name; `join` uses it when it names none."""
    tokens: Annotated[list[Token], Meta(max_length=MAX_TOKENS)] = []
    features: Annotated[list[Word], Meta(max_length=MAX_FEATURES)] = []
    """Optional v1 features the client understands; the reply says which are on."""
    key: PlayerKey | None = None
    """With the feature `identity`: the player key an earlier `hello` reply gave, to be
    that player again (absent: the reply gives a new one)."""

    def __post_init__(self) -> None:
        names.check("client", names.hidden_character(self.client))
        if self.name is not None:
            names.check("name", names.display_name_problem(self.name))


class Games(Request, tag="games", kw_only=True):
    """List the games this server offers, with their options, presets and bots."""


class Rooms(Request, tag="rooms", kw_only=True):
    """List public rooms (of one game when `game` is given), a page at a time."""

    game: Word | None = None
    limit: PageSize | None = None
    """With the feature `lobby_pages`: rooms in the reply at most (the most when absent)."""
    cursor: Cursor | None = None
    """With the feature `lobby_pages`: the `next` of the page before; absent, the first."""


class Create(Request, tag="create", kw_only=True):
    """Create a room; the creator becomes its host and then joins or spectates it."""

    game: Word
    seats: SeatCount
    options: Options = {}
    preset: Word | None = None
    turn_window: Annotated[int, Meta(ge=1, le=MAX_TURN_WINDOW)] | None = None
    """Seconds per turn window; the server's default when absent."""
    public: bool = True
    name: RoomName | None = None
    autostart: bool = False
    """Start the game by itself as soon as every seat is held."""

    def __post_init__(self) -> None:
        if self.name is not None:
            names.check("name", names.hidden_character(self.name))


class Join(Request, tag="join", kw_only=True):
    """Take a seat (the first open one when `seat` is absent); the reply holds its token."""

    room: RoomId
    seat: Seat | None = None
    name: Name | None = None

    def __post_init__(self) -> None:
        if self.name is not None:
            names.check("name", names.display_name_problem(self.name))


class Spectate(Request, tag="spectate", kw_only=True):
    """Watch a room: public views only."""

    room: RoomId


class Leave(Request, tag="leave", kw_only=True):
    """Stop watching a room, or give up a seat (before the start it reopens the seat)."""

    room: RoomId


class Start(Request, tag="start", kw_only=True):
    """Start the game (host only); every seat must be held, by a player or a house bot."""

    room: RoomId


class AddBots(Request, tag="add_bots", kw_only=True):
    """Fill open seats with house bots (host only): `count` of them, or all when absent."""

    room: RoomId
    kind: Word | None = None
    count: SeatCount | None = None


class Act(Request, tag="act", kw_only=True):
    """A game action for the seat this connection holds in `room`.

    `window` names the turn window being answered: an answer to a window that has closed
    is refused (`window-closed`) instead of being applied to the next one.
    """

    room: RoomId
    action: Action
    window: WindowId | None = None


class Legal(Request, tag="legal", kw_only=True):
    """The legal actions of this connection's seat in `room` now, with its view."""

    room: RoomId
    view: bool = True
    """False (feature `legal_without_view` only): the reply's `view` is null."""


class Resume(Request, tag="resume", kw_only=True):
    """Catch up on a room after a reconnect: every message after `last_seq`, or a snapshot."""

    room: RoomId
    last_seq: Seq
    epoch: Epoch | None = None
    """With the feature `epochs`: the room's `epoch` as of `last_seq` (its last `snapshot`
    or `resume` reply said it)."""


class Ping(Request, tag="ping", kw_only=True):
    """Round-trip check; `time` (the client's clock) is echoed back."""

    time: UnixMillis | None = None


class SendChat(Request, tag="chat", kw_only=True):
    """Say something in a room (seats and spectators)."""

    room: RoomId
    text: ChatText

    def __post_init__(self) -> None:
        names.check("text", names.chat_problem(self.text))


ClientMessage = (
    Hello
    | Games
    | Rooms
    | Create
    | Join
    | Spectate
    | Leave
    | Start
    | AddBots
    | Act
    | Legal
    | Resume
    | Ping
    | SendChat
)

CLIENT_MESSAGES: tuple[type[Request], ...] = typing.get_args(ClientMessage)
"""The requests, as classes (the union above is their one list)."""
