"""The one exception tree of protocol/, which is also the error catalogue.

Every error a server sends is a `ProtocolError` subclass that declares a stable `code`,
`name` and `meaning`; the docs table is rendered from these classes (protocol/reference.py)
so it cannot drift. Codes are grouped by range: 1xxx the wire protocol itself, 2xxx lobby
and rooms, 3xxx the game, 4xxx the server. Codes and names never change meaning once
published; new ones may be added within v1.

Error codes are not WebSocket close codes (see protocol/close.py): an error answers one
message and the connection stays open.
"""

from __future__ import annotations

import re
from typing import ClassVar

from .messages.common import ErrorBody

_CATALOGUE: dict[int, type[ProtocolError]] = {}
_NAME = re.compile(r"^[a-z]+(-[a-z]+)*$")


class ProtocolError(Exception):
    """Base of every error protocol/ raises; a leaf class is one catalogue entry.

    `request_id` is the id of the request being answered when it is known (so the error
    becomes a `reply`), `rule` the rules engine's rule name for `illegal-action`.
    """

    code: ClassVar[int] = 0
    name: ClassVar[str] = ""
    meaning: ClassVar[str] = ""
    low: ClassVar[int] = 0
    high: ClassVar[int] = 0

    def __init__(
        self, message: str | None = None, *, request_id: int | None = None, rule: str | None = None
    ) -> None:
        super().__init__(message or self.meaning)
        self.request_id = request_id
        self.rule = rule

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "code" not in cls.__dict__:
            return
        if not cls.low <= cls.code <= cls.high:
            raise TypeError(f"{cls.__name__}: code {cls.code} outside {cls.low}..{cls.high}")
        if cls.code in _CATALOGUE:
            raise TypeError(f"{cls.__name__}: code {cls.code} already used")
        if not _NAME.match(cls.name) or any(c.name == cls.name for c in _CATALOGUE.values()):
            raise TypeError(f"{cls.__name__}: bad or duplicate name {cls.name!r}")
        if not cls.meaning:
            raise TypeError(f"{cls.__name__}: a catalogue entry needs a meaning")
        _CATALOGUE[cls.code] = cls

    @property
    def message(self) -> str:
        return str(self.args[0])

    def body(self) -> ErrorBody:
        return ErrorBody(code=self.code, name=self.name, message=self.message, rule=self.rule)


def catalogue() -> list[type[ProtocolError]]:
    """Every catalogue entry, by code."""
    return [_CATALOGUE[c] for c in sorted(_CATALOGUE)]


def by_code(code: int) -> type[ProtocolError] | None:
    return _CATALOGUE.get(code)


def from_body(body: ErrorBody) -> ProtocolError:
    """The exception a client raises for an error the server sent."""
    cls = _CATALOGUE.get(body.code, ProtocolError)
    return cls(body.message, rule=body.rule)


# --- groups ---------------------------------------------------------------------------


class WireError(ProtocolError):
    """1xxx: the frame or the message breaks the protocol itself."""

    low, high = 1000, 1999


class LobbyError(ProtocolError):
    """2xxx: games, rooms and seats."""

    low, high = 2000, 2999


class GameError(ProtocolError):
    """3xxx: the game refused an action."""

    low, high = 3000, 3999


class ServerError(ProtocolError):
    """4xxx: the server cannot serve the request now."""

    low, high = 4000, 4999


# --- 1xxx -------------------------------------------------------------------------------


class MalformedError(WireError):
    code, name = 1001, "malformed"
    meaning = "The frame is not valid MessagePack or JSON (truncated, trailing bytes, bad UTF-8)."


class TooLargeError(WireError):
    code, name = 1002, "too-large"
    meaning = "The frame is longer than `max_frame` bytes; the connection is closed (1009)."


class TooDeepError(WireError):
    code, name = 1003, "too-deep"
    meaning = "Maps and lists are nested deeper than `max_depth`."


class InvalidMessageError(WireError):
    code, name = 1004, "invalid-message"
    meaning = (
        "The message does not match its schema: a field missing, unknown or of the wrong type,"
        " a string or list too long, an integer out of range. The message says where."
    )


class UnknownTypeError(WireError):
    code, name = 1005, "unknown-type"
    meaning = "`type` is not a client message of this protocol version."


class HelloFirstError(WireError):
    code, name = 1006, "hello-first"
    meaning = "The first request on a connection must be `hello`; this one was not handled."


class AlreadyHelloError(WireError):
    code, name = 1007, "already-hello"
    meaning = "`hello` was already sent on this connection."


class DuplicateIdError(WireError):
    code, name = 1008, "duplicate-id"
    meaning = (
        "The request id is not greater than every earlier id on this connection (a replay or"
        " an old request); the request was not handled."
    )


class WrongFrameError(WireError):
    code, name = 1009, "wrong-frame"
    meaning = "A text frame on the MessagePack subprotocol, or a binary frame on the JSON one."


# --- 2xxx -------------------------------------------------------------------------------


class NoSuchGameError(LobbyError):
    code, name = 2001, "no-such-game"
    meaning = "No game of that name; `games` lists them."


class BadOptionsError(LobbyError):
    code, name = 2002, "bad-options"
    meaning = (
        "The game rejected the options, preset, seat count or turn window; the message says why."
    )


class NoSuchRoomError(LobbyError):
    code, name = 2003, "no-such-room"
    meaning = "No room with that id (it never existed, or it ended and was removed)."


class RoomFullError(LobbyError):
    code, name = 2004, "room-full"
    meaning = "The room has no empty seat left."


class SeatTakenError(LobbyError):
    code, name = 2005, "seat-taken"
    meaning = "That seat is already held by someone else."


class NoSuchSeatError(LobbyError):
    code, name = 2006, "no-such-seat"
    meaning = "The room has no seat with that index."


class NotInRoomError(LobbyError):
    code, name = 2007, "not-in-room"
    meaning = "This connection neither sits in nor watches that room."


class AlreadyInRoomError(LobbyError):
    code, name = 2008, "already-in-room"
    meaning = "This connection already sits in or watches that room."


class AlreadyStartedError(LobbyError):
    code, name = 2009, "already-started"
    meaning = "The game has started: seats can no longer be joined, filled with bots or started."


class ForbiddenError(LobbyError):
    code, name = 2010, "forbidden"
    meaning = "This connection may not do that here (only the room's host starts it and adds bots)."


class NoSuchBotError(LobbyError):
    code, name = 2011, "no-such-bot"
    meaning = "The server has no house bot of that kind for this game."


class BadKeyError(LobbyError):
    code, name = 2012, "bad-key"
    meaning = (
        "The player key in `hello` was not issued by this server (forged, altered, or from"
        " another deployment); nothing changed: send `hello` again, without `key` to get a"
        " new identity."
    )


class TooManyRoomsError(ForbiddenError):
    """(A `forbidden` before it had a code of its own: Python callers that catch that
    still catch this.)"""

    code, name = 2013, "too-many-rooms"
    meaning = (
        "This connection, or its network address, hosts as many rooms as it may at once"
        " (created, game not over): finish a game first, or wait for a room nobody sits in"
        " to close."
    )


# --- 3xxx -------------------------------------------------------------------------------


class IllegalActionError(GameError):
    code, name = 3001, "illegal-action"
    meaning = "The rules forbid this action now; `rule` names the rule (stable, kebab-case)."


class NotYourTurnError(GameError):
    code, name = 3002, "not-your-turn"
    meaning = "Your seat is not an actor of the open turn window (or has already answered it)."


class WindowClosedError(GameError):
    code, name = 3003, "window-closed"
    meaning = "The action names a turn window that has already closed: a late answer."


class GameOverError(GameError):
    code, name = 3004, "game-over"
    meaning = "The game is over."


class NotStartedError(GameError):
    code, name = 3005, "not-started"
    meaning = "The game has not started yet."


class NotSeatedError(GameError):
    code, name = 3006, "not-seated"
    meaning = "Spectators cannot act; join a seat to play."


# --- 4xxx -------------------------------------------------------------------------------


class RateLimitedError(ServerError):
    code, name = 4001, "rate-limited"
    meaning = "Too many messages: wait (see `rate` and `burst` in `welcome`); this one was dropped."


class InternalError(ServerError):
    code, name = 4002, "internal"
    meaning = "The server failed while handling the request; it is logged. Retrying may help."


class ShuttingDownError(ServerError):
    code, name = 4003, "shutting-down"
    meaning = "The server is going away; reconnect and resume (another instance takes over)."


class OverloadedError(ServerError):
    code, name = 4004, "overloaded"
    meaning = "The server is at capacity (rooms or connections); try later."


class UnavailableError(ServerError):
    code, name = 4005, "unavailable"
    meaning = (
        "The room is moving to another server process, or the server cannot reach its"
        " store (Redis); retry in a moment. A request already under way may still take"
        " effect: look at the room (`resume`, `legal`) before sending an action again."
    )


class ProtocolMisuse(InternalError):
    """The program using protocol/ broke its contract (e.g. replied twice to one request).

    A bug in the caller, never caused by a peer; on the wire it is an `internal` error.
    """
