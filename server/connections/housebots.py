"""House bots: bot policies (rules/bots) seated through the same session layer as people.

A house bot is a `Session` whose sink is in-process: it receives the room's message
objects instead of frames, and sends the same typed requests a remote bot would (`legal`,
then `act`). Its decisions run in a task of their own, never inside the room's fan-out.
It plays as the player `house:<kind>` (`RoomCore.add_bots` seats it so), one identity per
kind across rooms and processes, so that a house bot is rated like anyone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

import msgspec

from dicehall.protocol import errors
from dicehall.protocol.messages import client as requests
from dicehall.protocol.messages.common import Action
from dicehall.protocol.messages.results import LegalResult
from dicehall.protocol.messages.server import GameOver, RoomMessage, ServerMessage, Window
from dicehall.rules.bots import get_bot

from ..rooms.outgoing import Outgoing
from .identity import house_player
from .session import Services, Session

log = logging.getLogger("dicehall.bots")


class HouseBot:
    """One bot in one seat of one room."""

    def __init__(self, services: Services, room: str, seat: int, kind: str, game: str) -> None:
        self.room_id = room
        self.seat = seat
        self.policy = get_bot(kind, game, seed=f"{room}/{seat}")
        self.session = Session(services, self)
        self.session.player = house_player(kind)  # (the room seated it as that player too)
        self._ids = 0
        self._inbox: asyncio.Queue[RoomMessage] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._replies: dict[int, msgspec.Struct | errors.ProtocolError] = {}
        self.errors = 0

    def start(self) -> None:
        self.session.attach(self.room_id, self.seat)
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        self.session.detach(self.room_id)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    # --- Sink -------------------------------------------------------------------------------

    def reply(self, request_id: int, result: msgspec.Struct) -> None:
        self._replies[request_id] = result

    def fail(self, request_id: int, error: errors.ProtocolError) -> None:
        self._replies[request_id] = error

    def message(self, message: ServerMessage) -> None:
        if isinstance(message, RoomMessage):
            self._inbox.put_nowait(message)

    def room(self, outgoing: Sequence[Outgoing], seat: int | None) -> None:
        for out in outgoing:
            self._inbox.put_nowait(out.for_seat(seat))

    def replaced(self, room: str) -> None:
        """House bot seats have no token: nobody can take them over."""

    # --- playing ------------------------------------------------------------------------------

    async def _request(self, request: requests.Request) -> msgspec.Struct:
        await self.session.handle(request)
        await asyncio.sleep(0)  # an idle room answers without suspending: let others run
        result = self._replies.pop(request.id)
        if isinstance(result, errors.ProtocolError):
            raise result
        return result

    def _next_id(self) -> int:
        self._ids += 1
        return self._ids

    async def _run(self) -> None:
        await self._play(None)  # a window may have opened before this bot sat down
        while True:
            message = await self._inbox.get()
            if isinstance(message, GameOver):
                return
            if not isinstance(message, Window) or all(a.seat != self.seat for a in message.actors):
                continue
            try:
                await self._play(message.window)
            except errors.ProtocolError as exc:
                self.errors += 1
                log.warning("bot %s/%s: %s", self.room_id, self.seat, exc)

    async def _play(self, window: int | None) -> None:
        """Act until this seat's part of the window is done (Yamb turns take several actions)."""
        while True:
            try:
                legal = await self._request(requests.Legal(id=self._next_id(), room=self.room_id))
            except (errors.NotStartedError, errors.GameOverError):
                return
            if type(legal) is not LegalResult:  # (the session answers `legal` with one)
                raise errors.InternalError(f"`legal` answered with {type(legal).__name__}")
            if window is None:
                window = legal.window
            if legal.window != window or window is None or not legal.actions:
                return
            assert legal.view is not None  # (asked with the view)
            action = self.policy.decide(legal.view, legal.actions)
            await self._request(
                requests.Act(
                    id=self._next_id(),
                    room=self.room_id,
                    window=window,
                    action=msgspec.convert(action, Action),
                )
            )
