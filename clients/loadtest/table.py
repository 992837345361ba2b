"""A table: one room's M bot seats, each game's setup, and the turn windows it times.

A `Table` keeps its M seats (seat.py) in one worker process so that it can time a whole
turn window (opened, last answer, closed). Its host creates a private room with
`autostart`, the seats move to the process that runs it (when it is advertised and
`follow` is on) and every seat joins; when a game ends, the next seat hosts a new room.
"""

from __future__ import annotations

import asyncio

import msgspec

from dicehall.protocol.messages.results import CreateResult

from .config import LoadTestError
from .context import Context
from .messages import ActorHead, Incoming
from .seat import Seat


class Table:
    """The M seats of one room, hosting a new room whenever a game ends."""

    def __init__(self, context: Context, number: int) -> None:
        self.context = context
        self.number = number
        urls = context.cfg.urls
        m = context.cfg.seats
        # seat i of table n on URL n + i: every table spans the processes, and its host
        # (seat 0 first, then the next seat each game) alternates between them from the start
        self.seats = [Seat(context, self, i, urls[(number + i) % len(urls)]) for i in range(m)]
        self.games = 0
        self.room: str | None = None
        self._opened: dict[int, int] = {}
        self._last_act: dict[int, int] = {}

    async def new_game(self) -> None:
        cfg = self.context.cfg
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
        room = self.room = created.room.room
        owner = created.room.url
        # Between games: a fresh socket where the room runs, then join (the creator's seat
        # too: it gives up the host role with its old socket, which these rooms, started
        # by themselves when full, never need).
        if cfg.follow and owner is not None:
            moving = [s for s in self.seats if s.url != owner]
            await asyncio.gather(*(s.move(owner) for s in moving))
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
        stats = self.context.current
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
        context = self.context
        context.current.games += 1
        if not context.stopping:
            context.spawn(self.new_game())
