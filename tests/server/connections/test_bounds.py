"""Bounds on creating rooms (issue 39: 202 connections made 3,234 public rooms in under a
second): per process, per client address, per connection. Sessions with the real server
parts and an in-memory sink (tests/server/connections/test_session.py); each connection's address is
what the WebSocket endpoint would have set from the ASGI scope."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dicehall.protocol import errors
from dicehall.protocol.messages import client as requests
from dicehall.server.connections.bounds import address_key
from dicehall.server.edge.process import Server
from dicehall.server.edge.settings import Config
from tests.support.redis import RedisServer
from tests.support.wait import eventually

from .test_session import Member, act, hello

SECRET = b"0123456789abcdef0123456789abcdef"


@contextlib.asynccontextmanager
async def running(**settings: Any) -> AsyncIterator[Server]:
    server = Server(Config(secret=SECRET, **settings))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def connection(server: Server, address: str | None) -> Member:
    member = await hello(server, "p")
    member.session.address = address
    return member


async def create(member: Member, game: str = "qwixx", seats: int = 2) -> str:
    result = await member.ask(requests.Create, game=game, seats=seats)
    room: str = result.room.room
    return room


async def test_an_address_over_its_bound_is_refused_while_another_is_not() -> None:
    async with running(max_rooms_per_address=3) as server:
        first, second = [await connection(server, "203.0.113.7") for _ in range(2)]
        other = await connection(server, "198.51.100.20")
        await create(first)
        await create(first)
        await create(second)  # (the bound is the address's, whichever connection asks)
        with pytest.raises(errors.TooManyRoomsError) as refused:
            await create(second)
        assert refused.value.code == 2013 and isinstance(refused.value, errors.ForbiddenError)
        for _ in range(3):
            await create(other)
        # (its rooms stay, and count: a new connection from there does not start afresh)
        await first.session.disconnected()
        again = await connection(server, "203.0.113.7")
        with pytest.raises(errors.TooManyRoomsError):
            await create(again)
        assert len((await again.ask(requests.Rooms)).rooms) == 6, "nothing refused was made"


async def test_loopback_and_unknown_addresses_are_not_bounded_per_address() -> None:
    """Connections from the machine itself (a load test there, a proxy there that did not
    say whose connection it passed on) and house bots, which have no address."""
    async with running(max_rooms_per_address=1) as server:
        for address in ("127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1", None):
            member = await connection(server, address)
            await create(member)
            await create(member)


def test_an_ipv6_client_counts_by_its_64_network() -> None:
    """One subscriber gets a /64: counting its addresses one by one would bound nothing."""
    assert address_key("2001:db8:1:2::1") == address_key("2001:db8:1:2:ffff::9")
    assert address_key("2001:db8:1:2::1") != address_key("2001:db8:1:3::1")
    assert address_key("::ffff:203.0.113.7") == address_key("203.0.113.7") == "203.0.113.7"
    assert address_key("203.0.113.7") != address_key("203.0.113.8")
    assert address_key("127.0.0.5") is None and address_key(None) is None


async def test_an_address_may_create_again_once_a_room_closes_or_its_game_ends() -> None:
    async with running(max_rooms_per_address=1, empty_seconds=1.0) as server:
        member = await connection(server, "203.0.113.7")
        await create(member)  # (nobody sits in it: it closes after empty_seconds)
        made: list[str] = []

        async def created() -> bool:
            with contextlib.suppress(errors.TooManyRoomsError):
                made.append(await create(member, "qwixx", 1))
                await member.ask(requests.Join, room=made[0])  # (at once: it stays then)
                return True
            return False

        await eventually(created, "a create once the empty room closed")
        with pytest.raises(errors.TooManyRoomsError):
            await create(member)
        room = made[0]
        await member.ask(requests.Start, room=room)
        while not member.over.is_set():  # (a one-seat game, played to its end)
            legal = await member.ask(requests.Legal, room=room)
            if legal.actions:
                with contextlib.suppress(errors.ProtocolError):  # the window may close first
                    await member.ask(requests.Act, room=room, action=act(legal.actions[-1]))
            await asyncio.sleep(0)
        await create(member)


@pytest.fixture(params=["memory", "redis"])
def backend(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.param == "memory":
        return {}
    redis: RedisServer = request.getfixturevalue("redis_server")
    return {"redis": redis.url_db(redis.fresh_db())}


async def test_a_process_runs_at_most_max_rooms_even_when_asked_at_once(
    backend: dict[str, Any],
) -> None:
    """Creates under way count: five at once for the last three places make three rooms."""
    async with running(max_rooms=4, **backend) as server:
        members = [await connection(server, f"203.0.113.{i}") for i in range(6)]
        await create(members[0])
        made = await asyncio.gather(*(create(m) for m in members[1:]), return_exceptions=True)
        refused = [r for r in made if isinstance(r, BaseException)]
        assert len(refused) == 2 and all(isinstance(r, errors.OverloadedError) for r in refused)
        assert server.backend.rooms_here() == 4
        loopback = await connection(server, "127.0.0.1")
        with pytest.raises(errors.OverloadedError):  # (no address escapes this one)
            await create(loopback)
