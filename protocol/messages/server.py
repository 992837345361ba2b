"""Messages the server sends.

Clients decode these leniently: unknown fields and unknown message types are ignored, so
a v1 server can add to them without breaking a v1 client (docs/protocol.md, Versioning).
Room messages carry `room` and `seq`: one gap-free sequence per room, shared by every
kind of room message.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Meta

from ..limits import Limits
from .common import Actor, ErrorBody, RoomInfo, SeatAction
from .fields import (
    ChatText,
    Count,
    Epoch,
    Hex64,
    JsonMap,
    Name,
    RequestId,
    RoomId,
    Score,
    Seat,
    Seq,
    Text,
    UnixMicros,
    UnixMillis,
    WindowId,
    Word,
)


class ServerMessage(msgspec.Struct, tag_field="type", kw_only=True):
    pass


class Welcome(ServerMessage, tag="welcome"):
    """Sent first, as soon as the socket is open: who the server is and its limits."""

    server: Text
    protocol: Text
    """The negotiated subprotocol, e.g. "dicehall.v1.json"."""
    limits: Limits
    features: list[Word] = []
    """Optional v1 features this server offers; `hello` picks among them."""


class Reply(ServerMessage, tag="reply", omit_defaults=True):
    """The one answer to a request: `result` when `ok`, else `error`."""

    id: RequestId
    ok: bool
    result: Annotated[Any, Meta(extra_json_schema={"type": "object"})] = None
    """Shape per request type: see the result schemas (docs/protocol/v1/results/)."""
    error: ErrorBody | None = None


class ErrorMessage(ServerMessage, tag="error"):
    """A protocol error that answers no request: the frame's id could not be read."""

    error: ErrorBody


class TurnWindow(msgspec.Struct, kw_only=True):
    """An open turn window: who may act, until when, and with which action types."""

    window: WindowId
    deadline: UnixMillis
    actors: list[Actor]


class RoomMessage(ServerMessage):
    room: RoomId
    seq: Seq


class Snapshot(RoomMessage, tag="snapshot"):
    """Everything a member needs to (re)draw a room, as of `seq`.

    Sent after `join`, `spectate` and a `resume` whose missed messages aged out, and
    unasked when a failover took the room back to an earlier point (its `epoch` changed):
    it replaces everything the client knew of the room, its last seq included, even a
    higher one. Room messages that follow continue from `seq` + 1.
    """

    seat: Seat | None
    """The seat this connection holds, or null for a spectator."""
    view: JsonMap
    """The game state as this seat may see it (empty before the start)."""
    info: RoomInfo
    turn: TurnWindow | None = None
    """The open turn window, if any."""
    epoch: Epoch = 0
    """Which history of the room `seq` numbers (docs/protocol.md, "Epochs")."""


class RoomUpdate(RoomMessage, tag="room", omit_defaults=True):
    """The room's public info changed: a seat was taken or freed, the game started..."""

    info: RoomInfo
    sent_us: UnixMicros | None = None
    """With the `timestamps` feature: when the server fanned this message out."""


class Event(RoomMessage, tag="event", omit_defaults=True):
    """A game event (a roll, a mark, a draw...), already reduced to this member's view."""

    event: JsonMap
    sent_us: UnixMicros | None = None
    """With the `timestamps` feature: when the server fanned this message out."""


class Window(RoomMessage, tag="window", omit_defaults=True):
    """A turn window opened: `actors` must answer with `act` before `deadline`."""

    window: WindowId
    deadline: UnixMillis
    actors: list[Actor]
    sent_us: UnixMicros | None = None
    """With the `timestamps` feature: when the server fanned this message out."""
    legal: list[JsonMap] | None = None
    """With the `legal_in_window` feature, in the copy for a seat among `actors`: that
    seat's legal actions (as a `legal` reply lists them)."""


class WindowClosed(RoomMessage, tag="window_closed", omit_defaults=True):
    """A turn window closed: what each actor did, defaults for the ones that timed out."""

    window: WindowId
    actions: list[SeatAction]
    sent_us: UnixMicros | None = None
    """With the `timestamps` feature: when the server fanned this message out."""


class GameOver(RoomMessage, tag="game_over", omit_defaults=True):
    """The game ended. `seed` is revealed: sha256(seed) == `commitment`; every roll follows."""

    scores: list[Score]
    winners: list[Seat]
    seed: Hex64
    commitment: Hex64
    sent_us: UnixMicros | None = None
    """With the `timestamps` feature: when the server fanned this message out."""


class Chat(RoomMessage, tag="chat"):
    """A chat line; `seat` is null when a spectator wrote it."""

    sender: Name = msgspec.field(name="from")
    text: ChatText
    seat: Seat | None = None


class Progress(RoomMessage, tag="progress"):
    """With the `progress` feature: the seats whose answer to the open shared window is in.

    Takes no number of its own: `seq` is the last numbered room message's, as in a
    snapshot, and the message is a live hint, not part of the room's record. The answers
    themselves are shown as `answered` events when the window resolves.
    """

    window: WindowId
    answered: list[Seat]


class Goodbye(ServerMessage, tag="goodbye", omit_defaults=True):
    """Sent just before the server closes the socket; `code` is the close code."""

    code: int
    reason: Text
    retry_ms: Count | None = None
    """When set: reconnect after this many milliseconds (e.g. on a server restart)."""


ServerMessageType = (
    Welcome
    | Reply
    | ErrorMessage
    | Snapshot
    | RoomUpdate
    | Event
    | Window
    | WindowClosed
    | GameOver
    | Chat
    | Progress
    | Goodbye
)

SERVER_MESSAGES: tuple[type[ServerMessage], ...] = (
    Welcome,
    Reply,
    ErrorMessage,
    Snapshot,
    RoomUpdate,
    Event,
    Window,
    WindowClosed,
    GameOver,
    Chat,
    Progress,
    Goodbye,
)

ROOM_MESSAGES: tuple[type[RoomMessage], ...] = (
    Snapshot,
    RoomUpdate,
    Event,
    Window,
    WindowClosed,
    GameOver,
    Chat,
    Progress,
)
