"""WebSocket close codes the server uses, and the rule for close reasons.

1000-1015 are RFC 6455's; 4000-4999 are the range RFC 6455 leaves to applications.
A `goodbye` message with the same code and reason precedes every close the server starts,
for clients whose WebSocket API hides the close frame, except where no message can be sent
(docs/protocol.md, "Close codes": no subprotocol agreed, a frame far over the limit).
"""

from __future__ import annotations

from enum import IntEnum


class CloseCode(IntEnum):
    NORMAL = 1000
    GOING_AWAY = 1001
    MESSAGE_TOO_BIG = 1009
    INTERNAL_ERROR = 1011
    UNSUPPORTED_SUBPROTOCOL = 4000
    PROTOCOL_ABUSE = 4001
    RATE_LIMIT = 4002
    SLOW_CONSUMER = 4003
    IDLE_TIMEOUT = 4004
    HELLO_TIMEOUT = 4005
    REPLACED = 4006


MEANINGS: dict[CloseCode, str] = {
    CloseCode.NORMAL: "The client or the server ended the session normally.",
    CloseCode.GOING_AWAY: "The server is shutting down or restarting; reconnect and resume.",
    CloseCode.MESSAGE_TOO_BIG: "A frame exceeded `max_frame` bytes.",
    CloseCode.INTERNAL_ERROR: "The server hit an unexpected condition; reconnect and resume.",
    CloseCode.UNSUPPORTED_SUBPROTOCOL: (
        "The client offered no supported subprotocol; the reason lists the supported ones."
    ),
    CloseCode.PROTOCOL_ABUSE: "`max_errors` protocol errors in a row.",
    CloseCode.RATE_LIMIT: "The client kept sending far past its rate limit (a flood).",
    CloseCode.SLOW_CONSUMER: (
        "The client read too slowly and the server's outbound queue for it filled up"
        " (1,024 frames or 1 MiB by default, replies included), after a `goodbye`; a client"
        " that sends requests and never reads is cut off the same way. The `goodbye` and"
        " the close frame wait behind what the client has not read: one that reads none of"
        " it within 10 s of the cut is dropped without them."
    ),
    CloseCode.IDLE_TIMEOUT: "Nothing heard from the client for `idle_timeout_ms`.",
    CloseCode.HELLO_TIMEOUT: "No `hello` within `hello_timeout_ms` of the connection opening.",
    CloseCode.REPLACED: "Another connection took over this connection's seat with its token.",
}

MAX_REASON_BYTES = 123
"""A close frame's payload is at most 125 bytes, two of which hold the code."""


def reason(text: str) -> str:
    """`text` cut to fit a close frame, on a UTF-8 character boundary."""
    data = text.encode()
    if len(data) <= MAX_REASON_BYTES:
        return text
    return data[:MAX_REASON_BYTES].decode(errors="ignore")
