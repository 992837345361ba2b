"""A raw WebSocket client for whole-system tests: `websockets` plus plain `json`/`msgpack`.

It imports nothing of dicehall (not protocol/, not clients/): the tests see the server
exactly as a bot written from docs/protocol.md in any language would. Messages are plain
dicts; every frame received is kept, raw and decoded, with its arrival time, so a test can
check the whole stream afterwards (gaps, duplicates, hidden information, timing).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import random
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

JSON = "dicehall.v1.json"
MSGPACK = "dicehall.v1.msgpack"
ROOM_TYPES = frozenset(
    {"snapshot", "room", "event", "window", "window_closed", "game_over", "chat"}
)
"""Messages that carry `room` and `seq`."""

LATE = frozenset({"window-closed", "not-your-turn", "game-over"})
"""Errors an answer racing its deadline may meet; a bot then waits for the next window."""

Msg = dict[str, Any]
Frame = bytes | str


NO_PROXY: dict[str, Any] = (
    {"proxy": None} if "proxy" in inspect.signature(connect).parameters else {}
)
"""websockets 15 and later connect through the environment's proxy unless told not to;
14 (the declared minimum is 14.1) has no such parameter."""


class ReplyError(AssertionError):
    """A request the test expected to succeed was refused."""

    def __init__(self, reply: Msg) -> None:
        super().__init__(f"request {reply.get('id')} failed: {reply.get('error')}")
        self.error: Msg = reply.get("error") or {}


def encode(message: Msg, subprotocol: str) -> Frame:
    if subprotocol == MSGPACK:
        data: bytes = msgpack.packb(message)
        return data
    return json.dumps(message, separators=(",", ":"))


def decode(frame: Frame) -> Msg:
    """Text frames are JSON, binary ones MessagePack (a test checks which kind arrives)."""
    if isinstance(frame, bytes):
        out = msgpack.unpackb(frame, raw=False, strict_map_key=True)
    else:
        out = json.loads(frame)
    assert isinstance(out, dict), f"a frame that is not a map: {frame!r}"
    return out


def small_socket(url: str, rcvbuf: int = 8192) -> socket.socket:
    """A connected TCP socket with a small, fixed receive buffer (no autotuning).

    A client that stops reading on it makes the server's writes back up after a few
    megabytes at most, instead of whatever the kernel would otherwise buffer.
    """
    parts = urlparse(url)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect((parts.hostname or "127.0.0.1", parts.port or 80))
    return sock


@dataclass
class Bucket:
    """The client's side of the server's rate limit: stay under `rate`, never past `burst`."""

    rate: float
    burst: float
    tokens: float = 0.0
    stamp: float = field(default_factory=time.monotonic)

    async def take(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1:
            await asyncio.sleep((1 - self.tokens) / self.rate)  # pacing, not synchronisation
            self.tokens = 1.0
            self.stamp = time.monotonic()
        self.tokens -= 1


class RawClient:
    """One connection. Reads happen only inside its own calls, so no task races another."""

    def __init__(self, ws: ClientConnection, subprotocol: str) -> None:
        self.ws = ws
        self.subprotocol = subprotocol
        self.frames: list[Frame] = []
        self.log: list[Msg] = []
        self.times: list[float] = []
        """Arrival time (monotonic) of each entry of `log`."""
        self.pending: deque[Msg] = deque()
        """Received messages that are not replies and were not consumed yet."""
        self.replies: dict[int, Msg] = {}
        self.last_id = 0
        self.welcome: Msg = {}
        self.hello: Msg = {}
        """The result of this connection's `hello`."""
        self.bucket: Bucket | None = None

    # --- connecting ------------------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        url: str,
        subprotocol: str = JSON,
        hello: Msg | None = None,
        **options: Any,
    ) -> RawClient:
        """Connect, read `welcome`, and say `hello` unless `hello` is {} (then send none)."""
        ws = await connect(
            url,
            subprotocols=[subprotocol],  # type: ignore[list-item]
            compression=None,
            max_size=None,
            **NO_PROXY,
            **options,
        )
        client = cls(ws, subprotocol)
        client.welcome = await client.next("welcome")
        limits = client.welcome["limits"]
        client.bucket = Bucket(rate=limits["rate"] * 0.9, burst=limits["burst"] / 2)
        if hello != {}:
            client.hello = await client.call("hello", **{"client": "e2e-raw/1", **(hello or {})})
        return client

    async def close(self) -> None:
        await self.ws.close()

    def abort(self) -> None:
        """Drop the connection the way a network failure does: no closing handshake."""
        self.ws.transport.abort()

    # --- sending -----------------------------------------------------------------------------

    def next_id(self) -> int:
        self.last_id += 1
        return self.last_id

    async def send_frame(self, frame: Frame, pace: bool = True) -> None:
        if pace and self.bucket is not None:
            await self.bucket.take()
        await self.ws.send(frame)

    async def send(self, message: Msg, pace: bool = True) -> int:
        """Send a request (numbered unless it has an `id`); returns its id."""
        if "id" not in message:
            message = {**message, "id": self.next_id()}
        await self.send_frame(encode(message, self.subprotocol), pace)
        rid: int = message["id"]
        return rid

    async def request(self, kind: str, timeout: float = 10.0, **fields: Any) -> Msg:
        """Send a request and return its reply (ok or not)."""
        rid = await self.send({"type": kind, **fields})
        return await self.reply(rid, timeout)

    async def call(self, kind: str, timeout: float = 10.0, **fields: Any) -> Msg:
        """Send a request that must succeed; returns its `result`."""
        reply = await self.request(kind, timeout, **fields)
        if not reply["ok"]:
            raise ReplyError(reply)
        result: Msg = reply["result"]
        return result

    async def fails(self, kind: str, **fields: Any) -> Msg:
        """Send a request that must fail; returns its `error`."""
        reply = await self.request(kind, **fields)
        assert not reply["ok"], f"{kind} {fields} should have failed: {reply}"
        error: Msg = reply["error"]
        return error

    # --- receiving ---------------------------------------------------------------------------

    async def read(self, timeout: float = 10.0) -> Msg:
        """One frame off the socket (raises ConnectionClosed at the end)."""
        return self._take(await asyncio.wait_for(self.ws.recv(), timeout))

    def _take(self, frame: Frame) -> Msg:
        """A frame read: decoded, logged, and filed as a reply or a pending message."""
        wanted = bytes if self.subprotocol == MSGPACK else str
        assert isinstance(frame, wanted), f"{self.subprotocol} got a {type(frame).__name__} frame"
        message = decode(frame)
        self.frames.append(frame)
        self.log.append(message)
        self.times.append(time.monotonic())
        if message.get("type") == "reply":
            if message["id"] in self.replies:  # only a replay may echo a used id
                assert message["error"]["name"] == "duplicate-id", f"a second reply: {message}"
            else:
                self.replies[message["id"]] = message
        else:
            self.pending.append(message)
        return message

    async def reply(self, rid: int, timeout: float = 10.0) -> Msg:
        deadline = time.monotonic() + timeout
        while rid not in self.replies:
            await self._read_until(deadline, f"no reply to request {rid}", timeout)
        return self.replies[rid]

    async def _read_until(self, deadline: float, waited_for: str, timeout: float) -> Msg:
        """`read` with what remains of `deadline`; a TimeoutError past it says what was
        awaited and what came last (a slow machine's failure is then readable from CI's
        summary line alone)."""
        try:
            return await self.read(max(0.01, deadline - time.monotonic()))
        except TimeoutError:
            raise self._too_long(waited_for, timeout) from None

    def _too_long(self, waited_for: str, timeout: float) -> TimeoutError:
        last = self.log[-1] if self.log else None
        return TimeoutError(
            f"{waited_for} within {timeout:g} s ({len(self.log)} messages read, "
            f"the last {str(last)[:200]})"
        )

    async def next(
        self, kind: str | Callable[[Msg], bool] | None = None, timeout: float = 10.0
    ) -> Msg:
        """The first unconsumed non-reply message of `kind` (a type or a predicate)."""
        if kind is None:
            match: Callable[[Msg], bool] = lambda m: True  # noqa: E731
        elif isinstance(kind, str):
            match = lambda m: m.get("type") == kind  # noqa: E731
        else:
            match = kind
        for message in self.pending:
            if match(message):
                self.pending.remove(message)
                return message
        deadline = time.monotonic() + timeout
        while True:
            message = await self._read_until(
                deadline, f"no {kind if isinstance(kind, str) else 'such'} message", timeout
            )
            if message.get("type") != "reply" and match(message):
                self.pending.remove(message)
                return message

    async def until_closed(self, timeout: float = 10.0) -> tuple[int | None, str]:
        """Read everything left; the close code and reason the server sent. (One deadline
        for the whole drain, no timer per frame: a client cut off for not reading may have
        tens of thousands of frames to read, and the server closes the socket CLOSE_TIMEOUT
        after the cut, read or not: on a slow machine CI ran out of 10 s after 24,388.)"""
        try:
            async with asyncio.timeout(timeout):
                while True:
                    self._take(await self.ws.recv())
        except ConnectionClosed as exc:
            rcvd = exc.rcvd
            return (rcvd.code, rcvd.reason) if rcvd is not None else (None, "")
        except TimeoutError:
            raise self._too_long("the connection not closed", timeout) from None

    async def sync(self) -> None:
        """A `ping` round trip: every frame the server queued for us before it has arrived."""
        await self.call("ping")

    # --- rooms -------------------------------------------------------------------------------

    def room_messages(self, room: str, since: int = 0) -> list[Msg]:
        """Room messages of `room` in arrival order, from position `since` of the log."""
        return [
            m for m in self.log[since:] if m.get("type") in ROOM_TYPES and m.get("room") == room
        ]

    async def play(self, room: str, window: Msg, rng: random.Random) -> int:
        """Answer a `window` naming this connection's seat the way docs/protocol.md
        suggests for bots: ask `legal`, pick, `act`, and again while the reply says the
        seat still `owes` an act in the window (Yamb). Returns the number of actions sent."""
        sent = 0
        wid = window["window"]
        while True:
            reply = await self.request("legal", room=room)
            if not reply["ok"]:
                if reply["error"]["name"] == "game-over":
                    return sent
                raise ReplyError(reply)
            legal = reply["result"]
            if legal["window"] != wid or not legal["actions"]:
                return sent
            action = pick(legal["actions"], rng)
            reply = await self.request("act", room=room, window=wid, action=action)
            if not reply["ok"]:
                if reply["error"]["name"] in LATE:
                    return sent  # the deadline beat us; the window_closed will say so
                raise ReplyError(reply)
            sent += 1
            if not reply["result"]["owes"]:
                return sent

    async def play_until(
        self,
        room: str,
        seat: int,
        stop: Callable[[Msg], bool],
        rng: random.Random,
        timeout: float = 60.0,
    ) -> Msg:
        """Play `seat` until a room message satisfies `stop` (it is returned)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                message = await self.next(
                    lambda m: m.get("room") == room, max(0.01, deadline - time.monotonic())
                )
            except TimeoutError as exc:
                raise TimeoutError(f"room {room} not done within {timeout:g} s: {exc}") from None
            if stop(message):
                return message
            window = message.get("turn") if message["type"] == "snapshot" else message
            if (
                message["type"] in ("window", "snapshot")
                and window is not None
                and any(a["seat"] == seat for a in window["actors"])
            ):
                await self.play(room, window, rng)


def pick(actions: list[Msg], rng: random.Random) -> Msg:
    """A random legal action, preferring to do something over passing (shorter games)."""
    doing = [a for a in actions if a["type"] != "pass"]
    return rng.choice(doing or actions)


def seqs(messages: list[Msg]) -> list[int]:
    return [m["seq"] for m in messages if m.get("type") in ROOM_TYPES - {"snapshot"}]


def is_over(message: Msg) -> bool:
    return message.get("type") == "game_over"
