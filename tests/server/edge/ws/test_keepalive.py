"""server/edge/ws/keepalive.py: pings on a real event loop, with short intervals."""

from __future__ import annotations

import asyncio

from dicehall.server.edge.ws.keepalive import Keepalive


async def test_answered_pings_keep_going_and_an_unanswered_one_is_fatal() -> None:
    loop = asyncio.get_running_loop()
    pings: list[bytes] = []
    dead = asyncio.Event()
    answer = True

    def ping(payload: bytes) -> None:
        pings.append(payload)
        if answer:
            loop.call_soon(keepalive.pong, payload)

    keepalive = Keepalive(loop, 0.02, 0.05, ping, dead.set)
    keepalive.start()
    while len(pings) < 4:
        await asyncio.sleep(0.01)
    assert not dead.is_set() and len(set(pings)) == 4, "each ping its own payload"
    answer = False
    await asyncio.wait_for(dead.wait(), 1)
    count = len(pings)
    await asyncio.sleep(0.1)
    assert len(pings) == count, "no ping after the link is declared dead"


async def test_a_stale_pong_does_not_count_and_stop_silences_it() -> None:
    loop = asyncio.get_running_loop()
    pings: list[bytes] = []
    dead = asyncio.Event()
    keepalive = Keepalive(loop, 0.01, 0.05, pings.append, dead.set)
    keepalive.start()
    while not pings:
        await asyncio.sleep(0.005)
    keepalive.pong(b"????")  # not the payload in flight
    await asyncio.wait_for(dead.wait(), 1)
    keepalive = Keepalive(loop, 0.01, 0.05, pings.append, dead.clear)
    keepalive.start()
    keepalive.stop()
    sent = len(pings)
    await asyncio.sleep(0.1)
    assert len(pings) == sent and dead.is_set()
