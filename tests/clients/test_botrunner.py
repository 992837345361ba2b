"""A seat's bot rides out a room that is moving between processes."""

from __future__ import annotations

import asyncio
from typing import Any

from clients.botrunner import SeatBot
from clients.client import Client
from protocol import errors
from protocol.messages.results import ActResult
from tests.support.servers import ServerProcess


async def test_a_bot_asks_again_when_the_room_is_unavailable_for_a_moment(
    server: ServerProcess,
) -> None:
    """`unavailable` (the room's owner died or handed it over, Redis backend) is what a
    request meets while a room moves; the bot waits a moment and asks `legal` again,
    instead of leaving the window to its default."""
    async with Client(server.ws, name="Ada") as client:
        room = (await client.create("qwixx", 1, turn_window=30)).room
        bot = SeatBot(client, "random", "qwixx")
        await bot.join(room)
        real_legal, real_act = client.legal, client.act
        refused: list[str] = []

        async def legal(room: str) -> Any:
            if len(refused) < 2:
                refused.append("legal")
                raise errors.UnavailableError("the room's server is unreachable; try again shortly")
            return await real_legal(room)

        async def act(room: str, action: Any, window: int | None = None) -> ActResult:
            if refused.count("act") < 1:
                refused.append("act")
                raise errors.UnavailableError("the room moved to another server")
            return await real_act(room, action, window)

        client.legal, client.act = legal, act  # type: ignore[method-assign]
        await client.start(room)
        over = await asyncio.wait_for(bot.run(), 60)
        assert refused == ["legal", "legal", "act"]
        assert over.room == room and bot.late == 0 and bot.actions > 0
