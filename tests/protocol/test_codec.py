"""Both encodings carry every message; bad frames of every kind become catalogue errors."""

from __future__ import annotations

import json
import math

import msgpack
import msgspec
import pytest

from protocol import (
    ClientMessageDecoder,
    Encoding,
    Limits,
    ReaderLimits,
    ServerMessageDecoder,
    encode,
)
from protocol import errors as E
from protocol.messages import type_name
from protocol.messages.client import CLIENT_MESSAGES
from protocol.messages.server import SERVER_MESSAGES

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


def test_optional_fields_are_left_out_of_actions() -> None:
    msg = ClientMessageDecoder(Encoding.JSON).decode(
        '{"type":"act","id":1,"room":"r1","action":{"type":"enter","row":"red","box":3}}'
    )
    assert msg.action.as_dict() == {"type": "enter", "row": "red", "box": 3}  # type: ignore[union-attr]


def test_chat_sender_is_from_on_the_wire() -> None:
    chat = next(m for m in SERVER if type_name(type(m)) == "chat")
    assert json.loads(encode(chat, Encoding.JSON))["from"] == "Ada"


def _error(encoding: Encoding, data: bytes | str, limits: Limits | None = None) -> E.ProtocolError:
    with pytest.raises(E.ProtocolError) as caught:
        ClientMessageDecoder(encoding, limits).decode(data)
    return caught.value


PING = {"type": "ping", "id": 7}
DEEP = 100_000
ROOMY = Limits(max_frame=1 << 20)
"""Frames big enough to reach the decoder's recursion guard."""


@pytest.mark.parametrize(
    ("name", "data", "error", "request_id"),
    [
        ("truncated", msgpack.packb(PING)[:-1], E.MalformedError, None),
        ("trailing bytes", msgpack.packb(PING) + b"\xc0", E.MalformedError, None),
        ("empty", b"", E.MalformedError, None),
        ("reserved byte", b"\xc1", E.MalformedError, None),
        ("huge declared map", b"\xdf\xff\xff\xff\xff", E.MalformedError, None),
        ("huge declared string", b"\x82\xa4type\xdb\xff\xff\xff\xff", E.MalformedError, None),
        ("invalid utf-8", b"\x82\xa4type\xa3\xff\xfe\xfd\xa2id\x01", E.MalformedError, None),
        (
            "ext type id",
            msgpack.packb({"type": "ping", "id": msgpack.ExtType(3, b"x")}),
            E.InvalidMessageError,
            None,
        ),
        (
            "timestamp id",
            msgpack.packb({"type": "ping", "id": msgpack.Timestamp(5)}),
            E.InvalidMessageError,
            None,
        ),
        (
            "ext in a field",
            msgpack.packb({"type": "ping", "id": 1, "time": msgpack.ExtType(1, b"")}),
            E.InvalidMessageError,
            1,
        ),
        (
            "bin instead of str",
            msgpack.packb({"type": "spectate", "id": 2, "room": b"r1"}),
            E.InvalidMessageError,
            2,
        ),
        ("u64 id", msgpack.packb({"type": "ping", "id": 2**64 - 1}), E.InvalidMessageError, None),
        ("negative id", msgpack.packb({"type": "ping", "id": -1}), E.InvalidMessageError, None),
        ("float id", msgpack.packb({"type": "ping", "id": 1.0}), E.InvalidMessageError, None),
        (
            "nan time",
            msgpack.packb({"type": "ping", "id": 3, "time": math.nan}),
            E.InvalidMessageError,
            3,
        ),
        ("bool id", msgpack.packb({"type": "ping", "id": True}), E.InvalidMessageError, None),
        (
            "non-string key",
            msgpack.packb({1: 2, "type": "ping", "id": 4}),
            E.InvalidMessageError,
            4,
        ),
        ("not a map", msgpack.packb([1, 2, 3]), E.InvalidMessageError, None),
        ("no type", msgpack.packb({"id": 5}), E.InvalidMessageError, 5),
        ("type not a string", msgpack.packb({"id": 5, "type": 9}), E.InvalidMessageError, 5),
        ("unknown type", msgpack.packb({"id": 6, "type": "teleport"}), E.UnknownTypeError, 6),
        ("server type", msgpack.packb({"id": 6, "type": "welcome"}), E.UnknownTypeError, 6),
        ("unknown field", msgpack.packb({**PING, "colour": "red"}), E.InvalidMessageError, 7),
        ("deep list", b"\x91" * DEEP + b"\x90", E.TooDeepError, None),
        ("deep map value", msgpack.packb({**PING, "x": [[[[[[[[[1]]]]]]]]]}), E.TooDeepError, 7),
        (
            "deep inside a field",
            b"\x83\xa4type\xa4ping\xa2id\x07\xa4time" + b"\x91" * DEEP + b"\x90",
            E.TooDeepError,
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
        ("truncated", '{"type":"ping","id":7', E.MalformedError, None),
        ("trailing", '{"type":"ping","id":7} {}', E.MalformedError, None),
        ("empty", "", E.MalformedError, None),
        ("NaN literal", '{"type":"ping","id":7,"time":NaN}', E.MalformedError, None),
        ("Infinity literal", '{"type":"ping","id":7,"time":Infinity}', E.MalformedError, None),
        (
            "lone surrogate escape",
            '{"type":"spectate","id":7,"room":"\\ud800"}',
            E.MalformedError,
            None,
        ),
        (
            "lone surrogate in str",
            '{"type":"spectate","id":7,"room":"\ud800"}',
            E.MalformedError,
            None,
        ),
        ("huge int", '{"type":"ping","id":' + "9" * 5000 + "}", E.InvalidMessageError, None),
        ("huge exponent", '{"type":"ping","id":1e400}', E.InvalidMessageError, None),
        ("big id", '{"type":"ping","id":2147483648}', E.InvalidMessageError, None),
        ("float id", '{"type":"ping","id":1.5}', E.InvalidMessageError, None),
        ("string id", '{"type":"ping","id":"1"}', E.InvalidMessageError, None),
        ("null type", '{"type":null,"id":1}', E.InvalidMessageError, 1),
        ("array", "[1,2]", E.InvalidMessageError, None),
        ("scalar", "42", E.InvalidMessageError, None),
        ("unknown type", '{"type":"nope","id":1}', E.UnknownTypeError, 1),
        ("missing field", '{"type":"spectate","id":8}', E.InvalidMessageError, 8),
        ("wrong field type", '{"type":"spectate","id":8,"room":5}', E.InvalidMessageError, 8),
        (
            "room id too long",
            json.dumps({"type": "spectate", "id": 8, "room": "r" * 33}),
            E.InvalidMessageError,
            8,
        ),
        (
            "control char in name",
            '{"type":"hello","id":0,"client":"a\\u0007"}',
            E.InvalidMessageError,
            0,
        ),
        (
            "string too long",
            '{"type":"chat","id":9,"room":"r","text":"' + "x" * 501 + '"}',
            E.InvalidMessageError,
            9,
        ),
        (
            "list too long",
            json.dumps({"type": "hello", "id": 0, "client": "c", "tokens": ["t"] * 17}),
            E.InvalidMessageError,
            0,
        ),
        (
            "box out of range",
            '{"type":"act","id":1,"room":"r","action":{"type":"enter","row":"red","box":10}}',
            E.InvalidMessageError,
            1,
        ),
        (
            "unknown action field",
            '{"type":"act","id":1,"room":"r","action":{"type":"enter","colour":"red"}}',
            E.InvalidMessageError,
            1,
        ),
        (
            "bool for int",
            '{"type":"act","id":1,"room":"r","action":{"type":"enter","box":true}}',
            E.InvalidMessageError,
            1,
        ),
        ("deep", "[" * DEEP + "]" * DEEP, E.TooDeepError, None),
        (
            "deep after id",
            '{"id":3,"type":"ping","x":' + "[" * 20 + "]" * 20 + "}",
            E.TooDeepError,
            3,
        ),
    ],
)
def test_nasty_json(name: str, data: str, error: type, request_id: int | None) -> None:
    caught = _error(Encoding.JSON, data, ROOMY)
    assert type(caught) is error, caught
    assert caught.request_id == request_id


def test_frame_type_must_match_the_subprotocol() -> None:
    assert type(_error(Encoding.MSGPACK, json.dumps(PING))) is E.WrongFrameError
    assert type(_error(Encoding.JSON, json.dumps(PING).encode())) is E.WrongFrameError


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_frame_size_limit(encoding: Encoding) -> None:
    limits = Limits(max_frame=100)
    ok = frame({"type": "chat", "id": 1, "room": "r", "text": "x" * 20}, encoding)
    big = frame({"type": "chat", "id": 1, "room": "r", "text": "x" * 80}, encoding)
    assert ClientMessageDecoder(encoding, limits).decode(ok)
    assert type(_error(encoding, big, limits)) is E.TooLargeError


def test_json_frame_size_counts_utf8_bytes() -> None:
    limits = Limits(max_frame=80)
    text = json.dumps({"type": "chat", "id": 1, "room": "r", "text": "é" * 30}, ensure_ascii=False)
    assert len(text) <= 80 < len(text.encode())
    assert type(_error(Encoding.JSON, text, limits)) is E.TooLargeError


def test_depth_limit_is_exact() -> None:
    # The deepest valid client message is 4 levels: act > action > tiles > tile.
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
            E.InvalidMessageError
        )
        deeper = {**act, "extra": [[[[1]]]]}
        assert type(_error(encoding, frame(deeper, encoding), Limits(max_depth=4))) is (
            E.TooDeepError
        )


# --- the client-side decoder (server messages) ---------------------------------------------


def _server_error(encoding: Encoding, obj: object, limits: ReaderLimits | None = None) -> object:
    with pytest.raises(E.ProtocolError) as caught:
        ServerMessageDecoder(encoding, limits).decode(frame(obj, encoding))
    return type(caught.value)


EVENT = {"type": "event", "room": "r", "seq": 1}


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_server_decoder_skips_nothing_it_knows_and_tolerates_new_fields(encoding: Encoding) -> None:
    msg = ServerMessageDecoder(encoding).decode(frame({**EVENT, "event": {}, "new": 1}, encoding))
    assert type_name(type(msg)) == "event"
    assert _server_error(encoding, {"type": "novelty"}) is E.UnknownTypeError


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_server_decoder_bounds_free_form_payloads(encoding: Encoding) -> None:
    limits = ReaderLimits(max_depth=4, max_string=10, max_list=3)
    assert _server_error(encoding, {**EVENT, "event": {"a": {"b": {"c": {}}}}}, limits) is (
        E.TooDeepError
    )
    assert _server_error(encoding, {**EVENT, "event": {"s": "x" * 11}}, limits) is (
        E.InvalidMessageError
    )
    assert _server_error(encoding, {**EVENT, "event": {"l": [1, 2, 3, 4]}}, limits) is (
        E.InvalidMessageError
    )
    assert _server_error(encoding, {**EVENT, "event": {"n": 2**60}}) is E.InvalidMessageError
    ok = ServerMessageDecoder(encoding, limits).decode(
        frame({**EVENT, "event": {"a": {"b": 1}}}, encoding)
    )
    assert ok.event == {"a": {"b": 1}}  # type: ignore[union-attr]


def test_server_decoder_refuses_what_json_cannot_carry() -> None:
    enc = Encoding.MSGPACK
    assert _server_error(enc, {**EVENT, "event": {"b": b"bytes"}}) is E.InvalidMessageError
    assert _server_error(enc, {**EVENT, "event": {"f": math.nan}}) is E.InvalidMessageError
    assert _server_error(enc, {**EVENT, "event": {"x": msgpack.ExtType(1, b"")}}) is (
        E.InvalidMessageError
    )
    assert _server_error(enc, {**EVENT, "event": {1: 2}}) is E.InvalidMessageError
    assert _server_error(enc, {**EVENT, "event": {"t": msgpack.Timestamp(1)}}) is (
        E.InvalidMessageError
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
    with pytest.raises(E.MalformedError, match="not valid UTF-8"):
        ClientMessageDecoder(Encoding.JSON).decode(data)
