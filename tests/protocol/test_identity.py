"""The `identity` feature on the wire: `hello.key` is bounded like a token, the reply's
`player` shows only when the feature is on, and a `hello` that fails can be said again."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dicehall.protocol import (
    ClientMessageDecoder,
    ConnectionState,
    Encoding,
    Hello,
    HelloResult,
    Limits,
    Ping,
    PlayerIdentity,
    ServerConnection,
    errors,
)
from dicehall.protocol.features import IDENTITY, LEGAL_IN_WINDOW, LOBBY_PAGES, SERVER_FEATURES
from dicehall.protocol.limits import MAX_KEY

from .test_server_connection import error_of, send


def test_features_are_offered_in_the_order_they_came_so_older_ones_keep_their_place() -> None:
    in_order = (
        "timestamps",
        "legal_without_view",
        "progress",
        IDENTITY,
        LEGAL_IN_WINDOW,
        LOBBY_PAGES,
        "epochs",
    )
    assert in_order == SERVER_FEATURES


@pytest.mark.parametrize(
    "key",
    ["", "x" * (MAX_KEY + 1), "pk1 with spaces", "pk1.\u00e9t\u00e9", "pk1.\x00", 42, ["pk1"]],
)
def test_a_key_out_of_bounds_is_an_invalid_message(key: Any) -> None:
    frame = json.dumps({"type": "hello", "id": 1, "client": "c", "key": key})
    with pytest.raises(errors.InvalidMessageError) as caught:
        ClientMessageDecoder(Encoding.JSON).decode(frame)
    assert caught.value.request_id == 1 and "key" in caught.value.message


def test_a_key_is_any_printable_ascii_up_to_its_bound() -> None:
    key = "".join(chr(c) for c in range(0x21, 0x7F))[:MAX_KEY]
    frame = json.dumps({"type": "hello", "id": 1, "client": "c", "key": key})
    hello = ClientMessageDecoder(Encoding.JSON).decode(frame)
    assert isinstance(hello, Hello) and hello.key == key


@settings(max_examples=500, deadline=None)
@given(key=st.text(max_size=MAX_KEY + 8))
def test_any_string_key_decodes_or_is_an_invalid_message(key: str) -> None:
    frame = json.dumps(
        {"type": "hello", "id": 1, "client": "c", "features": ["identity"], "key": key}
    )
    try:
        hello = ClientMessageDecoder(Encoding.JSON).decode(frame)
    except errors.InvalidMessageError:
        return
    assert isinstance(hello, Hello) and hello.key == key


def test_the_reply_names_the_player_only_when_there_is_one() -> None:
    """A connection without the feature never sees `player`, not even as null."""
    assert "player" not in msgspec.to_builtins(HelloResult(name="Ada"))
    player = PlayerIdentity(id="Zq4mR8tWc2Lx0bNs", key="pk1.Zq4mR8tWc2Lx0bNs.mac")
    wire = msgspec.to_builtins(HelloResult(player=player))
    assert wire["player"] == {"id": "Zq4mR8tWc2Lx0bNs", "key": "pk1.Zq4mR8tWc2Lx0bNs.mac"}
    back = msgspec.convert(wire, HelloResult)
    assert back.player == player
    assert msgspec.convert({}, HelloResult).player is msgspec.UNSET


def test_a_failed_hello_can_be_said_again_on_the_same_connection() -> None:
    c = ServerConnection(Encoding.JSON, Limits(hello_timeout_ms=1000), now=0.0)
    [first] = send(c, {"type": "hello", "id": 1, "client": "c", "key": "pk1.x.y"}, now=0.5)
    assert isinstance(first, Hello) and c.state is ConnectionState.OPEN
    c.fail(1, errors.BadKeyError())
    assert c.state is ConnectionState.AWAITING_HELLO
    assert c.deadline() == 1.5  # the hello time-out counts from the hello that failed
    out = send(c, {"type": "ping", "id": 2}, now=0.6)
    assert error_of(out)["name"] == "hello-first"
    out = send(c, {"type": "hello", "id": 2, "client": "c"}, now=0.7)
    assert error_of(out)["name"] == "duplicate-id"  # (ids still rise)
    [again] = send(c, {"type": "hello", "id": 3, "client": "c"}, now=0.8)
    assert isinstance(again, Hello)
    c.reply(3)
    assert c.state is ConnectionState.OPEN
    [ping] = send(c, {"type": "ping", "id": 4}, now=0.9)
    assert isinstance(ping, Ping)
    out = send(c, {"type": "hello", "id": 5, "client": "c"}, now=1.0)
    assert error_of(out)["name"] == "already-hello"
    c.fail(4, errors.InternalError())  # a later request's failure leaves the connection open
    assert c.state is ConnectionState.OPEN


def test_a_hello_that_fails_too_late_closes_at_its_time_out() -> None:
    c = ServerConnection(Encoding.JSON, Limits(hello_timeout_ms=1000), now=0.0)
    send(c, {"type": "hello", "id": 1, "client": "c"}, now=5.0)
    c.fail(1, errors.BadKeyError())
    assert c.tick(5.9) == []
    assert c.tick(6.0)[-1].code == 4005
