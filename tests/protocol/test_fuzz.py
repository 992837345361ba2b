"""Any input, however malformed, decodes to a message or raises a catalogue error.

10,000 generated frames per encoding for the server's decoder (what clients send), fewer
for the client's decoder and for whole connections. Frames are raw noise, message-like
trees built with the plain msgpack/json libraries, and byte-level mutations of valid
messages (truncations, flipped and inserted bytes).
"""

from __future__ import annotations

import copy
import json
from random import Random
from typing import Any

import msgpack
import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicehall.protocol import (
    ClientMessageDecoder,
    Close,
    Encoding,
    ProtocolError,
    Send,
    ServerConnection,
    ServerMessageDecoder,
    encode,
    errors,
)
from dicehall.protocol.codec import CLIENT_TYPES, SERVER_TYPES
from dicehall.protocol.limits import MAX_REQUEST_ID

from .samples import CLIENT, SERVER, builtins

MANY = settings(
    max_examples=10_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SOME = settings(
    max_examples=1_500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

FIELDS = [
    "type", "id", "room", "action", "window", "client", "name", "tokens", "features", "game",
    "seats", "options", "preset", "turn_window", "public", "seat", "kind", "count", "last_seq",
    "time", "text", "dice", "row", "box", "number", "tiles", "hold", "column", "color", "shape",
    "x", "y", "seq", "event", "view", "info", "result", "error", "ok", "from", "limits",
    "key", "player",
]  # fmt: skip
LEAF_ERRORS = set(errors.catalogue())


TYPES = sorted(CLIENT_TYPES | SERVER_TYPES)
SAMPLES = [builtins(m) for m in [*CLIENT, *SERVER]]
SPECIAL = [0, 1, 2, 5, 9, 12, -1, 2**31 - 1, 2**31, 2**53, 2**63, "red", "r1", "", "\u0000"]
TEXT = 'ab\u00e9\u0000\x7f\u20ac\U0001f3b2\ud7ff"\\{}[]:,'


def _text(rng: Random) -> str:
    return "".join(rng.choice(TEXT) for _ in range(rng.randrange(8)))


def _scalar(rng: Random, encoding: Encoding) -> Any:
    kind = rng.randrange(9)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return (
            rng.randrange(-(2**63), 2**64)
            if encoding is Encoding.MSGPACK
            else rng.randrange(-(10**30), 10**30)
        )
    if kind == 2:
        return rng.choice([rng.uniform(-1e9, 1e9), float("nan"), float("inf"), -0.0, 1e308])
    if kind in (3, 4):
        return rng.choice(SPECIAL)
    if kind == 5 and encoding is Encoding.MSGPACK:
        return rng.choice(
            [rng.randbytes(rng.randrange(6)), msgpack.ExtType(rng.randrange(128), b"x")]
        )
    if kind == 6:
        return rng.choice(FIELDS)
    return _text(rng)


def _tree(rng: Random, encoding: Encoding, depth: int = 0) -> Any:
    kind = rng.randrange(6)
    if depth > 10 or kind < 3:
        return _scalar(rng, encoding)
    size = rng.randrange(5)
    if kind == 3:
        return [_tree(rng, encoding, depth + 1) for _ in range(size)]
    return {_key(rng): _tree(rng, encoding, depth + 1) for _ in range(size)}


def _key(rng: Random) -> str:
    return rng.choice(FIELDS) if rng.random() < 0.8 else _text(rng)


def _message(rng: Random, encoding: Encoding) -> Any:
    """A sample with fields replaced, dropped or added, or a random map with a type."""
    if rng.random() < 0.6:
        base = copy.deepcopy(rng.choice(SAMPLES))
    else:
        base = {"type": rng.choice(TYPES), "id": rng.choice([rng.randrange(-3, 2**32), *SPECIAL])}
    for _ in range(rng.randrange(4)):
        target = base
        if "action" in base and isinstance(base["action"], dict) and rng.random() < 0.5:
            target = base["action"]
        key = rng.choice(sorted(target)) if target and rng.random() < 0.5 else _key(rng)
        if rng.random() < 0.7:
            target[key] = _tree(rng, encoding)
        else:
            target.pop(key, None)
    return base


def pack(obj: Any, encoding: Encoding) -> bytes | str:
    if encoding is Encoding.MSGPACK:
        return msgpack.packb(obj)
    return json.dumps(obj, ensure_ascii=False)


def _frame(rng: Random, encoding: Encoding) -> bytes | str:
    """A message-like frame, often cut or with a byte flipped or inserted."""
    data = pack(_message(rng, encoding) if rng.random() < 0.8 else _tree(rng, encoding), encoding)
    how = rng.randrange(6)
    if how < 3:
        return data
    cut = rng.randrange(len(data) + 1)
    if how == 3:
        return data[:cut]
    if isinstance(data, bytes):
        piece: Any = rng.randbytes(rng.randrange(1, 3))
    else:
        piece = "".join(rng.choice(TEXT) for _ in range(rng.randrange(1, 3)))
    return data[:cut] + piece + data[cut + (how == 4) :]


def frames(encoding: Encoding) -> st.SearchStrategy[bytes | str]:
    """Raw noise (shrinkable) and structured frames built from a drawn random generator."""
    noise = st.binary(max_size=64) if encoding is Encoding.MSGPACK else st.text(max_size=64)
    built = st.randoms(use_true_random=True).map(lambda rng: _frame(rng, encoding))
    return st.one_of(noise, built, built, built)


def check_client_frame(decoder: ClientMessageDecoder, data: bytes | str) -> None:
    try:
        message = decoder.decode(data)
    except ProtocolError as exc:
        assert type(exc) in LEAF_ERRORS
        assert exc.request_id is None or 0 <= exc.request_id <= MAX_REQUEST_ID
        return
    assert decoder.decode(encode(message, decoder.encoding)) == message


MSGPACK_DECODER = ClientMessageDecoder(Encoding.MSGPACK)
JSON_DECODER = ClientMessageDecoder(Encoding.JSON)


@MANY
@given(frames(Encoding.MSGPACK))
def test_any_msgpack_frame_decodes_or_is_refused(data: bytes) -> None:
    check_client_frame(MSGPACK_DECODER, data)


@MANY
@given(frames(Encoding.JSON))
def test_any_json_frame_decodes_or_is_refused(data: str) -> None:
    check_client_frame(JSON_DECODER, data)


@SOME
@given(st.sampled_from(list(Encoding)).flatmap(lambda e: st.tuples(st.just(e), frames(e))))
def test_any_server_frame_decodes_or_is_refused(case: tuple[Encoding, bytes | str]) -> None:
    encoding, data = case
    try:
        message = ServerMessageDecoder(encoding).decode(data)
    except ProtocolError as exc:
        assert type(exc) in LEAF_ERRORS
        return
    again = ServerMessageDecoder(encoding).decode(encode(message, encoding))
    assert msgspec.to_builtins(again) == msgspec.to_builtins(message)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(list(Encoding)).flatmap(
        lambda e: st.tuples(
            st.just(e),
            st.lists(
                st.tuples(
                    st.sampled_from(CLIENT).map(builtins) | frames(e),
                    st.integers(0, 2**31 - 1),
                    st.floats(0, 0.2),
                ),
                max_size=25,
            ),
        )
    )
)
def test_a_connection_answers_every_frame_once(case: tuple[Encoding, list[Any]]) -> None:
    encoding, steps = case
    conn = ServerConnection(encoding, now=0.0)
    now, closed, handed, last_id = 0.0, False, [], -1
    for item, new_id, dt in steps:
        now += dt
        data = pack({**item, "id": new_id}, encoding) if isinstance(item, dict) else item
        out = conn.receive(data, now)
        if closed:
            assert out == []
            continue
        requests = [o for o in out if not isinstance(o, Send | Close)]
        sends = [o for o in out if isinstance(o, Send)]
        assert len(requests) + len(sends[:1]) == 1, out
        for request in requests:
            assert request.id > last_id
            last_id = request.id
            handed.append(request.id)
            assert request.id in conn.pending
            conn.reply(request.id)
        if sends:
            answer = unpack(sends[0].frame)
            if answer["type"] == "reply":
                replay = answer["id"] <= last_id
                assert (answer["error"]["name"] == "duplicate-id") is replay, answer
                last_id = max(last_id, answer["id"])
        closed = any(isinstance(o, Close) for o in out)
    assert handed == sorted(set(handed))
    assert not conn.pending


def unpack(frame: bytes | str) -> Any:
    return msgpack.unpackb(frame) if isinstance(frame, bytes) else json.loads(frame)
