"""Constrained field types shared by the messages: one definition per kind of value.

The constraints live in the types so that decoding validates them in the same pass and
the JSON Schema shows them.
"""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import Meta

from ..limits import (
    MAX_CHAT,
    MAX_CURSOR,
    MAX_KEY,
    MAX_NAME,
    MAX_OPTION_INT,
    MAX_OPTIONS,
    MAX_PLAYER_ID,
    MAX_REQUEST_ID,
    MAX_ROOM_ID,
    MAX_ROOM_NAME,
    MAX_ROOMS_PAGE,
    MAX_SAFE_INT,
    MAX_SEATS,
    MAX_TOKEN,
    MAX_URL,
    MAX_WORD,
)

_PRINTABLE = r"^[^\x00-\x1f\x7f]*$"
"""No control characters: names and chat are shown in terminals and browsers."""

RequestId = Annotated[
    int,
    Meta(ge=0, le=MAX_REQUEST_ID, description="Client-chosen; strictly increasing per connection."),
]
Seq = Annotated[
    int,
    Meta(ge=0, le=MAX_SAFE_INT, description="Per-room sequence number; 1, 2, 3... no gaps."),
]
Epoch = Annotated[
    int,
    Meta(
        ge=0,
        le=MAX_SAFE_INT,
        description="Which history of a room its seqs number: it changes when a failover "
        "took the room back to an earlier seq.",
    ),
]
UnixMillis = Annotated[
    int, Meta(ge=0, le=MAX_SAFE_INT, description="Absolute time: unix milliseconds.")
]
UnixMicros = Annotated[
    int, Meta(ge=0, le=MAX_SAFE_INT, description="Absolute time: unix microseconds.")
]
Count = Annotated[int, Meta(ge=0, le=MAX_SAFE_INT)]
Seat = Annotated[int, Meta(ge=0, lt=MAX_SEATS, description="Seat index, 0-based.")]
SeatCount = Annotated[int, Meta(ge=1, le=MAX_SEATS)]
WindowId = Annotated[int, Meta(ge=0, le=MAX_SAFE_INT, description="Turn window id.")]
Score = Annotated[int, Meta(ge=-MAX_SAFE_INT, le=MAX_SAFE_INT)]

Name = Annotated[str, Meta(min_length=1, max_length=MAX_NAME, pattern=_PRINTABLE)]
RoomName = Annotated[str, Meta(min_length=1, max_length=MAX_ROOM_NAME, pattern=_PRINTABLE)]
# Room ids, words and action types travel in every `act`; a regex there would triple the
# decode time (docs/benchmarks/journal.md, "Protocol codec") and buy nothing: the server
# looks room ids up and the rules engine checks every word. Lengths are still bounded.
RoomId = Annotated[
    str,
    Meta(min_length=1, max_length=MAX_ROOM_ID, description="Room id chosen by the server."),
]
Word = Annotated[str, Meta(min_length=1, max_length=MAX_WORD)]
Token = Annotated[
    str,
    Meta(min_length=1, max_length=MAX_TOKEN, pattern=r"^[\x21-\x7e]+$", description="Opaque."),
]
PlayerKey = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=MAX_KEY,
        pattern=r"^[\x21-\x7e]+$",
        description="Opaque and secret: whoever holds it is that player.",
    ),
]
PlayerId = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=MAX_PLAYER_ID,
        pattern=r"^[A-Za-z0-9_:-]+$",
        description="Public: names the player in the server's records.",
    ),
]
ServerUrl = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=MAX_URL,
        pattern=r"^wss?://[\x21-\x7e]+$",
        description="A WebSocket URL (ws:// or wss://) of one server process.",
    ),
]
Cursor = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=MAX_CURSOR,
        pattern=r"^[\x21-\x7e]+$",
        description="Opaque: where the next page of `rooms` starts.",
    ),
]
PageSize = Annotated[int, Meta(ge=1, le=MAX_ROOMS_PAGE)]
ChatText = Annotated[str, Meta(min_length=1, max_length=MAX_CHAT, pattern=_PRINTABLE)]
Hex64 = Annotated[str, Meta(pattern=r"^[0-9a-f]{64}$")]
Text = str
"""Free text written by the server (error messages, reasons): not bounded by the schema."""

OptionInt = Annotated[int, Meta(ge=-MAX_OPTION_INT, le=MAX_OPTION_INT)]
OptionValue = bool | OptionInt | Word
Options = Annotated[
    dict[Word, OptionValue],
    Meta(max_length=MAX_OPTIONS, description="Game options by name (see `games`)."),
]

JsonMap = Annotated[
    dict[str, Any],
    Meta(description="A map defined by the game's rules engine (docs/rules), JSON-like."),
]
