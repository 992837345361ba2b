"""SIGTERM: stop accepting, say goodbye with 1001 to every client, exit cleanly (status 0).

A real `dicehall serve` process. One client has stopped reading and its socket is full,
so the server's drain has to wait for it: that gives the test a moment in which the
process is alive, has told everyone to go, and must refuse newcomers.
"""

from __future__ import annotations

import signal

import pytest

from tests.support.servers import running_server

from .helpers import new_room, stall
from .wire import MSGPACK, RawClient, small_socket


async def test_sigterm_drains_with_1001_refuses_newcomers_and_exits_0() -> None:
    with running_server("--max-queue", "64") as server:
        ada = await RawClient.open(server.ws, hello={"name": "Ada"})
        room = await new_room(ada, "qwixx", 2, public=False)
        await ada.call("join", room=room)
        await ada.call("add_bots", room=room)
        await ada.call("start", room=room)
        watcher = await RawClient.open(server.ws, MSGPACK)
        await watcher.call("spectate", room=room)
        stuck = await RawClient.open(server.ws, sock=small_socket(server.ws), max_queue=1)
        await stall(server, stuck)

        server.proc.send_signal(signal.SIGTERM)
        for client in (ada, watcher):
            code, reason = await client.until_closed(timeout=10)
            assert code == 1001
            goodbye = client.log[-1]
            assert goodbye["type"] == "goodbye" and goodbye["code"] == 1001
            assert goodbye["reason"] == reason and goodbye["retry_ms"] > 0

        # Draining (the stuck client holds it open), and no longer accepting anyone.
        with pytest.raises(ConnectionRefusedError):  # the listening socket is closed
            await RawClient.open(server.ws, open_timeout=5)
        assert server.proc.poll() is None

        # Once the stuck client reads, its connection ends, and so do the drain and the
        # process, cleanly.
        assert (await stuck.until_closed(timeout=30))[0] == 4003
        assert server.proc.wait(timeout=20) == 0
