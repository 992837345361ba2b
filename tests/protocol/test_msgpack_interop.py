"""A client built only on the plain `msgpack` package interoperates with the codec.

Codec level: the client packs maps with `msgpack.packb` and reads frames with
`msgpack.unpackb`; the server side is the project's `ServerConnection`. The same check over
a real WebSocket comes with the server (issue 5).
"""

from __future__ import annotations

from typing import Any

import msgpack
import msgspec
import pytest

from dicehall.protocol import (
    Act,
    Encoding,
    Hello,
    HelloResult,
    JoinResult,
    Ping,
    PingResult,
    Send,
    ServerConnection,
    encode,
)
from dicehall.protocol.messages import type_name

from .samples import CLIENT, SERVER


class PlainMsgpackClient:
    """What a bot author writes with nothing but `msgpack`: dicts in, dicts out."""

    def __init__(self, **pack_options: Any) -> None:
        self.next_id = 0
        self.pack_options = pack_options

    def frame(self, message: dict[str, Any]) -> bytes:
        message = {**message, "id": self.next_id}
        self.next_id += 1
        return msgpack.packb(message, **self.pack_options)

    @staticmethod
    def read(frame: bytes | str) -> dict[str, Any]:
        assert isinstance(frame, bytes), "msgpack frames are binary"
        out = msgpack.unpackb(frame, raw=False, strict_map_key=True)
        assert isinstance(out, dict)
        return out


def serve(conn: ServerConnection, frame: bytes) -> list[bytes | str]:
    """A stand-in application: answers hello, join-less acts and pings."""
    answers: list[bytes | str] = []
    for item in conn.receive(frame, 0.0):
        if isinstance(item, Send):
            answers.append(item.frame)
        elif isinstance(item, Hello):
            answers.append(conn.reply(item.id, HelloResult(name=item.name)))
        elif isinstance(item, Ping):
            answers.append(conn.reply(item.id, PingResult(time=123, echo=item.time)))
        elif isinstance(item, Act):
            answers.append(conn.reply(item.id, {"echo": item.action}))
        else:
            answers.append(conn.reply(item.id, JoinResult(room="r1", seat=0, token="t")))
    return answers


@pytest.mark.parametrize(
    "options",
    [{}, {"use_bin_type": False}, {"use_single_float": True}],
    ids=["default", "legacy-raw", "single-float"],
)
def test_plain_msgpack_client_session(options: dict[str, Any]) -> None:
    server = ServerConnection(Encoding.MSGPACK, now=0.0)
    client = PlainMsgpackClient(**options)
    welcome = client.read(server.welcome("dicehall/test"))
    assert welcome["type"] == "welcome" and welcome["protocol"] == "dicehall.v1.msgpack"
    assert welcome["limits"]["max_frame"] == server.limits.max_frame

    [reply] = serve(server, client.frame({"type": "hello", "client": "plain", "name": "Bo"}))
    assert client.read(reply) == {"type": "reply", "id": 0, "ok": True, "result": {
        "name": "Bo", "seats": [], "rejected": [], "features": []}}  # fmt: skip

    [reply] = serve(server, client.frame({"time": 2**40, "type": "ping"}))  # any key order
    assert client.read(reply)["result"] == {"time": 123, "echo": 2**40}

    action = {"type": "place", "tiles": [{"color": "red", "shape": "star", "x": -3, "y": 7}]}
    [reply] = serve(server, client.frame({"type": "act", "room": "r1", "action": action}))
    assert client.read(reply)["result"] == {"echo": action}

    [reply] = serve(server, client.frame({"type": "join", "room": "r1"}))
    assert client.read(reply)["result"] == {"room": "r1", "seat": 0, "token": "t"}

    [error] = serve(server, client.frame({"type": "join", "room": 5}))
    assert client.read(error)["error"]["name"] == "invalid-message"
    assert server.pending == frozenset()


def test_bin_is_not_a_string() -> None:
    """JSON has no bytes, so neither does the protocol: a bin where a str goes is refused."""
    server = ServerConnection(Encoding.MSGPACK, now=0.0)
    server.receive(msgpack.packb({"type": "hello", "id": 0, "client": "c"}), 0.0)
    [error] = serve(server, msgpack.packb({"type": "join", "id": 1, "room": b"r1"}))
    assert PlainMsgpackClient.read(error)["error"]["name"] == "invalid-message"


@pytest.mark.parametrize("message", SERVER, ids=lambda m: type_name(type(m)))
def test_every_server_message_reads_with_plain_msgpack(message: msgspec.Struct) -> None:
    frame = encode(message, Encoding.MSGPACK)
    assert PlainMsgpackClient.read(frame) == msgspec.to_builtins(message)


@pytest.mark.parametrize("message", CLIENT, ids=lambda m: type_name(type(m)))
def test_every_client_message_packed_by_msgpack_decodes(message: msgspec.Struct) -> None:
    plain = msgspec.to_builtins(message)
    reversed_keys = dict(reversed(list(plain.items())))
    server = ServerConnection(Encoding.MSGPACK, now=0.0)
    if type_name(type(message)) != "hello":
        server.receive(msgpack.packb({"type": "hello", "id": 0, "client": "c"}), 0.0)
        plain["id"] = reversed_keys["id"] = message.id + 100  # type: ignore[attr-defined]
    [request] = server.receive(msgpack.packb(reversed_keys), 0.0)
    assert msgspec.to_builtins(request) == plain
