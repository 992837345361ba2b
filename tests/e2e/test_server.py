"""The whole server over real sockets: a `dicehall serve` process and raw WebSocket clients.

The clients (tests/e2e/wire.py) know nothing of dicehall's code, only docs/protocol.md, so
each test checks the public contract: lobby over HTTP and WebSocket, seat tokens,
reconnecting and resuming, turn-window time-outs, bad input, hidden information, house
bots, game records, MessagePack interoperability and metrics.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from dicehall.rules.records import replay
from tests.support.servers import ServerProcess

from .helpers import metrics, new_room
from .wire import MSGPACK, NO_PROXY, RawClient, encode, is_over, seqs

# --- helpers ---------------------------------------------------------------------------------


def nodes(value: Any) -> Iterator[Any]:
    """Every value nested in a decoded message, the message included."""
    stack = [value]
    while stack:
        v = stack.pop()
        yield v
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def bare_tiles(message: Any) -> list[tuple[str, str]]:
    """Qwirkle tiles as a hand holds them: {color, shape} maps without a board position."""
    return [
        (v["color"], v["shape"])
        for v in nodes(message)
        if isinstance(v, dict) and set(v) == {"color", "shape"}
    ]


async def play_game(client: RawClient, room: str, seat: int, rng: random.Random) -> dict[str, Any]:
    """Play `seat` to the end of the game; the `game_over` message."""
    return await client.play_until(room, seat, is_over, rng, timeout=120)


def check_record(server: ServerProcess, room: str, over: dict[str, Any]) -> dict[str, Any]:
    """The room's record replays, proves its dice fair and gives `game_over`'s scores."""
    status, body = server.get(f"/api/rooms/{room}/record")
    assert status == 200, body
    record: dict[str, Any] = json.loads(body)
    result = replay(record)
    assert result.verified is True
    assert result.state.is_over()
    assert result.state.scores() == over["scores"]
    assert result.state.winners() == over["winners"]
    assert record["seed"] == over["seed"]
    assert record["commitment"] == over["commitment"]
    assert hashlib.sha256(bytes.fromhex(over["seed"])).hexdigest() == over["commitment"]
    return record


# --- HTTP ------------------------------------------------------------------------------------


async def test_health_readiness_and_http_lobby(server: ServerProcess) -> None:
    assert server.get("/healthz") == (200, "ok\n")
    # (the second line is how history is doing: tests/e2e/test_history.py)
    assert server.get("/readyz") == (200, "ready\nhistory: up to date\n")

    host = await RawClient.open(server.ws)
    status, body = server.get("/api/games")
    assert status == 200
    games = json.loads(body)
    assert {g["name"] for g in games} == {"qwinto", "qwixx", "qwirkle", "yamb"}
    assert games == (await host.call("games"))["games"]

    public = await host.call("create", game="qwixx", seats=3, name="Lunch break")
    private = await new_room(host, "qwixx", 2, public=False)
    other = await new_room(host, "yamb", 2)
    status, body = server.get("/api/rooms")
    assert status == 200
    listed = {r["room"]: r for r in json.loads(body)}
    assert listed[public["room"]["room"]] == public["room"]
    assert other in listed
    assert private not in listed
    status, body = server.get("/api/rooms?game=qwixx")
    assert {r["game"] for r in json.loads(body)} == {"qwixx"}
    assert other not in {r["room"] for r in json.loads(body)}
    ws_listed = (await host.call("rooms", game="qwixx"))["rooms"]
    assert public["room"] in ws_listed

    assert server.get("/api/rooms/nosuchroom/record")[0] == 404
    assert server.get(f"/api/rooms/{private}/record")[0] == 404  # not played yet
    await host.close()


async def test_metrics_are_there_and_move(server: ServerProcess) -> None:
    names = {
        "dicehall_connections",
        "dicehall_rooms",
        "dicehall_rooms_playing",
        "dicehall_seats_taken",
        "dicehall_house_bots",
        "dicehall_errors_total",
        "dicehall_fanout_latency_seconds",
        "dicehall_slow_consumers_dropped_total",
        "dicehall_windows_closed_by_deadline_total",
        "dicehall_room_messages_sent_total",
    }
    before = metrics(server)
    assert names <= set(before)

    watcher = await RawClient.open(server.ws)
    room = await new_room(watcher, "qwinto", 1, turn_window=1, public=False)
    await watcher.call("join", room=room)
    await watcher.call("start", room=room)
    closed = await watcher.next("window_closed", timeout=5)  # nobody answers: a time-out
    assert closed["actions"][0]["default"] is True
    assert (await watcher.fails("join", room="nosuchroom"))["name"] == "no-such-room"
    await watcher.sync()
    during = metrics(server)
    assert during["dicehall_connections"] >= before["dicehall_connections"] + 1
    assert during["dicehall_rooms"] >= before["dicehall_rooms"] + 1
    assert during["dicehall_rooms_playing"] >= before["dicehall_rooms_playing"] + 1
    assert during["dicehall_seats_taken"] >= before["dicehall_seats_taken"] + 1
    sent = len(seqs(watcher.room_messages(room)))  # snapshots are not counted
    assert (
        during["dicehall_room_messages_sent_total"]
        >= before["dicehall_room_messages_sent_total"] + sent
    )
    assert (
        during["dicehall_fanout_latency_seconds_count"]
        >= before.get("dicehall_fanout_latency_seconds_count", 0) + sent
    )
    assert (
        during["dicehall_windows_closed_by_deadline_total"]
        >= before["dicehall_windows_closed_by_deadline_total"] + 1
    )
    key = 'dicehall_errors_total{name="no-such-room"}'
    assert during[key] >= before.get(key, 0) + 1
    await watcher.close()


# --- rooms, bots, records --------------------------------------------------------------------


async def test_house_bots_fill_seats_and_play_to_a_verified_record(server: ServerProcess) -> None:
    host = await RawClient.open(server.ws)
    room = await new_room(host, "qwinto", 3, public=False)
    await host.call("spectate", room=room)
    added = await host.call("add_bots", room=room, count=2)
    assert added == {"seats": [0, 1]}
    assert (await host.fails("start", room=room))["name"] == "forbidden"  # seat 2 is open
    assert (await host.call("add_bots", room=room)) == {"seats": [2]}
    assert (await host.fails("add_bots", room=room))["name"] == "room-full"
    bots_now = metrics(server)["dicehall_house_bots"]
    assert bots_now >= 3
    start = await host.call("start", room=room)
    over = await host.next(is_over, timeout=30)
    assert over["commitment"] == start["commitment"]
    snapshot = host.room_messages(room)[0]
    assert snapshot["type"] == "snapshot" and snapshot["seat"] is None
    assert [s["kind"] for s in snapshot["info"]["seats"]] == ["open"] * 3
    stream = host.room_messages(room)[1:]
    assert seqs(stream) == list(range(snapshot["seq"] + 1, over["seq"] + 1))
    closed = [m for m in stream if m["type"] == "window_closed"]
    assert closed and all(not a["default"] for m in closed for a in m["actions"])
    record = check_record(server, room, over)
    assert record["seats"] == ["random-bot-0", "random-bot-1", "random-bot-2"]
    await host.close()


async def test_autostart_when_the_last_seat_is_taken(server: ServerProcess) -> None:
    host = await RawClient.open(server.ws, hello={"name": "Ada"})
    room = await new_room(host, "qwixx", 2, autostart=True, public=False)
    assert await host.call("add_bots", room=room, count=1) == {"seats": [0]}
    joined = await host.call("join", room=room)
    assert joined["seat"] == 1
    assert (await host.fails("start", room=room))["name"] == "already-started"
    # The join's snapshot already shows the game running, with its first window open.
    snapshot = host.room_messages(room)[0]
    assert snapshot["type"] == "snapshot"
    assert snapshot["info"]["status"] == "playing" and snapshot["info"]["commitment"]
    assert snapshot["turn"] is not None
    over = await play_game(host, room, 1, random.Random(1))
    record = check_record(server, room, over)
    assert record["seats"] == ["random-bot-0", "Ada"]
    assert any(e.get("seat") == 1 and "action" in e for e in record["log"])
    await host.close()


# --- time-outs, reconnecting, resuming -------------------------------------------------------


async def test_window_timeouts_apply_the_rules_defaults(server: ServerProcess) -> None:
    """Qwinto: an unanswered dice choice rolls all three dice, an unanswered entry passes;
    Qwixx: the silent seat passes while the bot's answer stands. Each window closes at its
    deadline, not before and not much after."""
    ada = await RawClient.open(server.ws)
    room = await new_room(ada, "qwinto", 1, turn_window=1, public=False)
    await ada.call("join", room=room)
    await ada.call("start", room=room)
    for expected in (
        {"type": "roll", "dice": ["red", "yellow", "blue"]},
        {"type": "pass"},
    ):
        window = await ada.next("window", timeout=5)
        closed = await ada.next("window_closed", timeout=5)
        now_ms = time.time() * 1000
        assert closed["window"] == window["window"]
        assert closed["actions"] == [{"seat": 0, "action": expected, "default": True}]
        assert window["deadline"] - 100 <= now_ms <= window["deadline"] + 1500

    bo = await RawClient.open(server.ws)
    room = await new_room(bo, "qwixx", 2, turn_window=1, public=False)
    await bo.call("join", room=room)
    await bo.call("add_bots", room=room)
    await bo.call("start", room=room)
    window = await bo.next("window", timeout=5)
    assert {a["seat"] for a in window["actors"]} == {0, 1}
    closed = await bo.next("window_closed", timeout=5)
    by_seat = {a["seat"]: a for a in closed["actions"]}
    assert by_seat[0] == {"seat": 0, "action": {"type": "pass"}, "default": True}
    assert by_seat[1]["default"] is False
    await ada.close()
    await bo.close()


async def test_drop_reconnect_and_resume_without_gap_or_duplicate(server: ServerProcess) -> None:
    rng = random.Random(5)
    ada = await RawClient.open(server.ws, hello={"name": "Ada"})
    room = await new_room(ada, "qwixx", 2, turn_window=1, public=False)
    token = (await ada.call("join", room=room))["token"]
    watcher = await RawClient.open(server.ws)
    await watcher.call("spectate", room=room)
    await ada.call("add_bots", room=room)
    await ada.call("start", room=room)

    played = 0

    def third_close(m: dict[str, Any]) -> bool:
        nonlocal played
        played += m.get("type") == "window_closed"
        return played == 3

    await ada.play_until(room, 0, third_close, rng, timeout=30)
    last_seq = max(seqs(ada.room_messages(room)))
    ada.abort()  # the network drops: no closing handshake

    # The room goes on: Ada's seat shows as gone and its windows close with defaults.
    gone = await watcher.next(
        lambda m: m.get("type") == "room" and not m["info"]["seats"][0]["connected"], timeout=10
    )
    assert gone["seq"] > last_seq
    defaulted = 0
    while defaulted < 2:
        closed = await watcher.next(
            lambda m: m.get("type") == "window_closed" and m["seq"] > last_seq, timeout=10
        )
        seat0 = [a for a in closed["actions"] if a["seat"] == 0]
        defaulted += bool(seat0 and seat0[0]["default"])

    again = await RawClient.open(server.ws, hello={"name": "Ada", "tokens": [token]})
    assert again.hello["seats"] == [{"room": room, "seat": 0}]
    assert again.hello["rejected"] == []
    resumed = await again.call("resume", room=room, last_seq=last_seq)
    assert resumed["mode"] == "events"
    assert resumed["seq"] > last_seq + 4
    await again.play_until(room, 0, is_over, rng, timeout=120)
    over = await again.next(lambda m: m.get("type") == "room" and m["info"]["status"] == "over")
    await watcher.next(lambda m: m.get("seq") == over["seq"], timeout=10)

    # A seat taken back by hello gets nothing until its resume; then exactly the missed
    # messages, then live ones.
    reply_at = next(
        i
        for i, m in enumerate(again.log)
        if m.get("type") == "reply" and m["ok"] and "mode" in m["result"]
    )
    assert again.room_messages(room) == again.room_messages(room, reply_at)
    first = ada.room_messages(room)
    second = again.room_messages(room)
    assert first[0]["type"] == "snapshot"
    stream = first[1:] + second
    assert "snapshot" not in {m["type"] for m in second}
    assert seqs(stream) == list(range(first[0]["seq"] + 1, over["seq"] + 1))
    assert seqs(second)[: resumed["seq"] - last_seq] == list(
        range(last_seq + 1, resumed["seq"] + 1)
    )
    # What the player saw is what everyone saw (Qwixx hides nothing from anyone).
    seen = {m["seq"]: m for m in watcher.room_messages(room) if m["type"] != "snapshot"}
    assert all(seen[m["seq"]] == m for m in stream)
    back = [m for m in second if m["type"] == "room" and m["info"]["seats"][0]["connected"]]
    assert back, "the seat shows as connected again after the resume"
    await again.close()
    await watcher.close()


async def test_resume_after_messages_aged_out_gets_a_snapshot(server: ServerProcess) -> None:
    """A four-bot Yamb game makes far more room messages than a room keeps."""
    host = await RawClient.open(server.ws)
    room = await new_room(host, "yamb", 4, public=False)
    early = await RawClient.open(server.ws)
    await early.call("spectate", room=room)
    seen = (await early.next("snapshot"))["seq"]
    await early.close()
    await host.call("spectate", room=room)
    await host.call("add_bots", room=room)
    await host.call("start", room=room)
    over = await host.next(is_over, timeout=60)
    final = await host.next(lambda m: m.get("type") == "room" and m["info"]["status"] == "over")
    assert final["seq"] > 1500

    late = await RawClient.open(server.ws)
    await late.call("spectate", room=room)
    snap = await late.next("snapshot")
    assert snap["seq"] == final["seq"]
    resumed = await late.call("resume", room=room, last_seq=seen)
    assert resumed == {"mode": "snapshot", "seq": final["seq"]}
    again = await late.next("snapshot")
    assert again["seq"] == final["seq"] and again["view"] == snap["view"]
    assert again["info"]["status"] == "over"

    recent = await late.call("resume", room=room, last_seq=final["seq"] - 5)
    assert recent == {"mode": "events", "seq": final["seq"]}
    await late.sync()
    caught_up = late.room_messages(room)[2:]
    assert caught_up == [m for m in host.room_messages(room) if m["seq"] > final["seq"] - 5]
    assert over in caught_up
    await late.close()
    await host.close()


# --- seat tokens -----------------------------------------------------------------------------


async def test_seat_tokens_take_back_their_own_seat_only(server: ServerProcess) -> None:
    ada = await RawClient.open(server.ws)
    bo = await RawClient.open(server.ws)
    one = await new_room(ada, "qwixx", 2, turn_window=600, public=False)
    two = await new_room(ada, "qwixx", 2, turn_window=600, public=False)
    token: str = (await ada.call("join", room=one))["token"]
    await bo.call("join", room=one)
    token_two = (await ada.call("join", room=two))["token"]
    await ada.call("start", room=one)
    assert one in token, "the tests below swap the room inside a token"

    def flipped(at: int) -> str:
        c = token[at]
        return token[:at] + ("A" if c != "A" else "B") + token[at + 1 :]

    forged = [
        "garbage",
        "x" * 512,
        flipped(0),
        flipped(len(token) // 2),
        flipped(len(token) - 1),
        token.replace(one, two),
        token_two.replace(two, one),
        token[:-4],
    ]
    thief = await RawClient.open(server.ws, hello={"tokens": [*forged, token]})
    assert thief.hello["seats"] == [{"room": one, "seat": 0}]
    assert thief.hello["rejected"] == list(range(len(forged)))
    assert (await thief.fails("legal", room=two))["name"] == "not-in-room"
    assert (await thief.fails("resume", room=two, last_seq=0))["name"] == "not-in-room"
    assert (await thief.fails("legal", room=one))["name"] == "not-seated"  # resume first
    await thief.call("resume", room=one, last_seq=0)
    legal = await thief.call("legal", room=one)
    assert legal["view"]["you"] == 0
    await thief.close()

    # A seat given up before the start goes to someone else; the old token dies with it.
    cy = await RawClient.open(server.ws)
    three = await new_room(cy, "qwixx", 2, public=False)
    old = (await cy.call("join", room=three, seat=1))["token"]
    await cy.call("leave", room=three)
    dee = await RawClient.open(server.ws)
    new = (await dee.call("join", room=three, seat=1))["token"]
    assert new != old
    late = await RawClient.open(server.ws, hello={"tokens": [old, new]})
    assert late.hello["rejected"] == [0]
    assert late.hello["seats"] == [{"room": three, "seat": 1}]
    for client in (ada, bo, cy, dee, late):
        await client.close()


async def test_a_token_takes_the_seat_over_from_a_connection_still_open(
    server: ServerProcess,
) -> None:
    """A half-dead connection must not keep its seat: the token's holder takes it over,
    and the old connection is told why (4006)."""
    ada = await RawClient.open(server.ws, hello={"name": "Ada"})
    room = await new_room(ada, "qwixx", 2, turn_window=600, public=False)
    token = (await ada.call("join", room=room))["token"]
    watcher = await RawClient.open(server.ws)
    await watcher.call("spectate", room=room)
    await ada.call("add_bots", room=room)
    await ada.call("start", room=room)
    await ada.sync()
    last = max(seqs(ada.room_messages(room)))

    again = await RawClient.open(server.ws, hello={"name": "Ada", "tokens": [token]})
    await again.call("resume", room=room, last_seq=last)
    code, reason = await ada.until_closed()
    assert code == 4006
    assert ada.log[-1] == {"type": "goodbye", "code": 4006, "reason": reason}
    legal = await again.call("legal", room=room)
    assert legal["view"]["you"] == 0 and legal["actions"]
    await watcher.sync()
    seat0 = [
        m["info"]["seats"][0]["connected"]
        for m in watcher.room_messages(room)[1:]
        if m["type"] == "room"
    ]
    assert all(seat0), "the seat never showed as empty"
    for client in (again, watcher):
        await client.close()


# --- bad input -------------------------------------------------------------------------------


async def error_of(client: RawClient, frame: bytes | str, pace: bool = True) -> dict[str, Any]:
    """Send a raw frame and return the protocol's answer to it (reply or bare error)."""
    mark = len(client.log)
    await client.send_frame(frame, pace)
    while True:
        for m in client.log[mark:]:
            if m["type"] == "error" or (m["type"] == "reply" and not m["ok"]):
                error: dict[str, Any] = m["error"]
                return error
        await client.read(5)


async def test_bad_input_gets_its_error_and_changes_nothing(server: ServerProcess) -> None:
    """Every refusal has its catalogue code, and neither seats nor spectators see any room
    message or any change of state because of it."""
    ada = await RawClient.open(server.ws, hello={"name": "Ada"})
    bo = await RawClient.open(server.ws, MSGPACK, hello={"name": "Bo"})
    watcher = await RawClient.open(server.ws, hello={"features": ["progress"]})
    stranger = await RawClient.open(server.ws)
    room = await new_room(ada, "qwinto", 2, turn_window=600, public=False)
    await ada.call("join", room=room, seat=0)
    assert (await stranger.fails("join", room=room, seat=0))["name"] == "seat-taken"
    assert (await stranger.fails("join", room=room, seat=5))["name"] == "no-such-seat"
    await bo.call("join", room=room, seat=1)
    assert (await stranger.fails("join", room=room))["name"] == "room-full"
    await watcher.call("spectate", room=room)
    await ada.call("start", room=room)

    # Window 1: Ada rolls the red die only, so entries in other rows are illegal for Bo.
    first = await ada.next("window")
    assert [a["seat"] for a in first["actors"]] == [0]
    out_of_turn = await bo.fails("act", room=room, window=first["window"], action={"type": "pass"})
    assert out_of_turn["code"] == 3002 and out_of_turn["name"] == "not-your-turn"
    await ada.call(
        "act", room=room, window=first["window"], action={"type": "roll", "dice": ["red"]}
    )
    second = await ada.next("window")
    assert {a["seat"] for a in second["actors"]} == {0, 1}
    await ada.call("act", room=room, window=second["window"], action={"type": "pass"})
    hint = await watcher.next("progress")  # (her `answered` event waits for the window's end)
    assert hint["answered"] == [0] and hint["window"] == second["window"]

    # The baseline: Bo still owes an answer to window 2.
    base_ada = await ada.call("legal", room=room)
    base_bo = await bo.call("legal", room=room)
    assert base_ada["actions"] == [] and base_bo["actions"]
    await watcher.sync()
    mark = len(watcher.log)
    w = second["window"]
    legal_bo = base_bo["actions"][0]
    illegal = next(
        a
        for a in (
            {"type": "enter", "row": r, "box": b}
            for r in ("red", "yellow", "blue")
            for b in range(10)
        )
        if a not in base_bo["actions"]
    )

    async def code(client: RawClient, kind: str, **fields: Any) -> tuple[int, str]:
        error = await client.fails(kind, **fields)
        return error["code"], error["name"]

    # Out of turn, late, and acting for another seat.
    assert await code(ada, "act", room=room, window=w, action={"type": "pass"}) == (
        3002,
        "not-your-turn",
    )
    assert await code(ada, "act", room=room, window=first["window"], action={"type": "pass"}) == (
        3003,
        "window-closed",
    )
    assert await code(ada, "act", room=room, window=w, seat=1, action=legal_bo) == (
        1004,
        "invalid-message",
    )
    assert await code(watcher, "act", room=room, window=w, action=legal_bo) == (3006, "not-seated")
    assert await code(stranger, "act", room=room, window=w, action=legal_bo) == (
        2007,
        "not-in-room",
    )
    # Illegal for the rules, or not the host's business.
    error = await bo.fails("act", room=room, window=w, action=illegal)
    assert (error["code"], error["name"]) == (3001, "illegal-action") and error["rule"]
    assert await code(stranger, "start", room=room) == (2010, "forbidden")
    assert await code(stranger, "add_bots", room=room) == (2010, "forbidden")
    assert await code(ada, "start", room=room) == (2009, "already-started")
    assert await code(ada, "add_bots", room=room) == (2009, "already-started")
    assert await code(stranger, "join", room=room) == (2009, "already-started")
    assert await code(stranger, "join", room=room, seat=1) == (2009, "already-started")
    assert await code(stranger, "join", room="nosuchroom") == (2003, "no-such-room")
    assert await code(stranger, "resume", room=room, last_seq=0) == (2007, "not-in-room")
    assert await code(stranger, "create", game="chess", seats=2) == (2001, "no-such-game")
    assert await code(stranger, "create", game="qwinto", seats=9) == (1004, "invalid-message")
    assert await code(stranger, "create", game="qwirkle", seats=5) == (2002, "bad-options")

    # A replayed request is refused even when what it asks is legal.
    replayed = {"type": "act", "id": bo.last_id, "room": room, "window": w, "action": legal_bo}
    error = await error_of(bo, encode(replayed, MSGPACK))
    assert (error["code"], error["name"]) == (1008, "duplicate-id")
    old = {"type": "act", "id": 1, "room": room, "window": w, "action": legal_bo}
    assert (await error_of(bo, encode(old, MSGPACK)))["code"] == 1008

    # Garbage of every kind, on both encodings.
    assert (await error_of(stranger, "{not json"))["code"] == 1001
    assert (await error_of(stranger, b"\x81\xa4type"))["code"] == 1009  # binary on JSON
    assert (await error_of(stranger, '{"type": "explode", "id": 900}'))["code"] == 1005
    assert (await error_of(stranger, f'{{"type": "act", "id": 901, "room": "{room}"}}'))[
        "code"
    ] == 1004
    deep = '{"type": "ping", "id": 902, "time": ' + "[" * 20 + "]" * 20 + "}"
    assert (await error_of(stranger, deep))["code"] == 1003
    assert (await error_of(stranger, '{"type": "hello", "id": 903, "client": "x"}'))["code"] == 1007
    assert (await error_of(bo, b"\xc1\xc1"))["code"] == 1001
    assert (await error_of(bo, "{}"))["code"] == 1009  # text on MessagePack
    newcomer = await RawClient.open(server.ws, hello={})
    assert (await error_of(newcomer, '{"type": "legal", "id": 1, "room": "x"}'))["code"] == 1006

    # Inputs that end the connection: each says goodbye with its close code.
    big = await RawClient.open(server.ws)
    payload = {"type": "chat", "id": 5, "room": room, "text": "x" * 20_000}
    assert (await error_of(big, json.dumps(payload)))["code"] == 1002
    assert await big.until_closed() == (1009, big.log[-1]["reason"])
    assert big.log[-1]["type"] == "goodbye" and big.log[-1]["code"] == 1009

    noisy = await RawClient.open(server.ws)
    for i in range(noisy.welcome["limits"]["max_errors"]):
        await noisy.send_frame(f"garbage {i}")
    assert (await noisy.until_closed())[0] == 4001
    assert [m["error"]["code"] for m in noisy.log if m["type"] == "error"] == [1001] * 10
    assert noisy.log[-1] == {"type": "goodbye", "code": 4001, "reason": noisy.log[-1]["reason"]}

    flood = await RawClient.open(server.ws)
    burst = flood.welcome["limits"]["burst"]
    with contextlib.suppress(ConnectionClosed):  # the server may close before we are done
        for _ in range(3 * burst):
            await flood.send({"type": "chat", "room": room, "text": "spam"}, pace=False)
    assert (await flood.until_closed())[0] == 4002
    limited = [m for m in flood.log if m["type"] == "reply" and not m["ok"]]
    assert limited and {m["error"]["name"] for m in limited} == {"rate-limited", "not-in-room"}
    assert flood.log[-1]["type"] == "goodbye" and flood.log[-1]["code"] == 4002

    for offer in (["dicehall.v2.json"], []):
        async with connect(server.ws, subprotocols=offer or None, **NO_PROXY) as ws:  # type: ignore[arg-type]
            assert ws.subprotocol is None
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4000
        assert "dicehall.v1.msgpack" in closed.value.rcvd.reason
        assert "dicehall.v1.json" in closed.value.rcvd.reason

    # Nothing changed: same legal actions and views, no room message to anyone.
    assert await ada.call("legal", room=room) == base_ada
    assert await bo.call("legal", room=room) == base_bo
    await watcher.sync()
    assert watcher.room_messages(room, mark) == []
    fresh = await RawClient.open(server.ws)
    await fresh.call("spectate", room=room)
    assert (await fresh.next("snapshot"))["seq"] == max(seqs(watcher.room_messages(room)))

    # Held answers stay hidden until the window closes, and the room still works.
    assert not any(
        "action" in m["event"]
        for m in watcher.room_messages(room)
        if m["type"] == "event" and m["event"]["type"] == "answered"
    )
    await bo.call("act", room=room, window=w, action=legal_bo)
    closed_msg = await watcher.next(lambda m: m.get("type") == "window_closed" and m["window"] == w)
    assert {a["seat"]: a["action"] for a in closed_msg["actions"]} == {
        0: {"type": "pass"},
        1: legal_bo,
    }
    for client in (ada, bo, watcher, stranger, newcomer, fresh):
        await client.close()


# --- hidden information ----------------------------------------------------------------------


def qwirkle_choice(actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """Place as many tiles as possible (short games); otherwise anything legal."""
    places = [a for a in actions if a["type"] == "place"]
    if not places:
        return rng.choice(actions)
    most = max(len(a["tiles"]) for a in places)
    return rng.choice([a for a in places if len(a["tiles"]) == most])


async def test_no_member_ever_receives_another_seats_tiles(server: ServerProcess) -> None:
    """A Qwirkle game of two raw clients (JSON and MessagePack) and a house bot, watched by
    two spectators: hands reach their own seat only, as tiles; everyone else gets counts."""
    ada = await RawClient.open(server.ws)
    bo = await RawClient.open(server.ws, MSGPACK)
    watchers = [await RawClient.open(server.ws), await RawClient.open(server.ws, MSGPACK)]
    room = await new_room(ada, "qwirkle", 3, turn_window=60, public=False)
    await ada.call("join", room=room, seat=0)
    await bo.call("join", room=room, seat=1)
    for w in watchers:
        await w.call("spectate", room=room)
    await ada.call("add_bots", room=room)
    await ada.call("start", room=room)

    async def seat(client: RawClient, s: int) -> dict[str, Any]:
        rng = random.Random(s)
        while True:
            m = await client.next(lambda m: m.get("room") == room, timeout=60)
            if is_over(m):
                return m
            if m["type"] == "window" and any(a["seat"] == s for a in m["actors"]):
                wid = m["window"]
                legal = await client.call("legal", room=room)
                if legal["window"] == wid and legal["actions"]:
                    action = qwirkle_choice(legal["actions"], rng)
                    await client.request("act", room=room, window=wid, action=action)

    over: dict[str, Any]
    over, _ = await asyncio.gather(seat(ada, 0), seat(bo, 1))
    for w in watchers:
        await w.next(is_over, timeout=30)
    record = check_record(server, room, over)
    drawn: dict[int, set[tuple[str, str]]] = {0: set(), 1: set(), 2: set()}
    for entry in record["log"]:
        if "chance" in entry:
            drawn[entry["chance"]["seat"]] |= {
                (t["color"], t["shape"]) for t in entry["chance"]["tiles"]
            }

    for s, client in ((0, ada), (1, bo)):
        tiles = [t for m in client.log for t in bare_tiles(m)]
        assert tiles, "a seat sees its own hand"
        assert set(tiles) <= drawn[s], f"seat {s} received tiles it never drew"
        for m in client.log:
            if m.get("type") == "event" and m["event"].get("seat") not in (s, None):
                assert not bare_tiles(m), f"seat {s} received {m}"
    for w in watchers:
        assert not [t for m in w.log for t in bare_tiles(m)], "a spectator saw a hand"
        assert all(m["view"].get("hand") is None for m in w.log if m["type"] == "snapshot")
    for client in (ada, bo, *watchers):
        assert not any("for" in m["event"] for m in client.log if m.get("type") == "event")
        # One numbering for all: every member saw every seq, whatever the content.
        stream = client.room_messages(room)
        assert stream[0]["type"] == "snapshot"
        numbers = seqs(stream)
        assert numbers == list(range(stream[0]["seq"] + 1, numbers[-1] + 1))
        assert numbers[-1] >= over["seq"]
    # Same numbering, same kinds of message; a draw is tiles for its seat, a count for others.
    members = {0: ada, 1: bo, None: watchers[0], -1: watchers[1]}
    views = {k: {m["seq"]: m for m in c.room_messages(room)[1:]} for k, c in members.items()}
    start = max(c.room_messages(room)[0]["seq"] for c in members.values())
    draws = 0
    for seq in range(start + 1, over["seq"] + 1):
        assert len({views[k][seq]["type"] for k in members}) == 1
        if views[0][seq]["type"] != "event" or views[0][seq]["event"]["type"] != "drew":
            continue
        draws += 1
        drawer = views[0][seq]["event"]["seat"]
        for k in members:
            event = views[k][seq]["event"]
            if k == drawer:
                assert event["tiles"] and "count" not in event
            else:
                assert "tiles" not in event and event["count"] > 0
    assert draws > 3
    for client in (ada, bo, *watchers):
        await client.close()


# --- MessagePack interoperability ------------------------------------------------------------


async def test_a_plain_msgpack_client_plays_a_whole_game(server: ServerProcess) -> None:
    """Built on the `msgpack` package alone (tests/e2e/wire.py packs dicts with
    `msgpack.packb` and reads binary frames with `msgpack.unpackb`)."""
    client = await RawClient.open(server.ws, MSGPACK, hello={"name": "Packer"})
    assert client.welcome["protocol"] == MSGPACK
    assert all(isinstance(f, bytes) for f in client.frames)
    room = await new_room(client, "qwinto", 1, public=False)
    joined = await client.call("join", room=room)
    assert joined["seat"] == 0 and isinstance(joined["token"], str)
    start = await client.call("start", room=room)
    over = await play_game(client, room, 0, random.Random(3))
    assert over["commitment"] == start["commitment"]
    assert hashlib.sha256(bytes.fromhex(over["seed"])).hexdigest() == start["commitment"]
    pong = await client.call("ping", time=1767225723000)
    assert pong["echo"] == 1767225723000 and isinstance(pong["time"], int)
    assert all(isinstance(f, bytes) for f in client.frames)
    check_record(server, room, over)
    await client.close()
