"""One bot seat: its socket, its requests, its answers to the turn windows it is named in.

A `Seat` connects its own socket (`connect`: `hello` with the `timestamps` feature,
`epochs` when offered and those its policy wants) and moves it to another process when
its next room runs there (`move`). It is its socket's sink (`on_message`, `on_closed`):
it decodes each frame once, counts what it saw into its worker's current `Interval`, and
tells its table of the windows, closes and game ends it reads (`TableEvents`). It answers
each window it is named in after a think time, by the policy of the run (`window`,
`legal`, `legal-view` or `pass`: see the package's docstring).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol

import msgspec

from dicehall.protocol.features import EPOCHS
from dicehall.protocol.messages.results import HelloResult

from .client import WsClient, open_socket
from .config import LoadTestError
from .context import Context
from .messages import ActHead, ActorHead, Incoming, LegalHead

PROGRAM = "dicehall-loadtest/0.1"

LEAN_LEGAL = "legal_without_view"
"""The feature that lets a bot that needs no view ask `legal` for the actions alone."""
GIVEN_LEGAL = "legal_in_window"
"""The feature that brings a seat its legal actions with each window and `act` reply."""

ONE_ANSWER_GAMES = frozenset({"qwixx", "qwinto", "qwirkle"})
"""Games where a seat answers a turn window once; in the others (Yamb) a seat keeps asking
`legal` after each action until its part of the window is done."""

ROLLS = frozenset({"roll", "rolled"})
"""Event types of a dice roll (Qwinto and Yamb say `roll`, Qwixx `rolled`)."""


class TableEvents(Protocol):
    """What a seat tells the table it sits at (table.py's `Table`, which makes the seat:
    named here, so that neither module imports the other both ways)."""

    number: int

    def on_turn(
        self,
        seat: Seat,
        window: int,
        actors: list[ActorHead],
        now_us: int,
        legal: list[msgspec.Raw] | None,
    ) -> None: ...
    def on_window(self, seat: Seat, msg: Incoming, now_us: int) -> None: ...
    def on_window_closed(self, seat: Seat, msg: Incoming, now_us: int) -> None: ...
    def on_game_over(self, seat: Seat) -> None: ...
    def acted(self, window: int, now_us: int) -> None: ...


class Seat:
    """One bot seat: its socket, its requests in flight, its answers to turn windows."""

    def __init__(self, context: Context, table: TableEvents, index: int, url: str) -> None:
        self.context = context
        self.table = table
        self.codec = context.codec
        self.multi_step = context.cfg.game not in ONE_ANSWER_GAMES
        self.index = index
        self.url = url
        self.ws: WsClient | None = None
        self.room: str | None = None
        self.playing = False
        self.welcome: asyncio.Future[Incoming] = context.loop.create_future()
        self.closed = asyncio.Event()
        """Set once its socket is closed (until it connects again)."""
        self._ids = 0
        self._pending: dict[int, tuple[str, int, Callable[[Incoming], None] | None]] = {}
        self._goodbye: int | None = None
        self.last_seq: int | None = None
        """The room's last seq seen (from the join's snapshot on): a jump is an error."""
        self.lean = False
        """`legal_without_view` is on: `legal` is asked without the view."""
        self.given = False
        """`legal_in_window` is on: windows and `act` replies bring the legal actions."""
        self.moving = False
        """Its socket is being replaced by one to the room's process: not a disconnect."""
        self.moves = 0

    # --- its socket --------------------------------------------------------------------

    async def connect(self) -> None:
        """Open its socket to `url` and say `hello`, or raise."""
        context = self.context
        self.closed.clear()
        self.ws = await open_socket(self.url, self.codec.subprotocol, self)
        context.opened_one()
        async with asyncio.timeout(10.0):
            welcome = await self.welcome
        context.server_name = welcome.server or "?"
        if "timestamps" not in (welcome.features or []):
            context.current.errors["no-timestamps-feature"] += 1
        features = ["timestamps"]
        policy = context.cfg.policy
        if policy in ("window", "legal"):
            features.append(LEAN_LEGAL)
        if policy == "window":
            features.append(GIVEN_LEGAL)
        if EPOCHS in (welcome.features or []):
            features.append(EPOCHS)  # (no resume says one: asked for, as every client does)
        reply = await self.call(
            "hello",
            {
                "client": PROGRAM,
                "name": f"bot{self.table.number}.{self.index}",
                "features": features,
            },
        )
        if not reply.ok:
            raise LoadTestError("hello refused")
        hello = self.codec.result(reply.result, HelloResult)
        self.lean = LEAN_LEGAL in hello.features
        self.given = GIVEN_LEGAL in hello.features

    async def move(self, url: str) -> None:
        """Reconnect to `url` (where its next room is run); where that cannot be reached,
        back to where it was (the server forwards)."""
        context = self.context
        old, self.url = self.url, url
        if self.ws is not None:
            self.moving = True
            self.ws.close()
            await self.closed.wait()
            self.moving = False
        self.welcome = context.loop.create_future()
        try:
            await self.connect()
        except (OSError, TimeoutError, LoadTestError) as exc:
            context.current.errors[f"move:{type(exc).__name__}"] += 1
            self.url = old
            self.welcome = context.loop.create_future()
            await self.connect()
            return
        self.moves += 1
        context.current.moves += 1

    # --- Sink --------------------------------------------------------------------------

    def on_message(self, data: bytes, now_us: int) -> None:
        context = self.context
        stats = context.current
        try:
            msg = self.codec.decode(data)
        except msgspec.DecodeError:
            stats.errors["undecodable-frame"] += 1
            return
        kind = msg.type
        if kind == "snapshot":
            if msg.room == self.room:
                # any seq, a lower one too: a failover took the room back (docs/protocol.md,
                # "Epochs"), and the seqs after it number new messages, not repeats
                self.last_seq = msg.seq
                if msg.turn is not None:  # a window opened before the seat sat down
                    self.table.on_turn(self, msg.turn.window, msg.turn.actors, now_us, None)
        elif msg.seq is not None:
            stats.deliveries += 1
            stats.bytes += len(data)
            if msg.sent_us is not None:
                stats.hists["fanout"].add(max(0.0, now_us - msg.sent_us - context.offset_us))
            if msg.room != self.room:
                return
            if self.last_seq is None or msg.seq != self.last_seq + 1:
                stats.errors["seq-gap"] += 1  # the server promises every seq, once, in order
            self.last_seq = msg.seq
            if kind == "window":
                self.table.on_window(self, msg, now_us)
            elif kind == "window_closed":
                self.table.on_window_closed(self, msg, now_us)
            elif kind == "event":
                if self.index == 0 and msg.event is not None and msg.event.type in ROLLS:
                    stats.rolls += 1
            elif kind == "game_over":
                self.playing = False
                self.table.on_game_over(self)
        elif kind == "reply":
            entry = self._pending.pop(msg.id, None) if msg.id is not None else None
            if entry is None:
                stats.errors["unexpected-reply"] += 1
                return
            what, sent_us, then = entry
            stats.hists[what if what in ("act", "legal") else "setup"].add(now_us - sent_us)
            if not msg.ok:
                name = msg.error.name if msg.error is not None else "?"
                stats.errors[f"{what}:{name}"] += 1
            if then is not None:
                then(msg)
        elif kind == "welcome":
            if not self.welcome.done():
                self.welcome.set_result(msg)
        elif kind == "goodbye":
            self._goodbye = msg.code
        elif kind == "error":
            stats.errors["protocol:" + (msg.error.name if msg.error else "?")] += 1

    def on_closed(self, code: int | None) -> None:
        context = self.context
        self.playing = False
        for _, _, then in self._pending.values():
            if then is not None:
                then(Incoming(type="reply", ok=False))
        self._pending.clear()
        self.closed.set()
        if not context.stopping and not self.moving:
            why = code if code is not None else self._goodbye
            context.current.disconnects[str(why) if why is not None else "dropped"] += 1
        context.closed_one()

    # --- requests ----------------------------------------------------------------------

    def request(
        self, what: str, body: dict[str, Any], then: Callable[[Incoming], None] | None = None
    ) -> None:
        ws = self.ws
        if ws is None or ws.closed:
            if then is not None:
                then(Incoming(type="reply", ok=False))
            return
        self._ids += 1
        body["type"] = what
        body["id"] = self._ids
        self._pending[self._ids] = (what, time.time_ns() // 1000, then)
        ws.send(self.codec.encode(body), self.codec.binary)

    async def call(self, what: str, body: dict[str, Any], timeout: float = 30.0) -> Incoming:
        fut: asyncio.Future[Incoming] = self.context.loop.create_future()

        def done(msg: Incoming) -> None:
            if not fut.done():
                fut.set_result(msg)

        self.request(what, body, done)
        async with asyncio.timeout(timeout):  # (not wait_for: see clients/client.py, _call)
            return await fut

    # --- playing -----------------------------------------------------------------------

    def answer(
        self, window: int, kinds: list[str], opened_us: int, legal: list[msgspec.Raw] | None
    ) -> None:
        """Answer `window` after a think time: from the `legal` actions it brought, else
        from a `legal` request's (policy `pass`: `pass` without asking, when allowed)."""
        context = self.context
        due_us = opened_us + int(context.rng.uniform(0.0, context.cfg.think) * 1e6)
        if context.cfg.policy == "pass" and "pass" in kinds:
            self._act_at(due_us, window, {"type": "pass"})
        elif legal is not None:
            if legal:
                self._act_at(due_us, window, context.rng.choice(legal))
        else:
            self._ask(window, due_us)

    def _ask(self, window: int, due_us: int) -> None:
        room = self.room

        def chosen(reply: Incoming) -> None:
            if not reply.ok or not self.playing or self.room != room:
                return
            legal = self.codec.result(reply.result, LegalHead)
            if legal.window != window or not legal.actions:
                return
            self._act_at(due_us, window, self.context.rng.choice(legal.actions))

        body: dict[str, Any] = {"room": room}
        if self.lean:
            body["view"] = False
        self.request("legal", body, chosen)

    def _act_at(self, due_us: int, window: int, action: Any) -> None:
        delay = (due_us - time.time_ns() // 1000) / 1e6
        if delay > 0:
            self.context.loop.call_later(delay, self._act, window, action)
        else:
            self._act(window, action)

    def _act(self, window: int, action: Any) -> None:
        if not self.playing or self.context.stopping:
            return
        room = self.room
        self.table.acted(window, time.time_ns() // 1000)

        def done(reply: Incoming) -> None:
            if not (reply.ok and self.multi_step and self.playing and self.room == room):
                return
            if not self.given:
                self._ask(window, time.time_ns() // 1000)  # (`legal` tells what is left)
                return
            acted = self.codec.result(reply.result, ActHead)
            if acted.legal:  # (owes more: the next actions came with the reply)
                self._act(window, self.context.rng.choice(acted.legal))

        self.request("act", {"room": room, "window": window, "action": action}, done)
