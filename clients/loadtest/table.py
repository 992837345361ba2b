"""A table of bot seats: what each seat does with each message, and each game's setup.

A `Table` is one room's M seats, all in one worker process so that it can time a whole
turn window (opened, last answer, closed). Its host creates a private room with
`autostart`, every seat joins, and each `Seat` answers the turn windows it is named in
after a think time, by the policy of the run (`window`, `legal`, `legal-view` or `pass`:
see the package's docstring). When a game ends, the next seat hosts a new room. A seat is also
its socket's sink (`on_message`, `on_closed`): it decodes each frame once and counts
what it saw into its worker's current `Interval`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from .client import ActorHead, ActResult, CreateResult, Incoming, LegalResult, WsClient
from .config import LoadTestError

if TYPE_CHECKING:
    from .worker import Worker

ROLLS = frozenset({"roll", "rolled"})
"""Event types of a dice roll (Qwinto and Yamb say `roll`, Qwixx `rolled`)."""


class Seat:
    """One bot seat: its socket, its requests in flight, its answers to turn windows."""

    def __init__(self, table: Table, index: int, url: str) -> None:
        self.table = table
        self.worker = table.worker
        self.codec = table.worker.codec
        self.index = index
        self.url = url
        self.ws: WsClient | None = None
        self.room: str | None = None
        self.playing = False
        self.welcome: asyncio.Future[Incoming] = asyncio.get_running_loop().create_future()
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

    # --- Sink --------------------------------------------------------------------------

    def on_message(self, data: bytes, now_us: int) -> None:
        worker = self.worker
        stats = worker.current
        try:
            msg = self.codec.decode(data)
        except msgspec.DecodeError:
            stats.errors["undecodable-frame"] += 1
            return
        kind = msg.type
        if kind == "snapshot":
            if msg.room == self.room:
                self.last_seq = msg.seq
                if msg.turn is not None:  # a window opened before the seat sat down
                    self.table.on_turn(self, msg.turn.window, msg.turn.actors, now_us, None)
        elif msg.seq is not None:
            stats.deliveries += 1
            stats.bytes += len(data)
            if msg.sent_us is not None:
                stats.hists["fanout"].add(max(0.0, now_us - msg.sent_us - worker.offset_us))
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
        self.playing = False
        for _, _, then in self._pending.values():
            if then is not None:
                then(Incoming(type="reply", ok=False))
        self._pending.clear()
        self.closed.set()
        if not self.worker.stopping and not self.moving:
            why = code if code is not None else self._goodbye
            self.worker.current.disconnects[str(why) if why is not None else "dropped"] += 1
        self.worker.closed_one()

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
        fut: asyncio.Future[Incoming] = asyncio.get_running_loop().create_future()

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
        worker = self.worker
        due_us = opened_us + int(worker.rng.uniform(0.0, worker.cfg.think) * 1e6)
        if worker.cfg.policy == "pass" and "pass" in kinds:
            self._act_at(due_us, window, {"type": "pass"})
        elif legal is not None:
            if legal:
                self._act_at(due_us, window, worker.rng.choice(legal))
        else:
            self._ask(window, due_us)

    def _ask(self, window: int, due_us: int) -> None:
        room = self.room

        def chosen(reply: Incoming) -> None:
            if not reply.ok or not self.playing or self.room != room:
                return
            legal = self.codec.result(reply.result, LegalResult)
            assert isinstance(legal, LegalResult)
            if legal.window != window or not legal.actions:
                return
            self._act_at(due_us, window, self.worker.rng.choice(legal.actions))

        body: dict[str, Any] = {"room": room}
        if self.lean:
            body["view"] = False
        self.request("legal", body, chosen)

    def _act_at(self, due_us: int, window: int, action: Any) -> None:
        delay = (due_us - time.time_ns() // 1000) / 1e6
        loop = self.worker.loop
        if delay > 0:
            loop.call_later(delay, self._act, window, action)
        else:
            self._act(window, action)

    def _act(self, window: int, action: Any) -> None:
        if not self.playing or self.worker.stopping:
            return
        room = self.room
        self.table.acted(window, time.time_ns() // 1000)

        def done(reply: Incoming) -> None:
            if not (reply.ok and self.worker.multi_step and self.playing and self.room == room):
                return
            if not self.given:
                self._ask(window, time.time_ns() // 1000)  # (`legal` tells what is left)
                return
            acted = self.codec.result(reply.result, ActResult)
            assert isinstance(acted, ActResult)
            if acted.legal:  # (owes more: the next actions came with the reply)
                self._act(window, self.worker.rng.choice(acted.legal))

        self.request("act", {"room": room, "window": window, "action": action}, done)


class Table:
    """The M seats of one room, hosting a new room whenever a game ends."""

    def __init__(self, worker: Worker, number: int) -> None:
        self.worker = worker
        self.number = number
        urls = worker.cfg.urls
        m = worker.cfg.seats
        # seat i of table n on URL n + i: every table spans the processes, and its host
        # (seat 0 first, then the next seat each game) alternates between them from the start
        self.seats = [Seat(self, i, urls[(number + i) % len(urls)]) for i in range(m)]
        self.games = 0
        self.room: str | None = None
        self._opened: dict[int, int] = {}
        self._last_act: dict[int, int] = {}

    async def new_game(self) -> None:
        cfg = self.worker.cfg
        for seat in self.seats:
            if seat.room is not None:
                room, seat.room = seat.room, None
                await seat.call("leave", {"room": room})
        host = self.seats[self.games % len(self.seats)]
        self.games += 1
        reply = await host.call(
            "create",
            {
                "game": cfg.game,
                "seats": cfg.seats,
                "turn_window": cfg.turn_window,
                "public": False,
                "autostart": True,
                "name": f"loadtest {self.number}",
            },
        )
        if not reply.ok:
            raise LoadTestError("create refused")
        created = host.codec.result(reply.result, CreateResult)
        assert isinstance(created, CreateResult)
        room = self.room = created.room.room
        owner = created.room.url
        # Between games: a fresh socket where the room runs, then join (the creator's seat
        # too: it gives up the host role with its old socket, which these rooms, started
        # by themselves when full, never need).
        if cfg.follow and owner is not None:
            moving = [s for s in self.seats if s.url != owner]
            await asyncio.gather(*(self.worker.move(s, owner) for s in moving))
        self._opened.clear()
        self._last_act.clear()
        for seat in self.seats:
            seat.room = room
            seat.last_seq = None
            seat.playing = True
        replies = await asyncio.gather(
            *(s.call("join", {"room": room, "seat": s.index}) for s in self.seats)
        )
        if not all(r.ok for r in replies):
            raise LoadTestError("join refused")

    def on_window(self, seat: Seat, msg: Incoming, now_us: int) -> None:
        if msg.window is None:
            return
        if seat.index == 0:
            self._opened[msg.window] = now_us
        self.on_turn(seat, msg.window, msg.actors or [], now_us, msg.legal)

    def on_turn(
        self,
        seat: Seat,
        window: int,
        actors: list[ActorHead],
        now_us: int,
        legal: list[msgspec.Raw] | None,
    ) -> None:
        for actor in actors:
            if actor.seat == seat.index:
                seat.answer(window, actor.kinds, now_us, legal)

    def on_window_closed(self, seat: Seat, msg: Incoming, now_us: int) -> None:
        if seat.index != 0 or msg.window is None:
            return
        stats = self.worker.current
        stats.windows += 1
        opened = self._opened.pop(msg.window, None)
        if opened is not None:
            stats.hists["window"].add(now_us - opened)
        last = self._last_act.pop(msg.window, None)
        if msg.actions is not None and any(a.default for a in msg.actions):
            stats.windows_expired += 1
        elif last is not None:
            stats.hists["resolve"].add(now_us - last)

    def acted(self, window: int, now_us: int) -> None:
        if now_us > self._last_act.get(window, 0):
            self._last_act[window] = now_us

    def on_game_over(self, seat: Seat) -> None:
        if seat.index != 0:
            return
        self.worker.current.games += 1
        if not self.worker.stopping:
            self.worker.spawn(self.new_game())
