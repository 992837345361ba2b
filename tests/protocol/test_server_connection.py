"""The server's per-connection protocol, driven without sockets or clocks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dicehall.protocol import (
    Close,
    CloseCode,
    ConnectionState,
    Encoding,
    Hello,
    Limits,
    Ping,
    Reply,
    Send,
    ServerConnection,
    Spectate,
    Welcome,
    errors,
    refusal_reason,
    select,
)
from dicehall.protocol.close import MAX_REASON_BYTES, reason


def conn(**limits: Any) -> ServerConnection:
    return ServerConnection(Encoding.JSON, Limits(**limits), now=0.0)


def send(c: ServerConnection, message: dict[str, Any], now: float = 0.0) -> list[Any]:
    return c.receive(json.dumps(message), now)


def frames(out: list[Any]) -> list[dict[str, Any]]:
    return [json.loads(o.frame) for o in out if isinstance(o, Send)]


def hello(c: ServerConnection, rid: int = 0) -> None:
    [request] = send(c, {"type": "hello", "id": rid, "client": "test"})
    assert isinstance(request, Hello)
    c.reply(rid)


def error_of(out: list[Any]) -> dict[str, Any]:
    [frame] = frames(out)[:1]
    return frame["error"]  # type: ignore[no-any-return]


def test_welcome_announces_protocol_and_limits() -> None:
    c = conn(rate=5)
    welcome = json.loads(c.welcome("dicehall/0.1.0", ["x"]))
    assert welcome["type"] == "welcome"
    assert welcome["protocol"] == "dicehall.v1.json"
    assert welcome["limits"]["rate"] == 5
    assert welcome["features"] == ["x"]


def test_hello_must_come_first_and_only_once() -> None:
    c = conn()
    out = send(c, {"type": "ping", "id": 1})
    assert frames(out)[0]["type"] == "reply" and frames(out)[0]["id"] == 1
    assert error_of(out)["name"] == "hello-first"
    assert c.state is ConnectionState.AWAITING_HELLO
    hello(c, 2)
    assert c.state is ConnectionState.OPEN
    out = send(c, {"type": "hello", "id": 3, "client": "again"})
    assert error_of(out)["code"] == errors.AlreadyHelloError.code
    [ping] = send(c, {"type": "ping", "id": 4})
    assert isinstance(ping, Ping)


def test_every_request_gets_exactly_one_reply() -> None:
    c = conn()
    hello(c)
    [request] = send(c, {"type": "spectate", "id": 1, "room": "r1"})
    assert isinstance(request, Spectate)
    assert c.pending == {1}
    frame = json.loads(c.fail(1, errors.NoSuchRoomError("no room r1", request_id=1)))
    assert frame == {
        "type": "reply",
        "id": 1,
        "ok": False,
        "error": {"code": 2003, "name": "no-such-room", "message": "no room r1"},
    }
    with pytest.raises(errors.ProtocolMisuse):
        c.reply(1)
    with pytest.raises(errors.ProtocolMisuse):
        c.reply(99)
    assert c.pending == frozenset()


def test_ok_reply_always_has_a_result() -> None:
    c = conn()
    [request] = send(c, {"type": "hello", "id": 0, "client": "x"})
    assert json.loads(c.reply(request.id)) == {"type": "reply", "id": 0, "ok": True, "result": {}}


def test_illegal_action_error_carries_the_rule() -> None:
    c = conn()
    hello(c)
    send(c, {"type": "act", "id": 1, "room": "r", "action": {"type": "pass"}})
    error = errors.IllegalActionError("the row must increase", rule="row-increasing")
    assert json.loads(c.fail(1, error))["error"]["rule"] == "row-increasing"


def test_replies_are_not_ordinary_messages() -> None:
    with pytest.raises(errors.ProtocolMisuse):
        conn().send(Reply(id=1, ok=True))


def test_old_and_replayed_ids_are_refused() -> None:
    c = conn()
    hello(c, 5)
    assert error_of(send(c, {"type": "ping", "id": 5}))["name"] == "duplicate-id"
    assert error_of(send(c, {"type": "ping", "id": 4}))["name"] == "duplicate-id"
    [ping] = send(c, {"type": "ping", "id": 9})
    c.reply(ping.id)
    # An id spent on a refused request is spent too.
    assert error_of(send(c, {"type": "teleport", "id": 10}))["name"] == "unknown-type"
    assert error_of(send(c, {"type": "ping", "id": 10}))["name"] == "duplicate-id"
    # A broken request that reuses an id is a replay first.
    assert error_of(send(c, {"type": "spectate", "id": 10}))["name"] == "duplicate-id"
    assert c.state is ConnectionState.OPEN


def test_errors_echo_the_id_when_it_can_be_read() -> None:
    c = conn()
    hello(c)
    [frame] = frames(send(c, {"type": "spectate", "id": 7, "room": 12}))
    assert frame["type"] == "reply" and frame["id"] == 7 and frame["ok"] is False
    assert frame["error"]["name"] == "invalid-message"
    assert "$.room" in frame["error"]["message"]
    [frame] = frames(c.receive("{not json", 0.0))
    assert frame == {
        "type": "error",
        "error": {"code": 1001, "name": "malformed", "message": frame["error"]["message"]},
    }


def test_protocol_errors_in_a_row_close_the_connection() -> None:
    c = conn(max_errors=3)
    hello(c)
    for _ in range(2):
        out = c.receive("garbage", 0.0)
        assert not any(isinstance(o, Close) for o in out)
    [ping] = send(c, {"type": "ping", "id": 1})  # a good request resets the streak
    c.reply(ping.id)
    c.receive("garbage", 0.0)
    c.receive("garbage", 0.0)
    out = c.receive("garbage", 0.0)
    assert out[-1] == Close(CloseCode.PROTOCOL_ABUSE, "too many protocol errors in a row")
    goodbye = frames(out)[-1]
    assert goodbye == {
        "type": "goodbye",
        "code": 4001,
        "reason": "too many protocol errors in a row",
    }
    assert c.state is ConnectionState.CLOSED
    assert c.receive(json.dumps({"type": "ping", "id": 50}), 0.0) == []


def test_lobby_and_game_errors_are_not_abuse() -> None:
    c = conn(max_errors=2)
    hello(c)
    for rid in range(1, 6):
        send(c, {"type": "spectate", "id": rid, "room": "nope"})
        c.fail(rid, errors.NoSuchRoomError(request_id=rid))
    assert c.state is ConnectionState.OPEN


def test_rate_limit_refuses_then_closes_a_flood() -> None:
    c = conn(rate=10, burst=5)
    hello(c)  # takes one token at t=0
    results: list[object] = []
    for rid in range(1, 12):
        out = send(c, {"type": "ping", "id": rid}, now=0.0)
        if not out:
            results.append("ignored")
        elif isinstance(out[0], Ping):
            c.reply(rid)
            results.append("ok")
        elif isinstance(out[-1], Close):
            results.append(out[-1].code)
        else:
            assert error_of(out)["name"] == "rate-limited"
            results.append("limited")
    assert results == ["ok"] * 4 + ["limited"] * 5 + [CloseCode.RATE_LIMIT, "ignored"]
    assert c.state is ConnectionState.CLOSED


def test_websocket_pings_and_pongs_share_the_rate_limit_with_requests() -> None:
    c = conn(rate=10, burst=5)
    hello(c)  # one token
    verdicts = [c.control(now=0.0) for _ in range(4)]
    assert verdicts == [(True, [])] * 4, "within the burst: answered"
    assert error_of(send(c, {"type": "ping", "id": 1}))["name"] == "rate-limited"
    assert [c.control(now=0.0) for _ in range(4)] == [(False, [])] * 4, "over: not answered"
    within, out = c.control(now=0.0)  # the debt passes the floor: a flood
    assert not within and isinstance(out[-1], Close) and out[-1].code == CloseCode.RATE_LIMIT
    assert frames(out)[0]["type"] == "goodbye"
    assert c.control(now=10.0) == (False, []), "closed: nothing more"


def test_a_ping_is_a_sign_of_life_for_the_idle_time_out() -> None:
    c = conn(idle_timeout_ms=1000)
    hello(c)
    c.control(now=0.9)
    assert c.tick(1.5) == [] and c.deadline() == pytest.approx(1.9)


def test_rate_limit_recovers_when_the_client_slows_down() -> None:
    c = conn(rate=10, burst=2)
    hello(c)
    send(c, {"type": "ping", "id": 1})
    c.reply(1)
    assert error_of(send(c, {"type": "ping", "id": 2}))["name"] == "rate-limited"
    [ping] = send(c, {"type": "ping", "id": 3}, now=0.5)  # 5 tokens' worth later
    assert isinstance(ping, Ping)


def test_too_large_frame_closes_with_1009() -> None:
    c = conn(max_frame=100)
    out = c.receive(json.dumps({"type": "chat", "id": 1, "room": "r", "text": "x" * 200}), 0.0)
    assert error_of(out)["name"] == "too-large"
    assert isinstance(out[-1], Close) and out[-1].code == CloseCode.MESSAGE_TOO_BIG


def test_wrong_frame_type_is_an_error() -> None:
    out = conn().receive(b'{"type":"ping","id":1}', 0.0)
    assert error_of(out)["name"] == "wrong-frame"


def test_hello_and_idle_timeouts() -> None:
    c = conn(hello_timeout_ms=1000, idle_timeout_ms=5000)
    assert c.deadline() == 1.0
    assert c.tick(0.9) == []
    out = c.tick(1.0)
    assert out[-1] == Close(CloseCode.HELLO_TIMEOUT, "no hello in time")
    assert c.tick(2.0) == []

    c = conn(hello_timeout_ms=1000, idle_timeout_ms=5000)
    send(c, {"type": "hello", "id": 0, "client": "x"}, now=0.5)
    assert c.deadline() == 5.5
    c.heard(4.0)  # e.g. a WebSocket pong
    assert c.tick(8.9) == []
    assert c.tick(9.0)[-1].code == CloseCode.IDLE_TIMEOUT


def test_close_is_idempotent_and_reasons_fit() -> None:
    c = conn()
    out = c.close(CloseCode.GOING_AWAY, "restart", retry_ms=1500)
    assert frames(out) == [{"type": "goodbye", "code": 1001, "reason": "restart", "retry_ms": 1500}]
    assert c.close(CloseCode.GOING_AWAY) == []
    long = reason("é" * 100)
    assert len(long.encode()) <= MAX_REASON_BYTES and long == "é" * 61


def test_msgpack_connection_speaks_binary() -> None:
    c = ServerConnection(Encoding.MSGPACK, now=0.0)
    assert isinstance(c.welcome("s"), bytes)
    out = c.receive('{"type":"hello","id":0,"client":"x"}', 0.0)
    assert isinstance(out[0], Send) and isinstance(out[0].frame, bytes)
    assert c.subprotocol == "dicehall.v1.msgpack"


def test_subprotocol_negotiation() -> None:
    assert select(["chat", "dicehall.v1.json", "dicehall.v1.msgpack"]) == "dicehall.v1.json"
    assert select(["dicehall.v2.json", "dicehall.v1.msgpack"]) == "dicehall.v1.msgpack"
    assert select(["chat"]) is None and select([]) is None
    text = refusal_reason()
    assert len(text.encode()) <= MAX_REASON_BYTES
    assert "dicehall.v1.msgpack" in text and "dicehall.v1.json" in text


def test_welcome_decodes_as_a_welcome() -> None:
    from dicehall.protocol import ServerMessageDecoder

    c = ServerConnection(Encoding.MSGPACK, now=0.0)
    message = ServerMessageDecoder(Encoding.MSGPACK).decode(c.welcome("dicehall/test"))
    assert isinstance(message, Welcome) and message.limits == c.limits
