"""What the load tester reads of a server message, and its codec for both subprotocols.

Every message a seat receives is decoded once into `Incoming`, one lenient struct that
reads only the fields the load tester looks at and skips the rest: a delivery costs the
load generator less than it costs the server it measures. A reply's `result` stays raw
until the request's callback reads it, with the protocol's own result types
(dicehall.protocol.messages.results) for the few a seat reads once per connection or game,
and with `LegalHead` and `ActHead` for the two it reads on every turn.
"""

from __future__ import annotations

from typing import TypeVar

import msgspec

T = TypeVar("T", bound=msgspec.Struct)


class ErrorHead(msgspec.Struct):
    name: str = "?"
    code: int = 0


class ActorHead(msgspec.Struct):
    seat: int
    kinds: list[str] = []


class TurnHead(msgspec.Struct):
    window: int
    actors: list[ActorHead] = []


class EventHead(msgspec.Struct):
    type: str = ""


class ActionHead(msgspec.Struct):
    default: bool = False


class Incoming(msgspec.Struct):
    """Any server message, leniently: unknown fields are skipped, missing ones are None."""

    type: str
    id: int | None = None
    ok: bool | None = None
    result: msgspec.Raw = msgspec.Raw()
    error: ErrorHead | None = None
    room: str | None = None
    seq: int | None = None
    sent_us: int | None = None
    window: int | None = None
    actors: list[ActorHead] | None = None
    event: EventHead | None = None
    actions: list[ActionHead] | None = None
    turn: TurnHead | None = None
    code: int | None = None
    features: list[str] | None = None
    server: str | None = None
    legal: list[msgspec.Raw] | None = None
    """A `window`'s legal actions for this seat (the feature `legal_in_window`)."""


# The two results read on every turn are heads, not the protocol's LegalResult and
# ActResult: their actions stay raw bytes that go back into `act` as they came, never
# decoded into dicts (nor a `legal` reply's view) only to be encoded again.


class LegalHead(msgspec.Struct):
    """A `legal` reply's result, its actions undecoded."""

    window: int | None = None
    actions: list[msgspec.Raw] = []


class ActHead(msgspec.Struct):
    """An `act` reply's result, its next legal actions undecoded."""

    owes: list[str] = []
    legal: list[msgspec.Raw] | None = None
    """The next legal actions when `owes` is not empty (the feature `legal_in_window`)."""


class Codec:
    """Requests out, `Incoming` in, for one of the two subprotocols."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self.subprotocol = f"dicehall.v1.{encoding}"
        self.binary = encoding == "msgpack"
        mod = msgspec.msgpack if self.binary else msgspec.json
        self.encode = mod.Encoder().encode
        self._incoming = mod.Decoder(Incoming)
        self._mod = mod
        self._empty = b"\x80" if self.binary else b"{}"

    def decode(self, data: bytes) -> Incoming:
        message: Incoming = self._incoming.decode(data)
        return message

    def result(self, raw: msgspec.Raw, typ: type[T]) -> T:
        """A reply's `result` as `typ` (an absent one as an empty map)."""
        result: T = self._mod.decode(raw or self._empty, type=typ)
        return result
