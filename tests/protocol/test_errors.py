"""The error catalogue is one exception tree with stable, well-formed entries."""

from __future__ import annotations

import pytest

from dicehall.protocol import CloseCode, Encoding, ErrorBody, encode, errors
from dicehall.protocol.close import MEANINGS
from dicehall.protocol.messages.server import ErrorMessage

GROUPS = {errors.WireError: 1, errors.LobbyError: 2, errors.GameError: 3, errors.ServerError: 4}


def test_codes_are_unique_and_in_their_group_range() -> None:
    entries = errors.catalogue()
    assert len({e.code for e in entries}) == len(entries)
    assert len({e.name for e in entries}) == len(entries)
    for entry in entries:
        [group] = [g for g in GROUPS if issubclass(entry, g)]
        assert entry.code // 1000 == GROUPS[group], entry
        assert entry.__name__.endswith("Error")
        assert entry.meaning


def test_catalogue_has_what_the_protocol_promises() -> None:
    names = {e.name for e in errors.catalogue()}
    assert {
        "malformed", "too-large", "too-deep", "invalid-message", "unknown-type", "hello-first",
        "duplicate-id", "no-such-room", "room-full", "seat-taken", "not-in-room", "bad-options",
        "already-started", "illegal-action", "not-your-turn", "window-closed", "game-over",
        "rate-limited", "internal", "shutting-down",
    } <= names  # fmt: skip


def test_a_bad_entry_is_refused_at_definition() -> None:
    with pytest.raises(TypeError):

        class Clash(errors.LobbyError):
            code, name, meaning = 2001, "clash", "uses a taken code"

    with pytest.raises(TypeError):

        class OutOfRange(errors.LobbyError):
            code, name, meaning = 3999, "out-of-range", "a game code in the lobby group"

    with pytest.raises(TypeError):

        class BadName(errors.GameError):
            code, name, meaning = 3999, "Bad Name", "not kebab-case"


def test_errors_travel_as_bodies_and_come_back_as_exceptions() -> None:
    error = errors.IllegalActionError("row must increase", rule="row-increasing", request_id=3)
    body = error.body()
    assert body == ErrorBody(
        code=3001, name="illegal-action", message="row must increase", rule="row-increasing"
    )
    back = errors.from_body(body)
    assert type(back) is errors.IllegalActionError and back.rule == "row-increasing"
    assert back.message == "row must increase"
    unknown = errors.from_body(ErrorBody(code=2999, name="from-the-future", message="new"))
    assert type(unknown) is errors.ProtocolError and unknown.message == "new"


def test_default_message_is_the_meaning() -> None:
    assert errors.NoSuchRoomError().message == errors.NoSuchRoomError.meaning


def test_rule_is_left_out_when_absent() -> None:
    frame = encode(ErrorMessage(error=errors.MalformedError("x").body()), Encoding.JSON)
    assert frame == '{"type":"error","error":{"code":1001,"name":"malformed","message":"x"}}'


def test_misuse_is_internal_and_not_a_catalogue_entry() -> None:
    assert issubclass(errors.ProtocolMisuse, errors.InternalError)
    assert errors.ProtocolMisuse not in errors.catalogue()
    assert errors.ProtocolMisuse("x").body().code == errors.InternalError.code


def test_every_close_code_is_documented() -> None:
    assert set(MEANINGS) == set(CloseCode)
    assert all(4000 <= c < 5000 or 1000 <= c < 1016 for c in CloseCode)
