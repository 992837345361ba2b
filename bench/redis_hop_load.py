"""The Redis hop's load: rooms of random bots, one connection per seat, each message
timestamped as it arrives, so the benchmark measures the latency of every turn window."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from dataclasses import dataclass, field

from dicehall.clients.client import Client
from dicehall.protocol import errors
from dicehall.protocol.messages.server import GameOver, Snapshot, Window, WindowClosed
from dicehall.rules.bots import get_bot


@dataclass
class Probe:
    """What every seat reports; only what happens inside [start, end) counts."""

    start: float = float("inf")
    end: float = float("inf")
    last_act: dict[tuple[str, int], float] = field(default_factory=dict)
    near: list[float] = field(default_factory=list)
    """Latencies (s) at seats on the room owner's process."""
    far: list[float] = field(default_factory=list)
    """Latencies (s) at seats on the other process (over Redis)."""
    deliveries: int = 0
    by_deadline: int = 0
    games: int = 0
    rate_limited: int = 0
    """Requests the server refused as too fast (the client paced and resent them)."""
    windows: set[tuple[str, int]] = field(default_factory=set)
    """The turn windows that closed in the span (by answers or by deadline)."""

    def inside(self, now: float) -> bool:
        return self.start <= now < self.end

    def sent(self, room: str, window: int, now: float) -> None:
        key = (room, window)
        self.last_act[key] = max(now, self.last_act.get(key, 0.0))

    def received(self, now: float) -> None:
        if self.inside(now):
            self.deliveries += 1

    def closed(self, message: WindowClosed, now: float, near: bool) -> None:
        if not self.inside(now):
            return
        self.windows.add((message.room, message.window))
        if any(a.default for a in message.actions):
            self.by_deadline += 1
            return
        sent = self.last_act.get((message.room, message.window))
        if sent is not None:
            (self.near if near else self.far).append(now - sent)


class Seat:
    """One seat over its own connection: a reader that timestamps every message on
    arrival, and a player that answers the windows the reader hands it."""

    def __init__(self, client: Client, game: str, think: float, rng: random.Random) -> None:
        self.client = client
        self.policy = get_bot("random", game)
        self.think = think
        self.rng = rng

    async def play(self, room: str, seat: int, near: bool, probe: Probe) -> None:
        windows: asyncio.Queue[int | None] = asyncio.Queue()
        player = asyncio.get_running_loop().create_task(self._answer(room, seat, windows, probe))
        try:
            async for message in self.client.messages():
                now = time.monotonic()
                if message.room != room:
                    continue
                probe.received(now)
                if isinstance(message, WindowClosed):
                    probe.closed(message, now, near)
                elif isinstance(message, Window) and any(a.seat == seat for a in message.actors):
                    windows.put_nowait(message.window)
                elif isinstance(message, Snapshot) and message.turn is not None:
                    if any(a.seat == seat for a in message.turn.actors):
                        windows.put_nowait(message.turn.window)
                elif isinstance(message, GameOver):
                    break
        finally:
            windows.put_nowait(None)
            player.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await player

    async def _answer(
        self, room: str, seat: int, windows: asyncio.Queue[int | None], probe: Probe
    ) -> None:
        while (window := await windows.get()) is not None:
            await asyncio.sleep(self.think * self.rng.uniform(0.5, 1.5))
            while True:
                turn = self.client.turn(room)
                if turn is None or turn.window != window:
                    break
                if not any(a.seat == seat for a in turn.actors):
                    break
                try:
                    legal = await self.client.legal(room)
                    if legal.window != window or not legal.actions:
                        break
                    assert legal.view is not None  # (asked with the view)
                    action = self.policy.decide(legal.view, legal.actions)
                    probe.sent(room, window, time.monotonic())
                    await self.client.act(room, action, window)
                except (errors.GameOverError, errors.WindowClosedError, errors.NotYourTurnError):
                    break


async def room_slot(
    slot: int, urls: list[str], seats: int, game: str, think: float, probe: Probe, split: bool
) -> None:
    """Games one after the other in new rooms; seat i sits on urls[(slot + i) % len], or
    every seat on urls[slot % len] unless `split`."""
    rng = random.Random(slot)
    seat_urls = [urls[(slot + (i if split else 0)) % len(urls)] for i in range(seats)]
    owner = seat_urls[0]  # seat 0 creates the room: its process owns it
    clients = [await Client(url, name=f"s{slot}-{i}").connect() for i, url in enumerate(seat_urls)]
    players = [Seat(c, game, think, random.Random(rng.random())) for c in clients]
    try:
        while True:
            info = await clients[0].create(game, seats, public=False, turn_window=30)
            for i, c in enumerate(clients):
                await c.join(info.room, i)
            games = [
                asyncio.get_running_loop().create_task(p.play(info.room, i, url == owner, probe))
                for i, (p, url) in enumerate(zip(players, seat_urls, strict=True))
            ]
            await clients[0].start(info.room)
            await asyncio.gather(*games)
            probe.games += 1
    finally:
        probe.rate_limited += sum(c.rate_limited for c in clients)
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
