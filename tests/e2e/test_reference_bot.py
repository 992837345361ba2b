"""A bot built from docs/protocol.md's own examples plays every game to the end.

Every request it sends is an example of the reference (its first ```json client block of
that type) with only the fields a bot must fill in changed: the request id, the room, the
seat, the window and the action it chose (and the Qwixx preset and options of the `create`
example left out for the other games; the `hello` example's seat token dropped, as a bot
that has no seat yet has none). It plays by the reference's recipe alone: on each `window`
(or snapshot `turn`) that names its seat, ask `legal`, choose, `act`, and again while the
reply's `owes` is not empty. A wrong example, or a recipe that does not hold for some game
(a Yamb turn is several actions in one window), and the bot cannot finish that game.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from typing import Any

from tests.support.servers import ROOT, ServerProcess, running_server

from .wire import RawClient

GAMES = ["qwinto", "qwixx", "qwirkle", "yamb"]
Msg = dict[str, Any]


def templates() -> dict[str, Msg]:
    """The first client example of each request type in docs/protocol.md."""
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    out: dict[str, Msg] = {}
    for body in re.findall(r"```json client\n(.*?)\n```", text, flags=re.DOTALL):
        message = json.loads(body)
        out.setdefault(message["type"], message)
    return out


class ReferenceBot:
    """One seat, speaking only in the reference's examples."""

    def __init__(self, client: RawClient, examples: dict[str, Msg], rng: random.Random) -> None:
        self.client = client
        self.examples = examples
        self.rng = rng
        self.acts = 0
        self.owed = 0
        """Acts sent because an `act` reply said the seat still owed one."""

    async def ask(self, kind: str, drop: tuple[str, ...] = (), **fill: Any) -> Msg:
        """The example of `kind`, filled in and sent; its reply."""
        message = {k: v for k, v in self.examples[kind].items() if k not in drop}
        message.update(fill, id=self.client.next_id())
        await self.client.send(message)
        return await self.client.reply(message["id"])

    async def call(self, kind: str, drop: tuple[str, ...] = (), **fill: Any) -> Msg:
        reply = await self.ask(kind, drop, **fill)
        assert reply["ok"], f"{kind}: {reply}"
        result: Msg = reply["result"]
        return result

    async def host(self, game: str) -> tuple[str, int]:
        """Create a room of `game`, take a seat, fill the other with a house bot, start."""
        await self.call("hello", drop=("tokens",))
        created = await self.call("create", drop=("preset", "options"), game=game)
        room: str = created["room"]["room"]
        seat: int = (await self.call("join", room=room, seat=0))["seat"]
        await self.call("add_bots", room=room)
        await self.call("start", room=room)
        return room, seat

    async def play(self, room: str, seat: int) -> Msg:
        """Answer every turn the room gives the seat; the `game_over` message."""
        while True:
            message = await self.client.next(lambda m: m.get("room") == room, timeout=60)
            if message["type"] == "game_over":
                return message
            turn = message.get("turn") if message["type"] == "snapshot" else message
            if message["type"] not in ("window", "snapshot") or turn is None:
                continue
            if any(actor["seat"] == seat for actor in turn["actors"]):
                await self.answer(room, turn["window"])

    async def answer(self, room: str, window: int) -> None:
        """Ask, choose, act; again while the reply says the seat still owes an act."""
        while True:
            legal = await self.call("legal", room=room)
            if legal["window"] != window or not legal["actions"]:
                return  # the window moved on meanwhile (its deadline passed)
            action = self.rng.choice(legal["actions"])
            reply = await self.ask("act", room=room, window=window, action=action)
            if not reply["ok"]:
                assert reply["error"]["name"] in ("window-closed", "game-over"), reply
                return
            self.acts += 1
            assert reply["result"]["window"] == window
            if not reply["result"]["owes"]:
                return
            self.owed += 1


async def _play_one(server: ServerProcess, game: str) -> None:
    client = await RawClient.open(server.ws, hello={})
    bot = ReferenceBot(client, templates(), random.Random(game))
    room, seat = await bot.host(game)
    over = await asyncio.wait_for(bot.play(room, seat), timeout=120)
    assert len(over["scores"]) == 2 and over["winners"], game
    defaults = [
        done
        for m in client.room_messages(room)
        if m["type"] == "window_closed"
        for done in m["actions"]
        if done["seat"] == seat and done["default"]
    ]
    assert defaults == [], f"{game}: the bot let a turn time out"
    assert bot.acts > 0
    if game == "yamb":
        assert bot.owed > 0, "a Yamb turn takes several acts, each told by `owes`"
    await client.close()


async def test_a_bot_from_the_reference_examples_plays_every_game_to_the_end() -> None:
    """The four games at once (a Yamb game alone takes half a minute of requests paced
    under the rate limit, as the reference says to pace them), on the embedded server:
    the wire is the same on every backend."""
    with running_server() as server:
        await asyncio.gather(*(_play_one(server, game) for game in GAMES))
