"""A seat's bot rides out a room that is moving between processes."""

from __future__ import annotations

import asyncio
from typing import Any

from dicehall.clients.botrunner import SeatBot
from dicehall.clients.client import Client
from dicehall.protocol import errors
from dicehall.protocol.messages.results import ActResult
from dicehall.protocol.messages.server import RoomMessage, Snapshot
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
        assert bot.unavailable == 3 and bot.lost == 0


async def test_a_watching_bot_sees_every_message_and_never_acts(server: ServerProcess) -> None:
    """`watch` follows a room without a seat to its `game_over`; `on_message` is handed
    each of the room's messages in seq order (one snapshot, then every seq), the playing
    bot's too, and `think` only slows the player down."""
    async with Client(server.ws, name="Ada") as ada, Client(server.ws, name="Eve") as eve:
        room = (await ada.create("qwixx", 1, turn_window=30)).room
        played: list[RoomMessage] = []
        watched: list[RoomMessage] = []
        player = SeatBot(ada, "random", "qwixx", think=0.001, on_message=played.append)
        watcher = SeatBot(eve, "random", "qwixx", on_message=watched.append)
        await player.join(room)
        await watcher.watch(room)
        runs = [asyncio.create_task(b.run()) for b in (player, watcher)]
        await asyncio.wait_for(asyncio.gather(player.joined.wait(), watcher.joined.wait()), 30)
        await ada.start(room)
        overs = await asyncio.wait_for(asyncio.gather(*runs), 60)
        assert overs[0] == overs[1]
        assert watcher.seat is None and watcher.actions == 0 and player.actions > 0
        for stream in (played, watched):
            assert isinstance(stream[0], Snapshot) and stream[-1] == overs[0]
            seqs = [m.seq for m in stream]
            assert seqs == list(range(seqs[0], seqs[-1] + 1))
        assert watched[-1].seq == played[-1].seq
