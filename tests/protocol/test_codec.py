"""Both encodings carry every message; bad frames of every kind become catalogue errors."""

from __future__ import annotations

import json
import math

import msgpack
import msgspec
import pytest

from dicehall.protocol import (
    ClientMessageDecoder,
    Encoding,
    Limits,
    ReaderLimits,
    ServerMessageDecoder,
    encode,
    errors,
)
from dicehall.protocol.messages import type_name
from dicehall.protocol.messages.client import CLIENT_MESSAGES
from dicehall.protocol.messages.server import SERVER_MESSAGES

from .samples import CLIENT, SERVER, builtins

ENCODINGS = list(Encoding)


def frame(obj: object, encoding: Encoding) -> bytes | str:
    """A frame built with the plain libraries, not the project's codec."""
    if encoding is Encoding.MSGPACK:
        return msgpack.packb(obj)
    return json.dumps(obj)


def test_samples_cover_every_message_type() -> None:
    assert {type(m) for m in CLIENT} == set(CLIENT_MESSAGES)
    assert {type(m) for m in SERVER} == set(SERVER_MESSAGES)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("message", CLIENT, ids=lambda m: type_name(type(m)))
def test_client_messages_round_trip(encoding: Encoding, message: msgspec.Struct) -> None:
    data = encode(message, encoding)
    assert isinstance(data, bytes if encoding is Encoding.MSGPACK else str)
    assert ClientMessageDecoder(encoding).decode(data) == message


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("message", SERVER, ids=lambda m: type_name(type(m)))
def test_server_messages_round_trip(encoding: Encoding, message: msgspec.Struct) -> None:
    data = encode(message, encoding)
    decoded = ServerMessageDecoder(encoding).decode(data)
    assert builtins(decoded) == builtins(message)


@pytest.mark.parametrize("message", [*CLIENT, *SERVER], ids=lambda m: type_name(type(m)))
def test_both_encodings_carry_the_same_map(message: msgspec.Struct) -> None:
    packed = msgpack.unpackb(encode(message, Encoding.MSGPACK))
    text = json.loads(encode(message, Encoding.JSON))
    assert packed == text == builtins(message)


def test_an_action_is_carried_as_the_map_it_is() -> None:
    """The protocol checks an action's `type` only: its other fields are its game's, which
    the server checks against the game's own schema (rules/actions.py)."""
    msg = ClientMessageDecoder(Encoding.JSON).decode(
        '{"type":"act","id":1,"room":"r1","action":{"type":"enter","row":"red","gems":[1]}}'
    )
    assert msg.action == {"type": "enter", "row": "red", "gems": [1]}  # type: ignore[union-attr]


def test_an_action_that_is_not_a_map_is_refused() -> None:
    """The protocol carries an action as a map; its `type` and fields are its game's to
    check, in the room (tests/server/rooms/test_room.py, `SCHEMA_REFUSALS`)."""
    error = _error(Encoding.JSON, '{"type":"act","id":1,"room":"r1","action":[]}')
    assert isinstance(error, errors.InvalidMessageError)
    assert (error.message, error.request_id) == (
        "act: Expected `object`, got `array` - at `$.action`",
        1,
    )


def test_chat_sender_is_from_on_the_wire() -> None:
    chat = next(m for m in SERVER if type_name(type(m)) == "chat")
    assert json.loads(encode(chat, Encoding.JSON))["from"] == "Ada"


def _error(
    encoding: Encoding, data: bytes | str, limits: Limits | None = None
) -> errors.ProtocolError:
    with pytest.raises(errors.ProtocolError) as caught:
        ClientMessageDecoder(encoding, limits).decode(data)
    return caught.value


PING = {"type": "ping", "id": 7}
DEEP = 100_000
ROOMY = Limits(max_frame=1 << 20)
"""Frames big enough to reach the decoder's recursion guard."""


@pytest.mark.parametrize(
    ("name", "data", "error", "request_id"),
    [
        ("truncated", msgpack.packb(PING)[:-1], errors.MalformedError, None),
        ("trailing bytes", msgpack.packb(PING) + b"\xc0", errors.MalformedError, None),
        ("empty", b"", errors.MalformedError, None),
        ("reserved byte", b"\xc1", errors.MalformedError, None),
        ("huge declared map", b"\xdf\xff\xff\xff\xff", errors.MalformedError, None),
        ("huge declared string", b"\x82\xa4type\xdb\xff\xff\xff\xff", errors.MalformedError, None),
        ("invalid utf-8", b"\x82\xa4type\xa3\xff\xfe\xfd\xa2id\x01", errors.MalformedError, None),
        (
            "ext type id",
            msgpack.packb({"type": "ping", "id": msgpack.ExtType(3, b"x")}),
            errors.InvalidMessageError,
            None,
        ),
        (
            "timestamp id",
            msgpack.packb({"type": "ping", "id": msgpack.Timestamp(5)}),
            errors.InvalidMessageError,
            None,
        ),
        (
            "ext in a field",
            msgpack.packb({"type": "ping", "id": 1, "time": msgpack.ExtType(1, b"")}),
            errors.InvalidMessageError,
            1,
        ),
        (
            "bin instead of str",
            msgpack.packb({"type": "spectate", "id": 2, "room": b"r1"}),
            errors.InvalidMessageError,
            2,
        ),
        (
            "u64 id",
            msgpack.packb({"type": "ping", "id": 2**64 - 1}),
            errors.InvalidMessageError,
            None,
        ),
        (
            "negative id",
            msgpack.packb({"type": "ping", "id": -1}),
            errors.InvalidMessageError,
            None,
        ),
        ("float id", msgpack.packb({"type": "ping", "id": 1.0}), errors.InvalidMessageError, None),
        (
            "nan time",
            msgpack.packb({"type": "ping", "id": 3, "time": math.nan}),
            errors.InvalidMessageError,
            3,
        ),
        ("bool id", msgpack.packb({"type": "ping", "id": True}), errors.InvalidMessageError, None),
        (
            "non-string key",
            msgpack.packb({1: 2, "type": "ping", "id": 4}),
            errors.InvalidMessageError,
            4,
        ),
        ("not a map", msgpack.packb([1, 2, 3]), errors.InvalidMessageError, None),
        ("no type", msgpack.packb({"id": 5}), errors.InvalidMessageError, 5),
        ("type not a string", msgpack.packb({"id": 5, "type": 9}), errors.InvalidMessageError, 5),
        ("unknown type", msgpack.packb({"id": 6, "type": "teleport"}), errors.UnknownTypeError, 6),
        ("server type", msgpack.packb({"id": 6, "type": "welcome"}), errors.UnknownTypeError, 6),
        ("unknown field", msgpack.packb({**PING, "colour": "red"}), errors.InvalidMessageError, 7),
        ("deep list", b"\x91" * DEEP + b"\x90", errors.TooDeepError, None),
        (
            "deep map value",
            msgpack.packb({**PING, "x": [[[[[[[[[1]]]]]]]]]}),
            errors.TooDeepError,
            7,
        ),
        (
            "deep inside a field",
            b"\x83\xa4type\xa4ping\xa2id\x07\xa4time" + b"\x91" * DEEP + b"\x90",
            errors.TooDeepError,
            None,
        ),
    ],
)
def test_nasty_msgpack(name: str, data: bytes, error: type, request_id: int | None) -> None:
    caught = _error(Encoding.MSGPACK, data, ROOMY)
    assert type(caught) is error, caught
    assert caught.request_id == request_id


@pytest.mark.parametrize(
    ("name", "data", "error", "request_id"),
    [
        ("truncated", '{"type":"ping","id":7', errors.MalformedError, None),
        ("trailing", '{"type":"ping","id":7} {}', errors.MalformedError, None),
        ("empty", "", errors.MalformedError, None),
        ("NaN literal", '{"type":"ping","id":7,"time":NaN}', errors.MalformedError, None),
        ("Infinity literal", '{"type":"ping","id":7,"time":Infinity}', errors.MalformedError, None),
        (
            "lone surrogate escape",
            '{"type":"spectate","id":7,"room":"\\ud800"}',
            errors.MalformedError,
            None,
        ),
        (
            "lone surrogate in str",
            '{"type":"spectate","id":7,"room":"\ud800"}',
            errors.MalformedError,
            None,
        ),
        ("huge int", '{"type":"ping","id":' + "9" * 5000 + "}", errors.InvalidMessageError, None),
        ("huge exponent", '{"type":"ping","id":1e400}', errors.InvalidMessageError, None),
        ("big id", '{"type":"ping","id":2147483648}', errors.InvalidMessageError, None),
        ("float id", '{"type":"ping","id":1.5}', errors.InvalidMessageError, None),
        ("string id", '{"type":"ping","id":"1"}', errors.InvalidMessageError, None),
        ("null type", '{"type":null,"id":1}', errors.InvalidMessageError, 1),
        ("array", "[1,2]", errors.InvalidMessageError, None),
        ("scalar", "42", errors.InvalidMessageError, None),
        ("unknown type", '{"type":"nope","id":1}', errors.UnknownTypeError, 1),
        ("missing field", '{"type":"spectate","id":8}', errors.InvalidMessageError, 8),
        ("wrong field type", '{"type":"spectate","id":8,"room":5}', errors.InvalidMessageError, 8),
        (
            "room id too long",
            json.dumps({"type": "spectate", "id": 8, "room": "r" * 33}),
            errors.InvalidMessageError,
            8,
        ),
        (
            "control char in name",
            '{"type":"hello","id":0,"client":"a\\u0007"}',
            errors.InvalidMessageError,
            0,
        ),
        (
            "string too long",
            '{"type":"chat","id":9,"room":"r","text":"' + "x" * 501 + '"}',
            errors.InvalidMessageError,
            9,
        ),
        (
            "list too long",
            json.dumps({"type": "hello", "id": 0, "client": "c", "tokens": ["t"] * 17}),
            errors.InvalidMessageError,
            0,
        ),
        ("deep", "[" * DEEP + "]" * DEEP, errors.TooDeepError, None),
        (
            "deep after id",
            '{"id":3,"type":"ping","x":' + "[" * 20 + "]" * 20 + "}",
            errors.TooDeepError,
            3,
        ),
    ],
)
def test_nasty_json(name: str, data: str, error: type, request_id: int | None) -> None:
    caught = _error(Encoding.JSON, data, ROOMY)
    assert type(caught) is error, caught
    assert caught.request_id == request_id


def test_frame_type_must_match_the_subprotocol() -> None:
    assert type(_error(Encoding.MSGPACK, json.dumps(PING))) is errors.WrongFrameError
    assert type(_error(Encoding.JSON, json.dumps(PING).encode())) is errors.WrongFrameError


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_frame_size_limit(encoding: Encoding) -> None:
    limits = Limits(max_frame=100)
    ok = frame({"type": "chat", "id": 1, "room": "r", "text": "x" * 20}, encoding)
    big = frame({"type": "chat", "id": 1, "room": "r", "text": "x" * 80}, encoding)
    assert ClientMessageDecoder(encoding, limits).decode(ok)
    assert type(_error(encoding, big, limits)) is errors.TooLargeError


def test_json_frame_size_counts_utf8_bytes() -> None:
    limits = Limits(max_frame=80)
    text = json.dumps({"type": "chat", "id": 1, "room": "r", "text": "é" * 30}, ensure_ascii=False)
    assert len(text) <= 80 < len(text.encode())
    assert type(_error(Encoding.JSON, text, limits)) is errors.TooLargeError


def test_depth_limit_is_exact() -> None:
    # A Qwirkle `place` is 4 levels deep: act > action > tiles > tile.
    act = {
        "type": "act",
        "id": 1,
        "room": "r",
        "action": {"type": "place", "tiles": [{"color": "red", "shape": "star", "x": 0, "y": 0}]},
    }
    for encoding in ENCODINGS:
        assert ClientMessageDecoder(encoding, Limits(max_depth=4)).decode(frame(act, encoding))
        with_deep = {**act, "extra": [[[1]]]}
        assert type(_error(encoding, frame(with_deep, encoding), Limits(max_depth=4))) is (
            errors.InvalidMessageError
        )
        deeper = {**act, "extra": [[[[1]]]]}
        assert type(_error(encoding, frame(deeper, encoding), Limits(max_depth=4))) is (
            errors.TooDeepError
        )


# --- the client-side decoder (server messages) ---------------------------------------------


def _server_error(encoding: Encoding, obj: object, limits: ReaderLimits | None = None) -> object:
    with pytest.raises(errors.ProtocolError) as caught:
        ServerMessageDecoder(encoding, limits).decode(frame(obj, encoding))
    return type(caught.value)


EVENT = {"type": "event", "room": "r", "seq": 1}


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_server_decoder_skips_nothing_it_knows_and_tolerates_new_fields(encoding: Encoding) -> None:
    msg = ServerMessageDecoder(encoding).decode(frame({**EVENT, "event": {}, "new": 1}, encoding))
    assert type_name(type(msg)) == "event"
    assert _server_error(encoding, {"type": "novelty"}) is errors.UnknownTypeError


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_server_decoder_bounds_free_form_payloads(encoding: Encoding) -> None:
    limits = ReaderLimits(max_depth=4, max_string=10, max_list=3)
    assert _server_error(encoding, {**EVENT, "event": {"a": {"b": {"c": {}}}}}, limits) is (
        errors.TooDeepError
    )
    assert _server_error(encoding, {**EVENT, "event": {"s": "x" * 11}}, limits) is (
        errors.InvalidMessageError
    )
    assert _server_error(encoding, {**EVENT, "event": {"l": [1, 2, 3, 4]}}, limits) is (
        errors.InvalidMessageError
    )
    assert _server_error(encoding, {**EVENT, "event": {"n": 2**60}}) is errors.InvalidMessageError
    ok = ServerMessageDecoder(encoding, limits).decode(
        frame({**EVENT, "event": {"a": {"b": 1}}}, encoding)
    )
    assert ok.event == {"a": {"b": 1}}  # type: ignore[union-attr]


def test_server_decoder_refuses_what_json_cannot_carry() -> None:
    enc = Encoding.MSGPACK
    assert _server_error(enc, {**EVENT, "event": {"b": b"bytes"}}) is errors.InvalidMessageError
    assert _server_error(enc, {**EVENT, "event": {"f": math.nan}}) is errors.InvalidMessageError
    assert _server_error(enc, {**EVENT, "event": {"x": msgpack.ExtType(1, b"")}}) is (
        errors.InvalidMessageError
    )
    assert _server_error(enc, {**EVENT, "event": {1: 2}}) is errors.InvalidMessageError
    assert _server_error(enc, {**EVENT, "event": {"t": msgpack.Timestamp(1)}}) is (
        errors.InvalidMessageError
    )


def test_encode_once_send_many() -> None:
    """A frame is an immutable value: encoding the same message twice gives equal frames."""
    for message in SERVER:
        for encoding in ENCODINGS:
            first = encode(message, encoding)
            assert isinstance(first, bytes | str)
            assert first == encode(message, encoding)


def test_a_text_frame_that_was_not_utf8_is_malformed() -> None:
    """The transport hands such a frame on with its bad bytes as lone surrogates."""
    data = b'{"type": "ping", "id": 1, "x": "\xff"}'.decode("utf-8", "surrogateescape")
    with pytest.raises(errors.MalformedError, match="not valid UTF-8"):
        ClientMessageDecoder(Encoding.JSON).decode(data)
