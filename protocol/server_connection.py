"""The server's side of one connection, sans I/O (after `websockets`' Protocol classes).

Feed it each frame with the time; it returns the requests the application must handle
and the frames it produced itself (protocol errors, goodbyes) with any close
instruction. It owns everything the wire protocol promises per connection: hello first,
strictly increasing ids, exactly one reply per request, rate limiting, abuse detection,
time-outs. It never touches a socket or a clock, so all of this is tested without them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

import msgspec

from .close import CloseCode, reason
from .codec import ClientMessageDecoder, Frame, encode
from .errors import (
    AlreadyHelloError,
    DuplicateIdError,
    HelloFirstError,
    ProtocolError,
    ProtocolMisuse,
    RateLimitedError,
    TooLargeError,
    WireError,
)
from .limits import Limits
from .messages.client import ClientMessage, Hello
from .messages.server import ErrorMessage, Goodbye, Reply, ServerMessage, Welcome
from .subprotocols import Encoding, subprotocol

# --- rate limiting: a token bucket with an injected clock, tested without sleeping ----


class Admission(Enum):
    ALLOW = "allow"
    LIMIT = "limit"
    """Over the rate: refuse this message, keep the connection."""
    CLOSE = "close"
    """Far over the rate (a flood): close the connection."""


_ALLOW: Final = Admission.ALLOW
_LIMIT: Final = Admission.LIMIT
_CLOSE: Final = Admission.CLOSE
"""(The members as module constants, for every message of every client: a lookup on an
enum class costs five times a plain attribute's; docs/contributing.md, "Hot paths".)"""


class TokenBucket:
    """`burst` tokens refilled at `rate` per second; each message takes one.

    The bucket may run into debt down to -`burst`: messages in debt are refused, and the
    debt only shrinks while the client slows down, so a client that ignores the refusals
    soon passes the floor and is closed (its debt stops at -`burst` - 1), while one that
    backs off recovers.
    """

    __slots__ = ("_burst", "_last", "_rate", "_tokens")

    def __init__(self, rate: float, burst: int, now: float) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate and burst must be positive")
        self._rate = rate
        self._burst = float(burst)  # (a float: `tokens = burst` below stays one float)
        self._tokens = float(burst)
        self._last = now

    @property
    def tokens(self) -> float:
        return self._tokens

    def take(self, now: float) -> Admission:
        # (comparisons, not min and max: this runs for every message of every client)
        tokens = self._tokens
        if now > self._last:
            tokens += (now - self._last) * self._rate
            self._last = now
        burst = self._burst
        if tokens > burst:
            tokens = burst
        tokens -= 1.0
        if tokens >= 0:
            self._tokens = tokens
            return _ALLOW
        # (a flood past the floor stays at it: what a closed client owes grows no further)
        floor = -burst - 1.0
        self._tokens = tokens if tokens > floor else floor
        if tokens >= -burst:
            return _LIMIT
        return _CLOSE


@dataclass(frozen=True, slots=True)
class Send:
    """Write this frame to the socket."""

    frame: Frame


@dataclass(frozen=True, slots=True)
class Close:
    """Close the socket with this code and reason (a `goodbye` was sent just before)."""

    code: CloseCode
    reason: str


Output = Send | Close
Received = ClientMessage | Send | Close


class ConnectionState(Enum):
    AWAITING_HELLO = "awaiting-hello"
    OPEN = "open"
    CLOSED = "closed"


_AWAITING_HELLO: Final = ConnectionState.AWAITING_HELLO
_OPEN: Final = ConnectionState.OPEN
_CLOSED: Final = ConnectionState.CLOSED
_LIMITED: Final = Admission.LIMIT
_FLOOD: Final = Admission.CLOSE
"""(Module constants, as `_ALLOW` above: asked for every frame.)"""


class ServerConnection:
    """One client connection as the server sees it. `now` is monotonic seconds."""

    def __init__(self, encoding: Encoding, limits: Limits | None = None, *, now: float) -> None:
        self.encoding = encoding
        self.limits = limits or Limits()
        self._decoder = ClientMessageDecoder(encoding, self.limits)
        self._bucket = TokenBucket(self.limits.rate, self.limits.burst, now)
        self._opened = now
        self._heard = now
        self._state = _AWAITING_HELLO
        self._last_id = -1
        self._pending: set[int] = set()
        self._errors_in_row = 0
        self._hello: int | None = None
        """The id of the `hello` that opened the connection, until it is answered."""

    @property
    def state(self) -> ConnectionState:
        return self._state

    @property
    def subprotocol(self) -> str:
        return subprotocol(self.encoding)

    @property
    def pending(self) -> frozenset[int]:
        """Ids of requests handed to the application and not yet replied to."""
        return frozenset(self._pending)

    # --- input ---------------------------------------------------------------------------

    def receive(self, data: Frame, now: float) -> list[Received]:
        """Everything one incoming frame produces, in order."""
        if self._state is _CLOSED:
            return []
        self._heard = now
        admission = self._bucket.take(now)
        if admission is _FLOOD:
            return [*self.close(CloseCode.RATE_LIMIT, "flood: far over the rate limit")]
        try:
            message = self._decoder.decode(data)
        except TooLargeError as exc:
            return [Send(self._error_frame(exc)), *self.close(CloseCode.MESSAGE_TOO_BIG, str(exc))]
        except ProtocolError as exc:
            return self._refuse(self._spend(exc))
        rid = message.id
        if rid <= self._last_id:
            return self._refuse(DuplicateIdError(f"id {rid} was already used", request_id=rid))
        self._last_id = rid
        if admission is _LIMITED:
            return [Send(self._error_frame(RateLimitedError(request_id=rid)))]
        if type(message) is Hello:  # (not isinstance: docs/contributing.md, "Hot paths")
            if self._state is _OPEN:
                return self._refuse(AlreadyHelloError(request_id=rid))
            self._state = _OPEN
            self._hello = rid
        elif self._state is _AWAITING_HELLO:
            return self._refuse(HelloFirstError(request_id=rid))
        self._errors_in_row = 0
        self._pending.add(rid)
        return [message]

    def control(self, now: float) -> tuple[bool, list[Output]]:
        """A WebSocket ping or pong from the client: a sign of life that takes a token like
        any frame, so control frames cannot get around the rate limit. Whether it is within
        the rate (a ping gets its pong only then), and what to send: a flood closes the
        connection (4002) as a flood of requests does."""
        if self._state is _CLOSED:
            return False, []
        self._heard = now
        admission = self._bucket.take(now)
        if admission is _FLOOD:
            return False, self.close(CloseCode.RATE_LIMIT, "flood: far over the rate limit")
        return admission is not _LIMITED, []

    def heard(self, now: float) -> None:
        """A sign of life other than a frame (e.g. a WebSocket pong) resets the idle timer."""
        self._heard = max(self._heard, now)

    def deadline(self) -> float:
        """When `tick` would next close the connection if nothing is heard before."""
        if self._state is _AWAITING_HELLO:
            return self._opened + self.limits.hello_timeout_ms / 1000
        return self._heard + self.limits.idle_timeout_ms / 1000

    def tick(self, now: float) -> list[Output]:
        """Time-outs: no hello soon enough, or nothing heard for too long."""
        if self._state is _CLOSED or now < self.deadline():
            return []
        if self._state is _AWAITING_HELLO:
            return self.close(CloseCode.HELLO_TIMEOUT, "no hello in time")
        return self.close(CloseCode.IDLE_TIMEOUT, "nothing heard in time")

    # --- output --------------------------------------------------------------------------

    def welcome(self, server: str, features: Iterable[str] = ()) -> Frame:
        """The first frame of the connection: send it as soon as the socket is open."""
        return self.send(
            Welcome(
                server=server, protocol=self.subprotocol, limits=self.limits, features=[*features]
            )
        )

    def reply(
        self, request_id: int, result: msgspec.Struct | Mapping[str, Any] | None = None
    ) -> Frame:
        """The ok reply to a request this connection handed out (exactly once)."""
        self._settle(request_id)
        if request_id == self._hello:
            self._hello = None
        return self._encode_reply(
            Reply(id=request_id, ok=True, result={} if result is None else result)
        )

    def fail(self, request_id: int, error: ProtocolError) -> Frame:
        """The error reply to a request this connection handed out (exactly once).

        A failed `hello` (a `bad-key`) leaves the connection waiting for `hello` again, as
        if it had not come, with the hello time-out counted from it: the client can say
        it again (without the key) on the same connection."""
        self._settle(request_id)
        if request_id == self._hello and self._state is _OPEN:
            self._hello = None
            self._state = _AWAITING_HELLO
            self._opened = self._heard
        return self._encode_reply(Reply(id=request_id, ok=False, error=error.body()))

    def send(self, message: ServerMessage) -> Frame:
        """Encode a server message for this connection. Replies go through `reply`/`fail`."""
        if isinstance(message, Reply):
            raise ProtocolMisuse("replies go through reply() or fail()")
        return encode(message, self.encoding)

    def close(self, code: CloseCode, text: str = "", retry_ms: int | None = None) -> list[Output]:
        """Start closing: a goodbye frame, then the close instruction. Idempotent."""
        if self._state is _CLOSED:
            return []
        self._state = _CLOSED
        return [*farewell(code, text, self.encoding, retry_ms)]

    # --- internals -----------------------------------------------------------------------

    def _settle(self, request_id: int) -> None:
        try:
            self._pending.remove(request_id)
        except KeyError:
            raise ProtocolMisuse(f"request {request_id} is not awaiting a reply") from None

    def _spend(self, error: ProtocolError) -> ProtocolError:
        """A refused frame's readable id is used up; one used before makes it a replay."""
        rid = error.request_id
        if rid is None:
            return error
        if rid <= self._last_id:
            return DuplicateIdError(f"id {rid} was already used", request_id=rid)
        self._last_id = rid
        return error

    def _refuse(self, error: ProtocolError) -> list[Received]:
        """Answer a frame the protocol itself refused; too many in a row is abuse."""
        out: list[Received] = [Send(self._error_frame(error))]
        if isinstance(error, WireError):
            self._errors_in_row += 1
            if self._errors_in_row >= self.limits.max_errors:
                out += self.close(CloseCode.PROTOCOL_ABUSE, "too many protocol errors in a row")
        return out

    def _encode_reply(self, message: Reply) -> Frame:
        return encode(message, self.encoding)

    def _error_frame(self, error: ProtocolError) -> Frame:
        if error.request_id is None:
            return encode(ErrorMessage(error=error.body()), self.encoding)
        return self._encode_reply(Reply(id=error.request_id, ok=False, error=error.body()))


def farewell(
    code: CloseCode, text: str, encoding: Encoding, retry_ms: int | None = None
) -> tuple[Send, Close]:
    """The `goodbye` frame and the close instruction that follows it: also for a socket the
    server turns away before a `ServerConnection` exists (a draining server)."""
    why = reason(text or code.name.lower().replace("_", " "))
    goodbye = encode(Goodbye(code=int(code), reason=why, retry_ms=retry_ms), encoding)
    return Send(goodbye), Close(code, why)
