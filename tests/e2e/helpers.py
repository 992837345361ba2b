"""What several end-to-end modules share: rooms, metrics, a client made to stall, a game
of house bots played to its end, a hello that asks for a player identity."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

from dicehall.server.history.store import HistoryStore
from tests.support.servers import ServerProcess

from .wire import RawClient, is_over


async def new_room(host: RawClient, game: str, seats: int, **fields: Any) -> str:
    info = await host.call("create", game=game, seats=seats, **fields)
    room: str = info["room"]["room"]
    return room


def metrics(server: ServerProcess) -> dict[str, float]:
    """`/metrics` as {name{labels}: value}, plus every metric name with value 0 from HELP."""
    status, text = server.get("/metrics")
    if status != 200:
        # (Starlette answers 500 first and the server logs the traceback after: wait for it)
        deadline = time.monotonic() + 5
        while "Traceback" not in server.output() and time.monotonic() < deadline:
            time.sleep(0.05)
        raise AssertionError(f"/metrics answered {status}: {text[:500]}\n{server.output_tail()}")
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            out.setdefault(line.split()[2], 0.0)
        elif line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


def dropped(server: ServerProcess) -> float:
    """Connections the server cut off for not reading (close 4003)."""
    return metrics(server)["dicehall_slow_consumers_dropped_total"]


async def stall(server: ServerProcess, slow: RawClient, rooms: int = 12) -> None:
    """Back `slow` up until the server cuts it off: it watches `rooms` four-bot Yamb games
    (~400 kB of JSON each, enough to fill any loopback socket) and reads none of it.

    `slow` must have been opened on `small_socket(...)` with `max_queue=1`. Returns once
    /metrics counts one more slow consumer dropped; the server's writer for `slow` is then
    blocked on a full socket, until `slow` reads again.
    """
    before = dropped(server)
    host = await RawClient.open(server.ws)
    try:
        busy = [await new_room(host, "yamb", 4, public=False) for _ in range(rooms)]
        for room in busy:
            await slow.call("spectate", room=room)
        for room in busy:
            await host.call("add_bots", room=room)
            await host.call("start", room=room)
        # (a bound against a hang, not a pace: twelve games take seconds here, and minutes
        # on a CI machine whose other jobs hold both cores, as one held 60 s too short)
        deadline = time.monotonic() + 180
        while dropped(server) < before + 1:
            assert time.monotonic() < deadline, "the slow client was never cut off"
            await asyncio.sleep(0.1)  # polling /metrics: there is no event to await
    finally:
        await host.close()


async def bot_game(server: ServerProcess, game: str = "qwixx") -> str:
    """A room of house bots, played to its end; its id."""
    host = await RawClient.open(server.ws)
    try:
        room = await new_room(host, game, 2, public=False, turn_window=5)
        await host.call("spectate", room=room)
        await host.call("add_bots", room=room)
        await host.call("start", room=room)
        while (await host.read(timeout=60)).get("type") != "game_over":
            pass
        return room
    finally:
        await host.close()


async def hello_player(server: ServerProcess, key: str | None = None) -> dict[str, Any] | None:
    """The `player` of a `hello` asking for identity (None: the feature is off)."""
    hello: dict[str, Any] = {"features": ["identity"], **({"key": key} if key else {})}
    client = await RawClient.open(server.ws, hello=hello)
    try:
        player: dict[str, Any] | None = client.hello.get("player")
        assert (player is None) == ("identity" not in client.hello["features"])
        return player
    finally:
        await client.close()


async def games_against_a_house_bot(
    server: ServerProcess, count: int, key: str | None = None, public: bool = False
) -> tuple[str, list[str]]:
    """`count` games of Qwixx played to the end by one player (Ada; the player of `key`, or
    a new one) against a house bot, one after another, in private rooms (`public`: in
    public ones): the player's id and the rooms."""
    hello: dict[str, Any] = {"name": "Ada", "features": ["identity"]}
    host = await RawClient.open(server.ws, hello={**hello, **({"key": key} if key else {})})
    rooms = []
    try:
        for i in range(count):
            room = await new_room(host, "qwixx", 2, public=public, turn_window=5)
            await host.call("join", room=room)
            await host.call("add_bots", room=room)
            await host.call("start", room=room)
            await host.play_until(room, 0, is_over, random.Random(i))
            await host.call("leave", room=room)
            rooms.append(room)
        player: str = host.hello["player"]["id"]
    finally:
        await host.close()
    return player, rooms


async def stored(url: str, room: str) -> dict[str, object] | None:
    """The record the history database `url` holds for `room`, read from it directly."""
    store = await HistoryStore.open(url)
    try:
        return await store.record(room)
    finally:
        await store.close()


def waiting(server: ServerProcess) -> float:
    """Finished games the server's history has not stored yet (its metric)."""
    return metrics(server)["dicehall_history_waiting"]
