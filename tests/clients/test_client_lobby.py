"""`Client.rooms()` lists a lobby larger than any one frame the client accepts (issue 39:
the `rooms` reply grew to 1.87 MB and the client, which refuses frames over 1 MiB, could
not list the rooms at all). A real `dicehall serve` of each backend, real sockets."""

from __future__ import annotations

import asyncio
import json

import msgspec

from dicehall.clients.client import Client
from dicehall.protocol.limits import ReaderLimits
from tests.support.servers import ServerProcess

FRAME = 48 * 1024
"""The reading client's frame limit: above one page of these rooms, below all of them."""


async def test_rooms_lists_more_rooms_than_fit_in_one_frame(server: ServerProcess) -> None:
    hosts = [Client(server.ws, name=f"host{i}") for i in range(10)]
    for host in hosts:
        await host.connect()
    try:
        made = await asyncio.gather(
            *(
                host.create("qwixx", 2, name=f"{host.name}'s table {n}".ljust(60, "."))
                for host in hosts
                for n in range(15)  # (a connection hosts 16 at most)
            )
        )
        async with Client(server.ws, encoding="json", limits=ReaderLimits(max_frame=FRAME)) as c:
            assert c.pages
            rooms = await c.rooms()
            qwixx = await c.rooms("qwixx")
            first = await c.rooms_page(limit=7)
    finally:
        await asyncio.gather(*(host.close() for host in hosts))
    assert sorted(r.room for r in rooms) == sorted(r.room for r in made)
    assert [r.room for r in qwixx] == [r.room for r in rooms]
    assert first.total == len(made) and [r.room for r in first.rooms] == [r.room for r in rooms[:7]]
    whole = {"type": "reply", "id": 9, "ok": True, "result": {"rooms": rooms}}
    assert len(json.dumps(msgspec.to_builtins(whole))) > FRAME, "all in one would not fit"
