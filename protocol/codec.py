"""Frames to messages and back, for both encodings, with every input limit enforced.

msgspec decodes and validates in one pass (chosen by measurement: docs/benchmarks.md).
Decoding never raises anything but a `ProtocolError`: the fast path is one typed decode;
only when it fails is the frame decoded a second time, untyped, to tell the sender
precisely what was wrong and to recover the request id so the error can be a `reply`.

Encoding returns bytes for MessagePack (binary frames) and str for JSON (text frames); a
frame is immutable, so one encoding can be written to any number of sockets.
"""

from __future__ import annotations

import math
from typing import Any, Final

import msgspec

from .errors import (
    InvalidMessageError,
    MalformedError,
    ProtocolError,
    TooDeepError,
    TooLargeError,
    UnknownTypeError,
    WrongFrameError,
)
from .limits import MAX_REQUEST_ID, MAX_SAFE_INT, Limits, ReaderLimits
from .messages import type_name
from .messages.client import CLIENT_MESSAGES, ClientMessage
from .messages.server import SERVER_MESSAGES, ServerMessageType
from .subprotocols import Encoding

Frame = bytes | str
"""bytes: a binary frame (MessagePack); str: a text frame (JSON)."""


CLIENT_TYPES = frozenset(type_name(c) for c in CLIENT_MESSAGES)
SERVER_TYPES = frozenset(type_name(c) for c in SERVER_MESSAGES)

_MSGPACK_ENCODER = msgspec.msgpack.Encoder()
_JSON_ENCODER = msgspec.json.Encoder()
_DECODE_FAILURES = (msgspec.DecodeError, UnicodeError, RecursionError)

MSGPACK: Final = Encoding.MSGPACK
"""`Encoding.MSGPACK` as a constant, for the hot paths here and in server/: each
`Encoding.MSGPACK` is a lookup on an enum class, five times a plain attribute's, several
times per delivery (docs/contributing.md, "Hot paths")."""


def encode(message: msgspec.Struct, encoding: Encoding) -> Frame:
    """One frame for `message`; encode once, send to every recipient of that view."""
    if encoding is MSGPACK:
        return _MSGPACK_ENCODER.encode(message)
    return _JSON_ENCODER.encode(message).decode()


_SHARED: dict[tuple[Encoding, Any], tuple[Any, Any]] = {}


def _msgspec_decoders(encoding: Encoding, typ: Any) -> tuple[Any, Any]:
    """A typed and an untyped msgspec decoder, shared: they keep no state between calls,
    and a server holds one codec per connection (thousands of them)."""
    key = (encoding, typ)
    pair = _SHARED.get(key)
    if pair is None:
        if encoding is Encoding.MSGPACK:
            pair = (msgspec.msgpack.Decoder(typ), msgspec.msgpack.Decoder())
        else:
            pair = (msgspec.json.Decoder(typ), msgspec.json.Decoder())
        _SHARED[key] = pair
    return pair


class _Decoders:
    """A typed and an untyped decoder of one encoding; the untyped one diagnoses."""

    def __init__(self, encoding: Encoding, typ: Any, max_frame: int, max_depth: int) -> None:
        self.encoding = encoding
        self.max_frame = max_frame
        self.max_depth = max_depth
        self.typed, self.untyped = _msgspec_decoders(encoding, typ)

    def check_frame(self, data: Frame) -> None:
        if isinstance(data, str) is (self.encoding is MSGPACK):
            want = "binary" if self.encoding is MSGPACK else "text"
            raise WrongFrameError(f"{self.encoding.value} messages travel in {want} frames")
        size = len(data)
        if isinstance(data, str) and size * 4 > self.max_frame:
            size = len(data.encode("utf-8", "surrogatepass"))
        if size > self.max_frame:
            raise TooLargeError(f"frame of {size} bytes; the limit is {self.max_frame}")

    def diagnose(self, data: Frame, failure: Exception, known: frozenset[str]) -> ProtocolError:
        """The precise error for a frame the typed decoder refused."""
        try:
            tree = self.untyped.decode(data)
        except RecursionError:
            return TooDeepError("nesting too deep")
        except UnicodeEncodeError:  # a text frame the transport found not to be UTF-8
            return MalformedError("a text frame that is not valid UTF-8")
        except msgspec.ValidationError as exc:  # a number no integer or float can hold
            return InvalidMessageError(str(exc))
        except _DECODE_FAILURES as exc:
            return MalformedError(f"not valid {self.encoding.value}: {exc}")
        rid = _request_id(tree)
        if _too_deep(tree, self.max_depth):
            return TooDeepError(f"nested deeper than {self.max_depth}", request_id=rid)
        if not isinstance(failure, msgspec.ValidationError):
            return MalformedError(f"not valid {self.encoding.value}: {failure}", request_id=rid)
        if not isinstance(tree, dict):
            return InvalidMessageError("a message must be a map", request_id=rid)
        kind = tree.get("type")
        if not isinstance(kind, str):
            return InvalidMessageError("a message needs a string `type`", request_id=rid)
        if kind not in known:
            return UnknownTypeError(f"unknown message type {kind[:40]!r}", request_id=rid)
        return InvalidMessageError(f"{kind}: {failure}", request_id=rid)


class ClientMessageDecoder(_Decoders):
    """Decodes what clients send (server side); strict, bounded by `Limits`."""

    def __init__(self, encoding: Encoding, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        super().__init__(encoding, ClientMessage, self.limits.max_frame, self.limits.max_depth)

    def decode(self, data: Frame) -> ClientMessage:
        """A valid client message, or a `ProtocolError` carrying the request id if known."""
        self.check_frame(data)
        try:
            message: ClientMessage = self.typed.decode(data)
        except _DECODE_FAILURES as exc:
            raise self.diagnose(data, exc, CLIENT_TYPES) from None
        return message


class ServerMessageDecoder(_Decoders):
    """Decodes what the server sends (client side); lenient on new fields, bounded by
    `ReaderLimits`, and refusing what only one encoding could carry (bytes, NaN...)."""

    def __init__(self, encoding: Encoding, limits: ReaderLimits | None = None) -> None:
        self.limits = limits or ReaderLimits()
        super().__init__(encoding, ServerMessageType, self.limits.max_frame, self.limits.max_depth)

    def decode(self, data: Frame) -> ServerMessageType:
        """A server message, or a `ProtocolError`; `UnknownTypeError` for a type this
        version does not know (a client should skip it)."""
        self.check_frame(data)
        try:
            message: ServerMessageType = self.typed.decode(data)
        except _DECODE_FAILURES as exc:
            raise self.diagnose(data, exc, SERVER_TYPES) from None
        _check_tree(message, self.limits)
        return message


def _request_id(tree: object) -> int | None:
    if isinstance(tree, dict):
        rid = tree.get("id")
        if type(rid) is int and 0 <= rid <= MAX_REQUEST_ID:
            return rid
    return None


def _children(value: object) -> list[Any] | None:
    """The nested values of a container (keys included), or None for a scalar."""
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, msgspec.Struct):
        return [getattr(value, f) for f in value.__struct_fields__]
    return None


def _too_deep(tree: object, max_depth: int) -> bool:
    stack = [(tree, 1)]
    while stack:
        value, depth = stack.pop()
        children = _children(value)
        if children is None:
            continue
        if depth > max_depth:
            return True
        stack.extend((c, depth + 1) for c in children)
    return False


def _check_tree(message: msgspec.Struct, limits: ReaderLimits) -> None:
    """Bounds on the free-form parts (views, events, results) of a server message."""
    stack: list[tuple[Any, int]] = [(message, 1)]
    while stack:
        value, depth = stack.pop()
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, int):
            if not -MAX_SAFE_INT <= value <= MAX_SAFE_INT:
                raise InvalidMessageError("integer out of the exactly representable range")
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise InvalidMessageError("NaN and infinities cannot be sent")
        elif isinstance(value, str):
            if len(value) > limits.max_string:
                raise InvalidMessageError(f"string longer than {limits.max_string}")
        elif isinstance(value, dict):
            if any(type(k) is not str for k in value):
                raise InvalidMessageError("map keys must be strings")
            stack.extend(_nested(value.values(), len(value), depth, limits))
        elif isinstance(value, list):
            stack.extend(_nested(value, len(value), depth, limits))
        elif isinstance(value, msgspec.Struct):
            fields = [getattr(value, f) for f in value.__struct_fields__]
            stack.extend(_nested(fields, 0, depth, limits))
        else:
            raise InvalidMessageError(f"{type(value).__name__} values cannot be sent")


def _nested(values: Any, count: int, depth: int, limits: ReaderLimits) -> list[tuple[Any, int]]:
    if depth > limits.max_depth:
        raise TooDeepError(f"nested deeper than {limits.max_depth}")
    if count > limits.max_list:
        raise InvalidMessageError(f"more than {limits.max_list} items")
    return [(v, depth + 1) for v in values]
