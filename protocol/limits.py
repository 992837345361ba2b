"""Every bound the protocol puts on input, in one place.

Two kinds: static bounds are part of the v1 schema (lengths and ranges of fields; they
appear in the published JSON Schema and never change within v1); `Limits` are the
per-connection settings a server may tune (frame size, rate, time-outs) and announces in
`welcome`, so a client never has to guess them.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

# --- static bounds of the v1 schema ------------------------------------------------------

MAX_REQUEST_ID = 2**31 - 1
"""Request ids are 0 <= id <= 2**31 - 1: small enough for every language's int."""

MAX_SAFE_INT = 2**53 - 1
"""Largest integer JavaScript represents exactly; bounds seq numbers and times."""

MAX_SEATS = 6
MAX_NAME = 40
"""Display names of players and client software."""
MAX_ROOM_NAME = 60
MAX_ROOM_ID = 32
MAX_WORD = 32
"""Game names, option names, bot kinds, feature names, action words."""
MAX_TOKEN = 512
MAX_KEY = 128
"""Player keys (the `identity` feature): opaque, like seat tokens, but shorter."""
MAX_PLAYER_ID = 64
MAX_URL = 512
MAX_TOKENS = 16
MAX_FEATURES = 16
MAX_OPTIONS = 16
MAX_CHAT = 500
MAX_TURN_WINDOW = 3600
"""Seconds; the longest turn window a room may be created with."""
MAX_ROOMS_PAGE = 100
"""Rooms in one `rooms` reply, and its default: 100 of the largest entries the schema
allows take under 0.6 MB of JSON (every character escaped), within the Python client's
frame limit (1 MiB: `ReaderLimits`) however many rooms there are."""
MAX_CURSOR = 64
"""Characters of a `rooms` cursor (opaque: the `next` of the page before)."""
MAX_ACTION_FIELDS = 16
"""Fields of one action, `type` included: each game says which (rules/NAME/actions.py)."""
MAX_OPTION_INT = 2**31 - 1


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    """What a server enforces on one connection; sent to the client in `welcome`.

    Frames over `max_frame` bytes close the connection (1009); frames nested deeper than
    `max_depth` get `too-deep`. Each frame takes one token from a bucket of `burst` tokens
    refilled at `rate` per second: a frame finding the bucket empty gets `rate-limited`,
    one arriving when the debt exceeds another `burst` closes the connection (4002).
    `max_errors` protocol errors in a row close it too (4001).
    """

    max_frame: Annotated[int, Meta(ge=1, description="Bytes per frame.")] = 16384
    max_depth: Annotated[int, Meta(ge=1, description="Nesting of maps and lists.")] = 8
    rate: Annotated[int, Meta(ge=1, description="Messages per second, sustained.")] = 20
    burst: Annotated[int, Meta(ge=1, description="Messages at once after a quiet spell.")] = 40
    max_errors: Annotated[int, Meta(ge=1, description="Protocol errors in a row.")] = 10
    hello_timeout_ms: Annotated[int, Meta(ge=1, description="From open to `hello`.")] = 10_000
    idle_timeout_ms: Annotated[int, Meta(ge=1, description="Silence before a close.")] = 60_000
    heartbeat_ms: Annotated[
        int,
        Meta(
            ge=1,
            description="The server pings (WebSocket ping) this often; at most a third of"
            " `idle_timeout_ms`.",
        ),
    ] = 20_000


class ReaderLimits(msgspec.Struct, frozen=True, kw_only=True):
    """Bounds a client applies to the server's messages (views and events are free-form).

    Not sent on the wire: a client's own defence against a broken or hostile server.
    """

    max_frame: int = 1 << 20
    max_depth: int = 32
    max_string: int = 65536
    max_list: int = 4096
