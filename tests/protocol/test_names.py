"""Names hold only what shows, and a player's name is no house bot's (docs/protocol.md,
"Names"; issue 39): the server's decoder refuses the rest with `invalid-message`, the
request's id kept, in both encodings; what may be said in chat stays sayable."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import msgspec
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dicehall.protocol import ClientMessageDecoder, Encoding, errors
from dicehall.protocol.messages import client as requests

DECODERS = {e: ClientMessageDecoder(e) for e in (Encoding.JSON, Encoding.MSGPACK)}

# The categories names may not hold that a UTF-8 frame can carry (not Cs: surrogates are no
# UTF-8 at all, and the decoder refuses them as `malformed`).
hidden = st.characters(categories=["Cc", "Cf", "Zl", "Zp"])
shown = st.characters(codec="utf-8", exclude_categories=["Cc", "Cf", "Zl", "Zp", "Cs"])
visible_text = st.text(shown, min_size=1, max_size=20)
bot_kind = st.from_regex(r"[A-Za-z0-9_]{1,12}", fullmatch=True)


def frame(encoding: Encoding, message: dict[str, Any]) -> str | bytes:
    if encoding is Encoding.JSON:
        return json.dumps(message)
    return msgspec.msgpack.encode(message)


def decode(message: dict[str, Any], encoding: Encoding = Encoding.JSON) -> Any:
    return DECODERS[encoding].decode(frame(encoding, message))


def refused(message: dict[str, Any], field: str) -> None:
    for encoding in DECODERS:
        with pytest.raises(errors.InvalidMessageError) as caught:
            decode(message, encoding)
        assert caught.value.request_id == message["id"]
        assert str(caught.value).startswith(f"{message['type']}: ") and field in str(caught.value)


def names(name: str) -> list[dict[str, Any]]:
    """Every request that carries a player's display name."""
    return [
        {"type": "hello", "id": 0, "client": "test", "name": name},
        {"type": "join", "id": 7, "room": "r1", "name": name},
    ]


@settings(max_examples=300, deadline=None)
@given(before=st.text(shown, max_size=10), char=hidden, after=st.text(shown, max_size=10))
def test_a_control_or_format_character_anywhere_in_a_name_is_refused(
    before: str, char: str, after: str
) -> None:
    name = before + char + after
    for message in names(name):
        refused(message, "name")
    refused({"type": "create", "id": 3, "game": "qwixx", "seats": 2, "name": name}, "name")
    refused({"type": "hello", "id": 0, "client": f"test{char}"}, "client")


@pytest.mark.parametrize(
    "name",
    [
        "Ada\u0085",  # NEXT LINE, the C1 control the probe got through
        "\u202eAda",  # RIGHT-TO-LEFT OVERRIDE: shows as "adA"
        "Ada\u2066",  # LEFT-TO-RIGHT ISOLATE, never closed
        "A\u200bda",  # ZERO WIDTH SPACE: looks like "Ada"
        "Ada\u200d",  # ZERO WIDTH JOINER
        "Ada\ufeff",  # ZERO WIDTH NO-BREAK SPACE
        "Ada\u2028Bo",  # LINE SEPARATOR
        "\u00adAda",  # SOFT HYPHEN
    ],
)
def test_the_probes_names_are_refused(name: str) -> None:
    for message in names(name):
        refused(message, "name")


@settings(max_examples=200, deadline=None)
@given(
    kind=bot_kind,
    seat=st.integers(0, 99),
    case=st.sampled_from([str.lower, str.upper, str.title]),
    join=st.sampled_from(["-", " ", "_", "  ", " - "]),
    pad=st.sampled_from(["", " ", "\u3000"]),
    wide=st.booleans(),
)
def test_a_house_bots_name_is_no_players_name(
    kind: str, seat: int, case: Any, join: str, pad: str, wide: bool
) -> None:
    name = pad + case(join.join([kind, "bot", str(seat)])) + pad
    if wide:  # fullwidth forms: NFKC folds them back
        name = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name)
    for message in names(name):
        refused(message, "name")
    room = decode({"type": "create", "id": 3, "game": "qwixx", "seats": 2, "name": name})
    assert isinstance(room, requests.Create)  # (a room may be called anything that shows)


@pytest.mark.parametrize("name", ["house:strong", "House:Strong", "strong-bot-1", "a-bot-0"])
def test_the_house_bots_own_names_and_ids_are_refused(name: str) -> None:
    for message in names(name):
        refused(message, "name")


@settings(max_examples=300, deadline=None)
@given(name=visible_text)
def test_a_name_that_shows_is_taken_as_it_is(name: str) -> None:
    folded = unicodedata.normalize("NFKC", name).casefold()
    assume("bot" not in folded and "house:" not in folded)  # (the house bots' form: above)
    for message in names(name):
        for encoding in DECODERS:
            decoded = decode(message, encoding)
            assert decoded.name == name


@pytest.mark.parametrize(
    "name",
    ["Ada", "Bö Ødegård", "李小龍", "عائشة", "Ada 🎲", "robot", "bot-1", "Ada's bot", "node bot"],
)
def test_ordinary_names_stay_names(name: str) -> None:
    for message in names(name):
        assert decode(message).name == name


@settings(max_examples=200, deadline=None)
@given(
    before=st.text(shown, max_size=10),
    char=st.sampled_from(
        "\x0a\x0d\x85\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    ),
    after=st.text(shown, max_size=10),
)
def test_chat_refuses_line_breaks_and_bidi_controls(before: str, char: str, after: str) -> None:
    refused({"type": "chat", "id": 5, "room": "r1", "text": before + char + after}, "text")


@pytest.mark.parametrize(
    "text",
    [
        "good game 👨\u200d👩\u200d👧",  # ZERO WIDTH JOINERs of an emoji sequence
        "\u05e9\u05dc\u05d5\u05dd!\u200f",  # Hebrew with a RIGHT-TO-LEFT MARK
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian: ZERO WIDTH NON-JOINER
        "strong-bot-1 plays well",
    ],
)
def test_chat_keeps_what_writing_needs(text: str) -> None:
    said = decode({"type": "chat", "id": 5, "room": "r1", "text": text})
    assert isinstance(said, requests.SendChat) and said.text == text


def test_the_python_client_refuses_such_a_name_before_it_connects() -> None:
    from dicehall.clients.client import Client

    for name in ("strong-bot-1", "\u202eAda"):
        with pytest.raises(ValueError, match="name: "):
            Client("ws://127.0.0.1:9/ws", name=name)
    assert Client("ws://127.0.0.1:9/ws", name="Ada").name == "Ada"
