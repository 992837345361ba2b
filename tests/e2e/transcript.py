"""Record the complete game transcript of docs/protocol.md from a real `dicehall serve`.

One-seat Qwinto over the JSON subprotocol: Ada creates a room, plays, answers a closed
window late, chats, lets windows time out, drops her connection, resumes on a second one,
pings, and plays until the fourth failed throw ends the game. Every frame is written as
it crossed the socket (`C>` sent, `S>` received, `#` comments).

    .venv/bin/python -m tests.e2e.transcript --write docs/protocol.md

`tests/e2e/test_transcript.py` records a fresh one and checks that its shape (message
types, event and action types, in order) is the one in the docs.
"""

from __future__ import annotations

import argparse
import json
import re
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

from tests.support.servers import running_server

TURN_WINDOW = 3
"""Seconds; short, so the transcript's three time-outs take seconds, not minutes."""

Msg = dict[str, Any]


class Recorder:
    """Two connections in turn, one transcript."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.lines: list[str] = []
        self.ws: ClientConnection | None = None
        self.last_id = 0
        self.last_seq = 0
        self.pending: list[Msg] = []

    def note(self, text: str) -> None:
        self.lines.append(f"# {text}")

    def open(self, number: int) -> None:
        # (entered by hand: the connection outlives this call; `drop` closes it)
        self.ws = connect(self.url, subprotocols=["dicehall.v1.json"]).__enter__()  # type: ignore[list-item]
        self.note(f"connection {number}: subprotocol {self.ws.subprotocol}")
        self.last_id = 0
        self.receive()

    def drop(self) -> None:
        assert self.ws is not None
        self.ws.close()
        self.ws = None

    def receive(self, timeout: float = 10.0) -> Msg:
        assert self.ws is not None
        frame = self.ws.recv(timeout)
        assert isinstance(frame, str), "JSON travels in text frames"
        self.lines.append(f"S> {frame}")
        msg: Msg = json.loads(frame)
        if "seq" in msg:
            self.last_seq = msg["seq"]
        return msg

    def send(self, message: Msg) -> int:
        assert self.ws is not None
        self.last_id += 1
        text = json.dumps(
            {"type": message["type"], "id": self.last_id, **message}, separators=(",", ":")
        )
        self.lines.append(f"C> {text}")
        self.ws.send(text)
        return self.last_id

    def request(self, message: Msg) -> Msg:
        """Send, then read up to the reply; room messages that come first are kept."""
        rid = self.send(message)
        while True:
            msg = self.receive()
            if msg["type"] == "reply" and msg["id"] == rid:
                return msg
            self.pending.append(msg)

    def until(self, kind: str, timeout: float = 10.0) -> Msg:
        """The next message of this type, from what arrived already or from the socket."""
        while self.pending:
            msg = self.pending.pop(0)
            if msg["type"] == kind:
                return msg
        while True:
            msg = self.receive(timeout)
            if msg["type"] == kind:
                return msg

    def act(self, room: str, window: Msg, action: Msg) -> Msg:
        return self.request(
            {"type": "act", "room": room, "action": action, "window": window["window"]}
        )


def windows_timed_out(ws_url: str) -> float:
    """The server's count of turn windows closed by their deadline (from /metrics: a look
    that changes nothing in the room, as a spectator joining would)."""
    http = re.sub(r"^ws", "http", ws_url).removesuffix("/ws") + "/metrics"
    with urllib.request.urlopen(http, timeout=5) as response:
        text = response.read().decode()
    found = re.search(r"^dicehall_windows_closed_by_deadline_total (\S+)$", text, re.M)
    assert found is not None, "no dicehall_windows_closed_by_deadline_total in /metrics"
    return float(found.group(1))


def record(url: str) -> list[str]:
    r = Recorder(url)
    try:
        play(r)
    except Exception as exc:
        raise AssertionError("\n".join([*r.lines, f"failed: {exc!r}"])) from exc
    return r.lines


def play(r: Recorder) -> None:
    r.open(1)
    r.request({"type": "hello", "client": "docs-example/1.0", "name": "Ada"})
    created = r.request(
        {
            "type": "create",
            "game": "qwinto",
            "seats": 1,
            "turn_window": TURN_WINDOW,
            "public": False,
            "name": "Ada's table",
        }
    )
    room = created["result"]["room"]["room"]
    token = r.request({"type": "join", "room": room})["result"]["token"]
    r.until("snapshot")
    r.request({"type": "start", "room": room})

    r.note("turn 1: roll all three dice, then ask what may be entered")
    window = r.until("window")
    r.act(room, window, {"type": "roll", "dice": ["red", "yellow", "blue"]})
    window = r.until("window")
    legal = r.request({"type": "legal", "room": room})["result"]["actions"]
    enter = [a for a in legal if a["type"] == "enter"]
    r.act(room, window, enter[len(enter) // 2] if enter else {"type": "pass"})
    r.note("a late answer to the closed window is refused; nothing changes")
    r.act(room, window, {"type": "pass"})

    r.note("turn 2: roll one die, pass: a failed throw")
    window = r.until("window")
    r.act(room, window, {"type": "roll", "dice": ["red"]})
    window = r.until("window")
    r.act(room, window, {"type": "pass"})
    r.request({"type": "chat", "room": room, "text": "no luck"})

    r.note(f"turn 3: no answer within {TURN_WINDOW} s, so the rules roll all three dice")
    r.until("window")
    r.until("window_closed", timeout=TURN_WINDOW + 10)
    window = r.until("window")
    legal = r.request({"type": "legal", "room": room})["result"]["actions"]
    enter = [a for a in legal if a["type"] == "enter"]
    r.act(room, window, enter[0] if enter else {"type": "pass"})
    turn4 = r.until("window")["window"]
    timed_out = windows_timed_out(r.url)
    seen = r.last_seq
    r.drop()
    r.note(f"connection 1 drops here, after seq {seen}")
    r.note("turn 4 goes on without her: both of its windows time out")
    # Come back once both have timed out: turn 5's roll window opened with the second.
    deadline = time.monotonic() + 4 * TURN_WINDOW + 10
    while windows_timed_out(r.url) < timed_out + 2:
        assert time.monotonic() < deadline, "turn 4's windows never timed out"
        time.sleep(0.02)  # polling /metrics: nothing to await

    r.open(2)
    r.request({"type": "hello", "client": "docs-example/1.0", "name": "Ada", "tokens": [token]})
    r.note(f"resume after seq {seen}: the missed room messages follow the reply, in order,")
    r.note("up to the window of turn 5, then her seat shows connected again")
    resumed = r.request({"type": "resume", "room": room, "last_seq": seen})
    assert resumed["result"]["mode"] == "events", resumed

    window = r.until("window")
    while window["window"] < turn4 + 2:  # turn 4's, replayed by the resume
        window = r.until("window")
    r.until("room")  # her seat shows connected again
    r.note("turn 5: roll one die, pass: the third failed throw")
    r.act(room, window, {"type": "roll", "dice": ["yellow"]})
    window = r.until("window")
    r.act(room, window, {"type": "pass"})
    r.request({"type": "ping", "time": int(time.time() * 1000)})

    r.note("turn 6: the fourth failed throw ends the game and reveals the seed")
    window = r.until("window")
    r.act(room, window, {"type": "roll", "dice": ["red", "blue"]})
    window = r.until("window")
    r.act(room, window, {"type": "pass"})
    r.until("game_over")
    r.until("room")
    r.drop()


def shape(lines: list[str]) -> list[str]:
    """What must not change between recordings: who sent which kind of message."""
    out = []
    for line in lines:
        prefix, _, text = line.partition(" ")
        if prefix == "#":
            continue
        msg = json.loads(text)
        kind = [prefix, msg["type"]]
        for key in ("event", "action"):
            if isinstance(msg.get(key), dict):
                kind.append(msg[key]["type"])
        if msg["type"] == "reply":
            kind.append("ok" if msg["ok"] else msg["error"]["name"])
        out.append(" ".join(kind))
    return out


def write(doc: Path, lines: list[str]) -> None:
    text = doc.read_text(encoding="utf-8")
    block = "```transcript\n" + "\n".join(lines) + "\n```"
    new, n = re.subn(r"```transcript\n.*?\n```", lambda _: block, text, flags=re.DOTALL)
    assert n == 1, "docs/protocol.md needs exactly one ```transcript block"
    doc.write_text(new, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="replace the transcript in this file")
    args = parser.parse_args()
    with running_server() as server:
        lines = record(server.ws)
    if args.write:
        write(args.write, lines)
    else:
        print("\n".join(lines))


if __name__ == "__main__":
    main()
