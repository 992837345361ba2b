"""`dicehall loadtest`: N rooms of M bot seats over real WebSockets, measured.

Shape of a run:

1. The coordinator (this process, no event loop) starts P worker processes. Each worker
   owns every P-th table (a room's M seats, all in that worker so it can time a whole
   turn window), opens one socket per seat, says `hello` with the `timestamps` feature,
   and reports back. The coordinator samples the server's RSS before and after: the
   cost of an idle connection.
2. On `play`, every table's host creates a private room with `autostart`, every seat
   joins, and the bots answer each turn window after a think time drawn uniformly from
   [0, --think] seconds (policy `legal`: ask `legal` for the actions alone, with the
   `legal_without_view` feature when the server offers it, and pick one at random; policy
   `legal-view`: the same with the seat's view in every reply, as a bot that reads it
   asks; policy `pass`: answer `pass` without asking when the window allows it). When a
   game ends, the seats leave and the next seat of the table hosts a new room: the tables
   play until the end.
3. Every second each worker sends what it saw in that second (latency histograms,
   counts, errors); the coordinator merges them, samples the server's CPU and RSS
   (/proc for a local server, /metrics otherwise), and prints a progress line.
4. At the end: a table, a JSON report, and a plot. Statistics cover the measured span,
   after `--warmup` seconds of play; the timeline covers the whole run.

Fan-out latency is the client's receive time minus the message's `sent_us` (the server's
clock when it fanned the message out: docs/protocol.md, feature `timestamps`), corrected
by the clock offset measured with `ping` when that offset is larger than its own error.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import math
import multiprocessing
import os
import platform
import random
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

from .loadclient import (
    ActorHead,
    Codec,
    CreateResult,
    HelloResult,
    Incoming,
    LegalResult,
    PingResult,
    WsClient,
    open_socket,
)

PROGRAM = "dicehall-loadtest/0.1"

LEAN_LEGAL = "legal_without_view"
"""The feature that lets a bot that needs no view ask `legal` for the actions alone."""

ROLLS = frozenset({"roll", "rolled"})
"""Event types of a dice roll (Qwinto and Yamb say `roll`, Qwixx `rolled`)."""

ONE_ANSWER_GAMES = frozenset({"qwixx", "qwinto", "qwirkle"})
"""Games where a seat answers a turn window once; in the others (Yamb) a seat keeps asking
`legal` after each action until its part of the window is done."""


@dataclass
class LoadConfig:
    urls: list[str]
    rooms: int
    seats: int
    game: str
    duration: float
    turn_window: int = 10
    procs: int = 1
    think: float = 0.75
    """Each answer is sent a uniform [0, think] seconds after its window opened."""
    policy: str = "legal"
    encoding: str = "msgpack"
    warmup: float = 3.0
    interval: float = 1.0
    server_pids: list[int] = field(default_factory=list)
    clock_offset_ms: float | None = None
    """None: measure with `ping` (and use 0 when within its error); else this offset."""
    connect_concurrency: int = 64
    seed: int = 0
    follow: bool = True
    """Seats move to the process that runs their room (docs/protocol.md, "Following a room
    to its server") before they join it; False keeps each on its URL (forwarding)."""


class LoadTestError(Exception):
    pass


# --- statistics -------------------------------------------------------------------------

_PER_E = 50
"""Histogram resolution: 50 buckets per factor e, so a percentile is within 1 % of the
sample it stands for."""


class Hist:
    """A log-bucketed histogram of microseconds, cheap to fill and to merge."""

    __slots__ = ("counts", "max", "n", "total")

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.n = 0
        self.max = 0.0
        self.total = 0.0

    def add(self, us: float) -> None:
        b = int(math.log(us) * _PER_E) if us > 1.0 else 0
        counts = self.counts
        counts[b] = counts.get(b, 0) + 1
        self.n += 1
        self.total += us
        if us > self.max:
            self.max = us

    def merge(self, other: Hist) -> None:
        for b, c in other.counts.items():
            self.counts[b] = self.counts.get(b, 0) + c
        self.n += other.n
        self.total += other.total
        self.max = max(self.max, other.max)

    def quantile(self, q: float) -> float:
        if not self.n:
            return 0.0
        rank = q * self.n
        seen = 0
        for b in sorted(self.counts):
            seen += self.counts[b]
            if seen >= rank:
                return min(math.exp((b + 0.5) / _PER_E), self.max)
        return self.max

    def summary_ms(self) -> dict[str, float]:
        """count, mean, p50, p95, p99, max in milliseconds."""
        return {
            "count": self.n,
            "mean": round(self.total / self.n / 1000, 3) if self.n else 0.0,
            "p50": round(self.quantile(0.50) / 1000, 3),
            "p95": round(self.quantile(0.95) / 1000, 3),
            "p99": round(self.quantile(0.99) / 1000, 3),
            "max": round(self.max / 1000, 3),
        }

    def state(self) -> tuple[dict[int, int], int, float, float]:
        return self.counts, self.n, self.max, self.total

    @classmethod
    def from_state(cls, state: tuple[dict[int, int], int, float, float]) -> Hist:
        h = cls()
        h.counts, h.n, h.max, h.total = dict(state[0]), state[1], state[2], state[3]
        return h


HISTS = ("fanout", "window", "resolve", "act", "legal", "setup")
"""fanout: server send -> client receipt of a room message; window: a turn window's
`window` received -> its `window_closed` received (think time included); resolve: the
last answer of a window sent -> its `window_closed` received; act / legal / setup
(create, join, leave, hello): request sent -> reply received."""


class Interval:
    """What one worker saw during one interval of the run."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.hists = {name: Hist() for name in HISTS}
        self.deliveries = 0
        self.bytes = 0
        self.rolls = 0
        self.games = 0
        self.windows = 0
        self.windows_expired = 0
        self.moves = 0
        """Seats moved to the process that runs their next room."""
        self.errors: Counter[str] = Counter()
        self.disconnects: Counter[str] = Counter()

    def to_wire(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "hists": {k: h.state() for k, h in self.hists.items()},
            "deliveries": self.deliveries,
            "bytes": self.bytes,
            "rolls": self.rolls,
            "games": self.games,
            "windows": self.windows,
            "windows_expired": self.windows_expired,
            "moves": self.moves,
            "errors": dict(self.errors),
            "disconnects": dict(self.disconnects),
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Interval:
        iv = cls(data["index"])
        iv.hists = {k: Hist.from_state(v) for k, v in data["hists"].items()}
        keys = ("deliveries", "bytes", "rolls", "games", "windows", "windows_expired", "moves")
        for key in keys:
            setattr(iv, key, data[key])
        iv.errors = Counter(data["errors"])
        iv.disconnects = Counter(data["disconnects"])
        return iv

    def merge(self, other: Interval) -> None:
        for k, h in other.hists.items():
            self.hists[k].merge(h)
        self.deliveries += other.deliveries
        self.bytes += other.bytes
        self.rolls += other.rolls
        self.games += other.games
        self.windows += other.windows
        self.windows_expired += other.windows_expired
        self.moves += other.moves
        self.errors.update(other.errors)
        self.disconnects.update(other.disconnects)


# --- a worker: tables of bot seats ------------------------------------------------------


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
                    self.table.on_turn(self, msg.turn.window, msg.turn.actors, now_us)
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

    def answer(self, window: int, kinds: list[str], opened_us: int) -> None:
        worker = self.worker
        due_us = opened_us + int(worker.rng.uniform(0.0, worker.cfg.think) * 1e6)
        if worker.cfg.policy == "pass" and "pass" in kinds:
            self._act_at(due_us, window, {"type": "pass"})
            return
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
            if reply.ok and self.worker.multi_step and self.playing and self.room == room:
                self._ask(window, time.time_ns() // 1000)

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
        self.on_turn(seat, msg.window, msg.actors or [], now_us)

    def on_turn(self, seat: Seat, window: int, actors: list[ActorHead], now_us: int) -> None:
        for actor in actors:
            if actor.seat == seat.index:
                seat.answer(window, actor.kinds, now_us)

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


class Worker:
    """One load-generating process: its tables, its event loop, its reports."""

    def __init__(self, index: int, cfg: LoadConfig, pipe: Connection) -> None:
        self.index = index
        self.cfg = cfg
        self.pipe = pipe
        self.codec = Codec(cfg.encoding)
        self.rng = random.Random(f"{cfg.seed}/{index}")
        self.loop = asyncio.get_running_loop()
        self.multi_step = cfg.game not in ONE_ANSWER_GAMES
        self.tables = [Table(self, n) for n in range(index, cfg.rooms, cfg.procs)]
        self.current = Interval(-1)
        self.offset_us = 0.0
        self.offset_info: dict[str, float] = {}
        self.server_name = ""
        self.stopping = False
        self._open = 0
        self._all_closed = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._commands: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()

    def spawn(self, coro: Any) -> None:
        task = self.loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None and not self.stopping:
            self.current.errors[f"table:{type(exc).__name__}"] += 1

    def closed_one(self) -> None:
        self._open -= 1
        if self._open <= 0:
            self._all_closed.set()

    async def run(self) -> None:
        self.loop.add_reader(self.pipe.fileno(), self._command)
        limit = asyncio.Semaphore(self.cfg.connect_concurrency)
        seats = [s for t in self.tables for s in t.seats]
        results = await asyncio.gather(
            *(self._connect(s, limit) for s in seats), return_exceptions=True
        )
        failed = [r for r in results if isinstance(r, BaseException)]
        for exc in failed:
            self.current.errors[f"connect:{type(exc).__name__}"] += 1
        live = [s for s, r in zip(seats, results, strict=True) if r is None]
        if live:
            await self._measure_offset(live[0])
        self.pipe.send(
            ("connected", len(seats) - len(failed), self.current.to_wire(), self.server_name)
        )
        command = await self._commands.get()
        if command[0] == "play":
            start = command[1]
            self.current = Interval(0)
            self._tick(start, 0)
            for table in self.tables:
                if all(s.ws is not None and not s.ws.closed for s in table.seats):
                    self.spawn(table.new_game())
            while (await self._commands.get())[0] != "stop":
                pass
        self.stopping = True
        for seat in seats:
            if seat.ws is not None:
                seat.ws.close(1000)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5.0):
                await self._all_closed.wait()
        for seat in seats:
            if seat.ws is not None and not seat.ws.closed:
                seat.ws.abort()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        cpu = os.times()
        waited = ProcProbe([os.getpid()]).waited() or 0.0
        self.pipe.send(("interval", self.current.to_wire()))
        done = {"cpu_seconds": cpu.user + cpu.system, "wait_seconds": waited}
        self.pipe.send(("done", {**done, "offset": self.offset_info}))

    def _command(self) -> None:
        try:
            self._commands.put_nowait(self.pipe.recv())
        except EOFError:
            self.loop.remove_reader(self.pipe.fileno())
            self._commands.put_nowait(("stop",))

    def _tick(self, start: float, index: int) -> None:
        """Close interval `index` at start + (index + 1) * interval, wall clock."""
        due = start + (index + 1) * self.cfg.interval
        self.loop.call_later(max(0.0, due - time.time()), self._close_interval, start, index)

    def _close_interval(self, start: float, index: int) -> None:
        if self.stopping:
            return
        done, self.current = self.current, Interval(index + 1)
        self.pipe.send(("interval", done.to_wire()))
        self._tick(start, index + 1)

    async def move(self, seat: Seat, url: str) -> None:
        """Reconnect `seat` to `url` (where its next room is run); where that cannot be
        reached, back to where it was (the server forwards)."""
        old, seat.url = seat.url, url
        if seat.ws is not None:
            seat.moving = True
            seat.ws.close()
            await seat.closed.wait()
            seat.moving = False
        seat.welcome = self.loop.create_future()
        try:
            await self._connect(seat, asyncio.Semaphore(1))
        except (OSError, TimeoutError, LoadTestError) as exc:
            self.current.errors[f"move:{type(exc).__name__}"] += 1
            seat.url = old
            seat.welcome = self.loop.create_future()
            await self._connect(seat, asyncio.Semaphore(1))
            return
        seat.moves += 1
        self.current.moves += 1

    async def _connect(self, seat: Seat, limit: asyncio.Semaphore) -> None:
        async with limit:
            seat.closed.clear()
            seat.ws = await open_socket(seat.url, self.codec.subprotocol, seat)
            self._open += 1
            self._all_closed.clear()
            async with asyncio.timeout(10.0):
                welcome = await seat.welcome
            self.server_name = welcome.server or "?"
            if "timestamps" not in (welcome.features or []):
                self.current.errors["no-timestamps-feature"] += 1
            features = ["timestamps"]
            if self.cfg.policy == "legal":
                features.append(LEAN_LEGAL)
            reply = await seat.call(
                "hello",
                {
                    "client": PROGRAM,
                    "name": f"bot{seat.table.number}.{seat.index}",
                    "features": features,
                },
            )
            if not reply.ok:
                raise LoadTestError("hello refused")
            hello = self.codec.result(reply.result, HelloResult)
            assert isinstance(hello, HelloResult)
            seat.lean = LEAN_LEGAL in hello.features

    async def _measure_offset(self, seat: Seat) -> None:
        """Server clock minus ours, from the fastest of a few pings; 0 when within error."""
        if self.cfg.clock_offset_ms is not None:
            self.offset_us = self.cfg.clock_offset_ms * 1000
            self.offset_info = {"offset_ms": self.cfg.clock_offset_ms, "given": 1.0}
            return
        best: tuple[float, float] | None = None
        for _ in range(7):
            t0 = time.time_ns() / 1000
            reply = await seat.call("ping", {"time": int(t0 / 1000)})
            t1 = time.time_ns() / 1000
            if not reply.ok:
                continue
            ping = self.codec.result(reply.result, PingResult)
            assert isinstance(ping, PingResult)
            # The server's clock is whole milliseconds: its true time is 0..1 ms later.
            offset = ping.time * 1000 + 500 - (t0 + t1) / 2
            error = (t1 - t0) / 2 + 500
            if best is None or error < best[1]:
                best = (offset, error)
        if best is None:
            return
        offset, error = best
        self.offset_us = offset if abs(offset) > error else 0.0
        self.offset_info = {
            "measured_ms": round(offset / 1000, 3),
            "error_ms": round(error / 1000, 3),
            "offset_ms": round(self.offset_us / 1000, 3),
        }


def _worker_main(index: int, cfg: LoadConfig, pipe: Connection) -> None:
    """Entry point of a worker process: as many sockets as the hard limit allows."""
    import resource

    import uvloop

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    async def main() -> None:
        await Worker(index, cfg, pipe).run()

    uvloop.run(main())


# --- the server's CPU and memory --------------------------------------------------------


class Probe:
    """Samples the server's CPU seconds and RSS bytes (summed over its processes)."""

    source = "none"

    def sample(self) -> tuple[float, float] | None:
        return None

    def waited(self) -> float | None:
        """Seconds the server was ready to run but waited for a CPU (a shared machine)."""
        return None


class ProcProbe(Probe):
    source = "proc"

    def __init__(self, pids: Iterable[int]) -> None:
        self.pids = sorted(set(pids))
        self._tick = os.sysconf("SC_CLK_TCK")

    def sample(self) -> tuple[float, float] | None:
        cpu = rss = 0.0
        for pid in self.pids:
            try:
                with open(f"/proc/{pid}/stat", encoding="ascii") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{pid}/status", encoding="ascii") as f:
                    status = f.read()
            except OSError:
                return None
            cpu += (int(fields[11]) + int(fields[12])) / self._tick
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    rss += int(line.split()[1]) * 1024
        return cpu, rss

    def waited(self) -> float | None:
        total = 0
        for pid in self.pids:
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/schedstat", encoding="ascii") as f:
                        total += int(f.read().split()[1])
            except (OSError, IndexError, ValueError):
                return None
        return total / 1e9


class MetricsProbe(Probe):
    """A remote server: the standard process gauges of its /metrics."""

    source = "metrics"

    def __init__(self, urls: Iterable[str]) -> None:
        self.urls = sorted(set(urls))

    def sample(self) -> tuple[float, float] | None:
        cpu = rss = 0.0
        for url in self.urls:
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    text = r.read().decode()
            except OSError:
                return None
            values = dict(
                line.split()[:2] for line in text.splitlines() if line.startswith("process_")
            )
            if "process_cpu_seconds_total" not in values:
                return None
            cpu += float(values["process_cpu_seconds_total"])
            rss += float(values.get("process_resident_memory_bytes", 0.0))
        return cpu, rss


def listening_pids(port: int) -> list[int]:
    """Processes listening on a local TCP port, from /proc (no psutil)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table, encoding="ascii") as f:
            for line in f.read().splitlines()[1:]:
                parts = line.split()
                if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{parts[9]}]")
    pids: list[int] = []
    if not inodes:
        return pids
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            fds = f"/proc/{entry}/fd"
            if any(os.readlink(f"{fds}/{fd}") in inodes for fd in os.listdir(fds)):
                pids.append(int(entry))
    return pids


def server_gauges(urls: Iterable[str]) -> dict[str, float]:
    """dicehall's own gauges (rooms held, connections...) summed over the servers; empty
    when a server has no /metrics (the baseline)."""
    out: dict[str, float] = {}
    for url in urls:
        parts = urlsplit(url)
        scheme = "https" if parts.scheme == "wss" else "http"
        try:
            with urllib.request.urlopen(f"{scheme}://{parts.netloc}/metrics", timeout=2) as r:
                text = r.read().decode()
        except (OSError, ValueError):
            return {}
        for line in text.splitlines():
            name, _, value = line.partition(" ")
            if name.startswith("dicehall_") and "{" not in name:
                with contextlib.suppress(ValueError):
                    out[name] = out.get(name, 0.0) + float(value)
    return out


def _is_local(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def find_probe(cfg: LoadConfig) -> Probe:
    if cfg.server_pids:
        return ProcProbe(cfg.server_pids)
    pids: list[int] = []
    remote: list[str] = []
    for url in cfg.urls:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "wss" else 80)
        host = parts.hostname or ""
        found = listening_pids(port) if _is_local(host) else []
        if found:
            pids += found
        else:
            scheme = "https" if parts.scheme == "wss" else "http"
            remote.append(f"{scheme}://{parts.netloc}/metrics")
    if pids and not remote:
        return ProcProbe(pids)
    if remote and not pids:
        probe = MetricsProbe(remote)
        return probe if probe.sample() is not None else Probe()
    return Probe()


# --- the coordinator --------------------------------------------------------------------


@dataclass
class _Sample:
    t: float
    cpu: float
    rss: float
    wait: float | None


def run_loadtest(cfg: LoadConfig, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the whole load test and return its report (see `format_table` for a reading)."""
    if cfg.rooms < 1 or cfg.seats < 1 or cfg.procs < 1 or not cfg.urls:
        raise LoadTestError("rooms, seats and procs must be at least 1, with at least one URL")
    procs = min(cfg.procs, cfg.rooms)
    cfg = LoadConfig(**{**asdict(cfg), "procs": procs})
    say = progress or (lambda line: None)
    probe = find_probe(cfg)
    load_before = os.getloadavg()
    rss: dict[str, float | None] = {}
    first = probe.sample()
    rss["before"] = first[1] if first else None
    ctx = multiprocessing.get_context("spawn")
    pipes: list[Connection] = []
    children = []
    for i in range(procs):
        ours, theirs = ctx.Pipe()
        child = ctx.Process(target=_worker_main, args=(i, cfg, theirs), daemon=True)
        child.start()
        theirs.close()
        pipes.append(ours)
        children.append(child)
    try:
        return _coordinate(cfg, probe, pipes, rss, load_before, say)
    finally:
        for pipe in pipes:
            with contextlib.suppress(OSError):
                pipe.send(("stop",))
        for child in children:
            child.join(15)
            if child.is_alive():
                child.kill()
                child.join(5)


def _coordinate(
    cfg: LoadConfig,
    probe: Probe,
    pipes: list[Connection],
    rss: dict[str, float | None],
    load_before: tuple[float, float, float],
    say: Callable[[str], None],
) -> dict[str, Any]:
    setup = Interval(-1)
    connected = 0
    server_name = ""
    pending = set(pipes)
    deadline = time.monotonic() + 60 + cfg.rooms * cfg.seats / 200
    say(f"connecting {cfg.rooms * cfg.seats} sockets from {len(pipes)} process(es)...")
    while pending:
        ready = wait(list(pending), timeout=max(0.1, deadline - time.monotonic()))
        if not ready:
            raise LoadTestError("workers did not connect in time")
        for pipe in ready:
            assert isinstance(pipe, Connection)
            kind, count, data, name = pipe.recv()
            if kind != "connected":
                raise LoadTestError(f"unexpected {kind!r} from a worker")
            connected += count
            server_name = server_name or name
            setup.merge(Interval.from_wire(data))
            pending.discard(pipe)
    time.sleep(1.0)  # let the server settle before its idle-connection RSS is read
    sample = probe.sample()
    rss["connected"] = sample[1] if sample else None
    start = time.time() + 0.2
    for pipe in pipes:
        pipe.send(("play", start))
    total = cfg.warmup + cfg.duration
    n_intervals = max(1, round(total / cfg.interval))
    measured = range(round(cfg.warmup / cfg.interval), n_intervals)
    samples: dict[int, _Sample] = {}
    got: dict[int, Interval] = {}
    counts: Counter[int] = Counter()
    timeline: list[dict[str, Any]] = []
    totals = Interval(0)
    whole = Interval(0)
    whole.merge(setup)
    k = 0
    while k <= n_intervals:
        boundary = start + k * cfg.interval
        while True:
            left = boundary - time.time()
            if left <= 0:
                break
            ready = wait(pipes, timeout=left)
            for pipe in ready:
                assert isinstance(pipe, Connection)
                _receive(pipe, got, counts)
        s = probe.sample()
        if s is not None:
            samples[k] = _Sample(time.time(), s[0], s[1], probe.waited())
        # the workers close interval k-1 at this boundary: collect it
        if k >= 1:
            _collect(pipes, got, counts, k - 1, len(pipes))
            iv = got.get(k - 1, Interval(k - 1))
            row = _row(cfg, iv, samples.get(k - 1), samples.get(k))
            timeline.append(row)
            if k - 1 in measured:
                totals.merge(iv)
            whole.merge(iv)
            say(_progress_line(row, whole))
        k += 1
    for pipe in pipes:
        pipe.send(("stop",))
    loadgen_cpu = loadgen_wait = 0.0
    offsets: list[dict[str, float]] = []
    for pipe in pipes:
        while True:
            if not pipe.poll(20):
                raise LoadTestError("a worker did not finish")
            kind, *rest = pipe.recv()
            if kind == "interval":
                whole.merge(Interval.from_wire(rest[0]))
            elif kind == "done":
                loadgen_cpu += rest[0]["cpu_seconds"]
                loadgen_wait += rest[0]["wait_seconds"]
                offsets.append(rest[0]["offset"])
                break
    end = probe.sample()
    rss["end"] = end[1] if end else None
    gauges = server_gauges(cfg.urls)
    first_k, last_k = measured.start, measured.stop
    span_cpu = span_wait = None
    if first_k in samples and last_k in samples:
        span_cpu = samples[last_k].cpu - samples[first_k].cpu
        a, b = samples[first_k].wait, samples[last_k].wait
        span_wait = b - a if a is not None and b is not None else None
    rss["active"] = samples[last_k].rss if last_k in samples else None
    rss["max"] = max((s.rss for s in samples.values()), default=None)
    return _report(
        cfg,
        probe,
        connected,
        setup,
        totals,
        whole,
        timeline,
        span_cpu,
        span_wait,
        rss,
        (loadgen_cpu, loadgen_wait),
        offsets,
        load_before,
        server_name,
        gauges,
    )


def _receive(pipe: Connection, got: dict[int, Interval], counts: Counter[int]) -> None:
    kind, *rest = pipe.recv()
    if kind != "interval":
        raise LoadTestError(f"unexpected {kind!r} from a worker")
    iv = Interval.from_wire(rest[0])
    if iv.index in got:
        got[iv.index].merge(iv)
    else:
        got[iv.index] = iv
    counts[iv.index] += 1


def _collect(
    pipes: list[Connection], got: dict[int, Interval], counts: Counter[int], k: int, n: int
) -> None:
    """Wait (briefly) until every worker has reported interval k."""
    until = time.time() + 2.0
    while counts[k] < n and time.time() < until:
        for pipe in wait(pipes, timeout=max(0.0, until - time.time())):
            assert isinstance(pipe, Connection)
            _receive(pipe, got, counts)


def _row(cfg: LoadConfig, iv: Interval, a: _Sample | None, b: _Sample | None) -> dict[str, Any]:
    fan = iv.hists["fanout"]
    row: dict[str, Any] = {
        "t": round((iv.index + 1) * cfg.interval, 3),
        "deliveries_per_s": round(iv.deliveries / cfg.interval, 1),
        "fanout_ms": {
            "p50": round(fan.quantile(0.5) / 1000, 3),
            "p95": round(fan.quantile(0.95) / 1000, 3),
            "p99": round(fan.quantile(0.99) / 1000, 3),
            "max": round(fan.max / 1000, 3),
        },
        "act_p99_ms": round(iv.hists["act"].quantile(0.99) / 1000, 3),
        "rolls": iv.rolls,
        "games": iv.games,
        "errors": sum(iv.errors.values()),
        "disconnects": sum(iv.disconnects.values()),
        "server_cpu_percent": None,
        "server_wait_percent": None,
        "server_rss_mib": None,
    }
    if a is not None and b is not None and b.t > a.t:
        row["server_cpu_percent"] = round(100 * (b.cpu - a.cpu) / (b.t - a.t), 1)
        if a.wait is not None and b.wait is not None:
            row["server_wait_percent"] = round(100 * (b.wait - a.wait) / (b.t - a.t), 1)
    if b is not None:
        row["server_rss_mib"] = round(b.rss / 2**20, 1)
    return row


def _progress_line(row: dict[str, Any], whole: Interval) -> str:
    errors = sum(whole.errors.values())
    fan = row["fanout_ms"]
    cpu = row["server_cpu_percent"]
    mem = row["server_rss_mib"]
    return (
        f"t={row['t']:5.0f}s  delivered/s={row['deliveries_per_s']:8.0f}  "
        f"fan-out p50={fan['p50']:.2f} p99={fan['p99']:.2f} max={fan['max']:.1f} ms  "
        f"act p99={row['act_p99_ms']:.1f} ms  rolls={row['rolls']}  errors={errors}  "
        f"server cpu={'-' if cpu is None else f'{cpu:.0f}%'} "
        f"rss={'-' if mem is None else f'{mem:.0f}MiB'}"
    )


def _report(
    cfg: LoadConfig,
    probe: Probe,
    connected: int,
    setup: Interval,
    totals: Interval,
    whole: Interval,
    timeline: list[dict[str, Any]],
    span_cpu: float | None,
    span_wait: float | None,
    rss: dict[str, float | None],
    loadgen: tuple[float, float],
    offsets: list[dict[str, float]],
    load_before: tuple[float, float, float],
    server_name: str,
    gauges: dict[str, float],
) -> dict[str, Any]:
    conns = cfg.rooms * cfg.seats
    errors = whole.errors  # the whole run counts, setup and warm-up included
    disconnects = whole.disconnects
    per_conn = per_room = None
    if rss.get("before") is not None and rss.get("connected") is not None:
        per_conn = (rss["connected"] - rss["before"]) / max(1, connected) / 1024  # type: ignore[operator]
    per_alive = None
    if rss.get("connected") is not None and rss.get("active") is not None:
        grown = rss["active"] - rss["connected"]  # type: ignore[operator]
        per_room = grown / cfg.rooms / 1024
        if gauges.get("dicehall_rooms"):
            per_alive = grown / gauges["dicehall_rooms"] / 1024
    eps = totals.deliveries / span_cpu if span_cpu else None
    return {
        "config": asdict(cfg),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        },
        "connections": {"wanted": conns, "connected": connected},
        "span": {"start_s": cfg.warmup, "seconds": cfg.duration},
        "fanout_ms": totals.hists["fanout"].summary_ms(),
        "window_ms": totals.hists["window"].summary_ms(),
        "resolve_ms": totals.hists["resolve"].summary_ms(),
        "requests_ms": {
            "act": totals.hists["act"].summary_ms(),
            "legal": totals.hists["legal"].summary_ms(),
            "setup": whole.hists["setup"].summary_ms(),
        },
        "deliveries": totals.deliveries,
        "deliveries_per_s": round(totals.deliveries / cfg.duration, 1),
        "bytes_per_delivery": round(totals.bytes / totals.deliveries, 1)
        if totals.deliveries
        else 0.0,
        "rolls_per_room_s": round(totals.rolls / cfg.rooms / cfg.duration, 3),
        "windows": totals.windows,
        "windows_expired": totals.windows_expired,
        "games_finished": whole.games,
        "moves": whole.moves,
        "errors": dict(errors),
        "error_count": sum(errors.values()),
        "disconnects": dict(disconnects),
        "server": {
            "name": server_name,
            "source": probe.source,
            "pids": getattr(probe, "pids", []),
            "cpu_seconds": round(span_cpu, 3) if span_cpu is not None else None,
            "cpu_percent": round(100 * span_cpu / cfg.duration, 1)
            if span_cpu is not None
            else None,
            "cpu_wait_percent": round(100 * span_wait / cfg.duration, 1)
            if span_wait is not None
            else None,
            "deliveries_per_cpu_s": round(eps, 1) if eps else None,
            "cpu_us_per_delivery": round(1e6 / eps, 2) if eps else None,
            "rss_bytes": {k: v for k, v in rss.items()},
            "rss_per_idle_connection_kib": round(per_conn, 2) if per_conn is not None else None,
            "rss_per_active_room_kib": round(per_room, 2) if per_room is not None else None,
            "rooms_alive": gauges.get("dicehall_rooms"),
            "rss_per_alive_room_kib": round(per_alive, 2) if per_alive is not None else None,
        },
        "loadgen": {
            "cpu_seconds": round(loadgen[0], 3),
            "wait_seconds": round(loadgen[1], 3),
            "clock_offsets": offsets,
        },
        "timeline": timeline,
    }


# --- output -----------------------------------------------------------------------------


def format_table(report: dict[str, Any]) -> str:
    cfg = report["config"]
    server = report["server"]
    lines = [
        f"dicehall loadtest: {cfg['rooms']} rooms x {cfg['seats']} seats of {cfg['game']}, "
        f"{report['span']['seconds']:g} s measured after {report['span']['start_s']:g} s, "
        f"think {cfg['think']:g} s, policy {cfg['policy']}, {cfg['encoding']}, "
        f"{cfg['procs']} load process(es)",
        "",
        f"{'latency (ms)':<34}{'count':>9}{'p50':>9}{'p95':>9}{'p99':>9}{'max':>9}",
    ]
    rows = [
        ("fan-out (server send -> client)", report["fanout_ms"]),
        ("window open -> closed", report["window_ms"]),
        ("last answer -> window closed", report["resolve_ms"]),
        ("request act -> reply", report["requests_ms"]["act"]),
        ("request legal -> reply", report["requests_ms"]["legal"]),
        ("setup requests -> reply", report["requests_ms"]["setup"]),
    ]
    for name, s in rows:
        lines.append(
            f"{name:<34}{s['count']:>9}{s['p50']:>9.2f}{s['p95']:>9.2f}{s['p99']:>9.2f}"
            f"{s['max']:>9.1f}"
        )

    def num(v: float | None, fmt: str) -> str:
        return "-" if v is None else format(v, fmt)

    rss = server["rss_bytes"]
    lines += [
        "",
        f"connections        {report['connections']['connected']}/"
        f"{report['connections']['wanted']}",
        f"delivered          {report['deliveries']} room messages, "
        f"{report['deliveries_per_s']:.0f}/s, {report['bytes_per_delivery']:.0f} B each",
        f"rolls              {report['rolls_per_room_s']:.2f} per room per second; "
        f"{report['games_finished']} games finished; {report['windows_expired']} of "
        f"{report['windows']} windows closed by their deadline",
        f"errors             {report['error_count']} {report['errors'] or ''}",
        f"disconnects        {sum(report['disconnects'].values())} {report['disconnects'] or ''}"
        f"; {report['moves']} seats moved to their room's process",
        f"server             {server['name']} (sampled from {server['source']}): "
        f"cpu {num(server['cpu_percent'], '.1f')}% of a core (waited for one "
        f"{num(server['cpu_wait_percent'], '.1f')}%), "
        f"{num(server['deliveries_per_cpu_s'], ',.0f')} deliveries per cpu-second "
        f"({num(server['cpu_us_per_delivery'], '.1f')} us each)",
        f"server rss         before {_mib(rss.get('before'))}, connected "
        f"{_mib(rss.get('connected'))}, end of span {_mib(rss.get('active'))}, "
        f"max {_mib(rss.get('max'))}",
        f"                   {num(server['rss_per_idle_connection_kib'], '.1f')} KiB per idle "
        f"connection, {num(server['rss_per_active_room_kib'], '.1f')} KiB per active room"
        + (
            f" ({num(server['rss_per_alive_room_kib'], '.1f')} KiB per room held: "
            f"{server['rooms_alive']:.0f} with the finished ones)"
            if server.get("rooms_alive")
            else ""
        ),
        f"load generator     {report['loadgen']['cpu_seconds']:.1f} cpu-seconds, waited "
        f"{report['loadgen']['wait_seconds']:.1f} s for a cpu; load average "
        f"{report['machine']['loadavg_before']} before, {report['machine']['loadavg_after']} "
        "after",
    ]
    return "\n".join(lines)


def _mib(v: float | None) -> str:
    return "-" if v is None else f"{v / 2**20:.1f} MiB"


def write_outputs(report: dict[str, Any], out: str | None, plot: str | None) -> list[str]:
    """The JSON file and the plot; returns the paths written."""
    written = []
    if out:
        Path(out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        written.append(out)
    if plot:
        from .loadplot import plot_report

        plot_report(report, plot)
        written.append(plot)
    return written


def progress_printer(stream: Any = None) -> Callable[[str], None]:
    stream = stream or sys.stderr

    def say(line: str) -> None:
        print(line, file=stream, flush=True)

    return say
