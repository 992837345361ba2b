"""Issue 39's rating farms, played through a real `dicehall serve` by raw clients: two-seat
Qwinto in which one seat always passes, the other plays. Held by one player key in both
seats (two connections sharing it), the farm took a new player to rank 1 in 8 games; fed a
throw-away identity each game, it gained about 2.2 a game. Now neither moves the farmer's
rating (docs/history.md, "Ratings")."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from dicehall.server.history.ratings import NEW
from dicehall.server.history.store import HistoryStore
from tests.support.servers import ServerProcess, running_server
from tests.support.wait import eventually

from .helpers import hello_player, metrics, new_room
from .wire import Msg, RawClient, ReplyError, is_over

GAMES = 3


async def always_pass(client: RawClient, room: str, seat: int) -> None:
    """Play `seat` to the end of the game, passing whenever the rules allow it (rolling
    when they do not: the active seat must throw first)."""
    while True:
        message = await client.next(lambda m: m.get("room") == room, timeout=60)
        if is_over(message):
            return
        window = message.get("turn") if message["type"] == "snapshot" else message
        if message["type"] not in ("window", "snapshot") or window is None:
            continue
        if all(a["seat"] != seat for a in window["actors"]):
            continue
        reply = await client.request("legal", room=room)
        if not reply["ok"]:
            if reply["error"]["name"] == "game-over":
                return
            raise ReplyError(reply)
        legal = reply["result"]
        if legal["window"] != window["window"] or not legal["actions"]:
            continue
        passing = [a for a in legal["actions"] if a["type"] == "pass"]
        action = (passing or legal["actions"])[0]
        await client.call("act", room=room, window=legal["window"], action=action)


async def farm(server: ServerProcess, key: str, game: int, throwaway: bool) -> str:
    """One game: the farmer (`key`) plays seat 0; seat 1 passes, as the farmer again (a
    second connection with the same key) or as a new identity. Returns the room."""
    hello: dict[str, Any] = {"features": ["identity"]}
    player = await RawClient.open(server.ws, hello={**hello, "name": "Farmer", "key": key})
    feeder_hello: Msg = {**hello, "name": "Feeder", **({} if throwaway else {"key": key})}
    feeder = await RawClient.open(server.ws, hello=feeder_hello)
    try:
        assert (feeder.hello["player"]["id"] == player.hello["player"]["id"]) is not throwaway
        room = await new_room(player, "qwinto", 2, public=False, turn_window=30)
        await player.call("join", room=room, seat=0)
        await feeder.call("join", room=room, seat=1)
        await player.call("start", room=room)
        await asyncio.gather(
            player.play_until(room, 0, is_over, random.Random(game)),
            always_pass(feeder, room, 1),
        )
        return room
    finally:
        await player.close()
        await feeder.close()


@pytest.mark.parametrize("throwaway", [False, True], ids=["one-key-two-seats", "throwaway"])
async def test_a_farm_moves_no_rating(tmp_path: Path, throwaway: bool) -> None:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    with running_server("--db", url) as server:
        farmer = await hello_player(server)
        assert farmer is not None
        rooms = [await farm(server, farmer["key"], i, throwaway) for i in range(GAMES)]
        await eventually(
            lambda: metrics(server)["dicehall_history_saved_total"] == GAMES, "games stored"
        )
    store = await HistoryStore.open(url)
    try:
        stored = [await store.game(room) for room in rooms]
        ratings = await store.ratings_of(farmer["id"])
        played = await store.player_games(farmer["id"], 10)
    finally:
        await store.close()
    assert all(g is not None and g.seats[0].score > g.seats[1].score for g in stored)
    if throwaway:  # rated every game, against a newcomer it beat: no move
        (mine,) = ratings.values()
        assert (mine.mu, mine.sigma, mine.games) == (NEW.mu, NEW.sigma, GAMES)
        assert {(g.rating_before, g.rating_after) for g in played} == {(0.0, 0.0)}
    else:  # one person in both seats: not rated at all
        assert ratings == {}
        assert all(g is not None and g.ladder is None for g in stored)
        assert {(g.ladder, g.rating_after) for g in played} == {(None, None)}
