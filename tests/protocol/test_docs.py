"""docs/protocol.md and docs/protocol/ say exactly what the code does.

Schemas and tables are regenerated and compared; every example and every transcript line is
decoded by the real codecs and validated against the committed schemas; the transcript is
replayed through a `ClientConnection` and its dice are recomputed from the revealed seed.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from pathlib import Path
from typing import Any

import jsonschema
import msgpack
import msgspec
import pytest

from dicehall.protocol import (
    ClientConnection,
    ClientMessageDecoder,
    Encoding,
    Gap,
    Response,
    ServerMessageDecoder,
    reference,
    schema,
)
from dicehall.protocol.messages import type_name
from dicehall.protocol.messages.client import CLIENT_MESSAGES, Request
from dicehall.protocol.messages.results import RESULTS
from dicehall.protocol.messages.server import (
    SERVER_MESSAGES,
    Event,
    GameOver,
    Reply,
    Window,
    WindowClosed,
)
from dicehall.rules import RuleEvent, as_wire
from dicehall.rules.registry import get_game

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "protocol.md"
SCHEMAS = ROOT / "docs" / "protocol"
TEXT = DOC.read_text(encoding="utf-8")


def load_schema(path: str) -> jsonschema.protocols.Validator:
    document = json.loads((SCHEMAS / path).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(document)
    cls.check_schema(document)
    return cls(document)  # type: ignore[no-any-return]


CLIENT_SCHEMA = load_schema("v1/client.json")
SERVER_SCHEMA = load_schema("v1/server.json")


def examples() -> list[tuple[str, dict[str, Any]]]:
    """("client" | "server", message) for every ```json client/server block, in order."""
    blocks = re.findall(r"```json (client|server)\n(.*?)\n```", TEXT, flags=re.DOTALL)
    return [(side, json.loads(body)) for side, body in blocks]


def transcript() -> list[tuple[str, str]]:
    [block] = re.findall(r"```transcript\n(.*?)\n```", TEXT, flags=re.DOTALL)
    out = []
    for line in block.splitlines():
        prefix, _, rest = line.partition(" ")
        assert prefix in {"#", "C>", "S>"}, line
        out.append((prefix, rest))
    return out


def check_client(message: dict[str, Any]) -> Request:
    CLIENT_SCHEMA.validate(message)
    decoded = [
        ClientMessageDecoder(Encoding.JSON).decode(json.dumps(message)),
        ClientMessageDecoder(Encoding.MSGPACK).decode(msgpack.packb(message)),
    ]
    assert decoded[0] == decoded[1]
    return decoded[0]


def check_server(message: dict[str, Any]) -> Any:
    SERVER_SCHEMA.validate(message)
    decoded = [
        ServerMessageDecoder(Encoding.JSON).decode(json.dumps(message)),
        ServerMessageDecoder(Encoding.MSGPACK).decode(msgpack.packb(message)),
    ]
    assert msgspec.to_builtins(decoded[0]) == msgspec.to_builtins(decoded[1]) == message
    return decoded[0]


def check_result(request: Request, reply: Reply) -> None:
    if not reply.ok:
        return
    name = type_name(type(request))
    load_schema(f"v1/results/{name}.json").validate(reply.result)
    msgspec.convert(reply.result, RESULTS[type(request)])


def test_schemas_are_up_to_date() -> None:
    assert schema.differences(SCHEMAS) == [], (
        "run: python -m dicehall.protocol.schema --write docs/protocol"
    )


def test_schema_check_command_agrees() -> None:
    assert schema.main(["--check", str(SCHEMAS)]) == 0


def test_tables_are_up_to_date() -> None:
    assert reference.render(TEXT) == TEXT, (
        "run: python -m dicehall.protocol.reference --write docs/protocol.md"
    )


def test_every_error_is_in_the_table() -> None:
    for error in protocol_errors():
        assert f"| {error.code} | `{error.name}` |" in TEXT


def protocol_errors() -> list[Any]:
    from dicehall.protocol.errors import catalogue

    return catalogue()


def test_examples_are_valid_and_cover_every_message() -> None:
    seen_client, seen_server, answered = set(), set(), set()
    last_request: Request | None = None
    for side, message in examples():
        if side == "client":
            last_request = check_client(message)
            seen_client.add(type(last_request))
            continue
        decoded = check_server(message)
        seen_server.add(type(decoded))
        if (
            isinstance(decoded, Reply)
            and last_request is not None
            and decoded.id == last_request.id
        ):
            check_result(last_request, decoded)
            answered.add(type(last_request))
    assert seen_client == set(CLIENT_MESSAGES)
    assert seen_server == set(SERVER_MESSAGES)
    assert answered == set(CLIENT_MESSAGES), "every request needs a reply example right after it"


def _same_shape(doc: Any, real: Any) -> bool:
    """Maps have the same keys, recursively; lists hold items of the same shape (where
    both have some); a null matches anything (a fresh game has nothing rolled yet)."""
    if doc is None or real is None:
        return True
    if isinstance(doc, dict) and isinstance(real, dict):
        return doc.keys() == real.keys() and all(_same_shape(doc[k], real[k]) for k in doc)
    if isinstance(doc, list) and isinstance(real, list):
        return not doc or not real or _same_shape(doc[0], real[0])
    return type(doc) is type(real)


def _views(value: Any) -> list[dict[str, Any]]:
    """Every game view in a message: a map with `game` and `you`."""
    if isinstance(value, dict):
        if "game" in value and "you" in value:
            return [value]
        return [v for item in value.values() for v in _views(item)]
    return []


def test_example_views_have_the_shape_the_engine_gives() -> None:
    """A view in an example (snapshot, legal) has exactly the keys of a real one."""
    views = [v for side, m in examples() if side == "server" for v in _views(m)]
    assert len(views) >= 2
    for view in views:
        state = get_game(view["game"]).new_state(view["seats"], view["options"], bytes(32))
        assert _same_shape(view, state.view(view["you"])), view


def test_transcript_lines_are_valid_messages() -> None:
    for prefix, text in transcript():
        if prefix == "C>":
            check_client(json.loads(text))
        elif prefix == "S>":
            check_server(json.loads(text))


def _die_stream(seed: bytes, n: int) -> Any:
    """The documented derivation, written again from the docs alone."""
    k = 0
    while True:
        for b in hashlib.sha256(seed + b"dicehall" + struct.pack(">QI", n, k)).digest():
            if b < 252:
                yield b % 6 + 1
        k += 1


def _replay(
    game: str, options: dict[str, Any], seats: int, seed: bytes, ordered: list[Any]
) -> list[dict[str, Any]]:
    """Apply what each `window_closed` says was done (defaults as time-outs) to a new game
    with the revealed seed, resolving chance as the server does: the engine's events, as
    a spectator sees them."""
    state = get_game(game).new_state(seats, options, seed)
    events: list[RuleEvent] = []
    for message in ordered:
        if not isinstance(message, WindowClosed):
            continue
        for done in message.actions:
            if done.default:
                events += state.apply_timeout(done.seat)
            else:
                events += state.apply_action(done.seat, done.action)
            while state.chance_pending():
                events += state.resolve_chance()[1]
    assert state.is_over()
    return as_wire(events)


def test_transcript_is_a_consistent_session() -> None:
    connections: list[list[tuple[str, str]]] = []
    for prefix, text in transcript():
        if prefix == "#" and re.match(r"connection \d+:", text):
            connections.append([])
        elif prefix != "#":
            connections[-1].append((prefix, text))
    assert len(connections) == 2

    room_messages: dict[int, Any] = {}
    last_seqs: dict[str, int] = {}
    commitments = set()
    for lines in connections:
        client = ClientConnection(Encoding.JSON, first_id=1, last_seqs=last_seqs)
        for prefix, text in lines:
            if prefix == "C>":
                sent = ClientMessageDecoder(Encoding.JSON).decode(text)
                numbered, _ = client.request(sent)
                assert numbered == sent, "ids must be 1, 2, 3... as a ClientConnection numbers them"
                continue
            for item in client.receive(text):
                assert not isinstance(item, Gap), item
                if isinstance(item, Response):
                    assert item.result is not None or item.error is not None
                    if item.result is not None and hasattr(item.result, "commitment"):
                        commitments.add(item.result.commitment)
                elif hasattr(item, "seq"):
                    room_messages.setdefault(item.seq, item)
        assert client.pending == {}, "every request got its reply"
        last_seqs = client.last_seqs
    seqs = sorted(room_messages)
    assert seqs == list(range(seqs[0], seqs[-1] + 1)), "room messages have no gaps"

    ordered = [room_messages[s] for s in seqs]
    over = ordered[-2]
    assert isinstance(over, GameOver)
    seed = bytes.fromhex(over.seed)
    assert hashlib.sha256(seed).hexdigest() == over.commitment
    assert commitments == {over.commitment}
    rolls = [m.event for m in ordered if isinstance(m, Event) and m.event["type"] == "rolled"]
    assert len(rolls) >= 6
    for n, roll in enumerate(rolls):
        dice = _die_stream(seed, n)
        assert roll["dice"] == {colour: next(dice) for colour in roll["dice"]}

    info = next(m.info for m in ordered if hasattr(m, "info"))
    assert [e.event for e in ordered if isinstance(e, Event)] == _replay(
        info.game, info.options, len(info.seats), seed, ordered
    ), "the events are exactly what the engine makes of the windows' actions"

    open_window = None
    for message in ordered:
        if isinstance(message, Window):
            assert open_window is None
            open_window = message.window
        elif isinstance(message, WindowClosed):
            assert message.window == open_window
            open_window = None
    assert open_window is None


@pytest.mark.parametrize("side", ["client", "server"])
def test_examples_use_real_json(side: str) -> None:
    """Examples are plain JSON objects with a type, one per block."""
    for block_side, message in examples():
        if block_side == side:
            assert isinstance(message, dict) and isinstance(message["type"], str)
