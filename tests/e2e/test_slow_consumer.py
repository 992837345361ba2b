"""A client that stops reading is cut off (4003) and never delays anyone else's window.

A real server with a small outbound queue (`--max-queue`). The slow client watches the
measured room and busy house-bot rooms, and reads nothing, so its socket backs up and its
queue fills. Meanwhile a player and a house bot play the measured room: every one of its
windows must close because both answered, never because a deadline passed.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest

from dicehall.server.edge.ws import CLOSE_TIMEOUT
from tests.support.frames import StreamClient
from tests.support.servers import ServerProcess, running_server
from tests.support.wait import eventually

from .helpers import dropped, metrics, new_room, stall
from .wire import RawClient, small_socket

MAX_QUEUE = 64
TURN_WINDOW = 5


@pytest.fixture
def small_queue_server() -> Iterator[ServerProcess]:
    with running_server("--max-queue", str(MAX_QUEUE)) as s:
        yield s


def seat_connected(server: ServerProcess, room: str) -> bool:
    """Whether seat 0 of a public room shows as connected in the HTTP lobby."""
    status, body = server.get("/api/rooms")
    assert status == 200
    (info,) = [r for r in json.loads(body) if r["room"] == room]
    connected: bool = info["seats"][0]["connected"]
    return connected


async def test_a_client_that_stops_reading_is_cut_off_without_delaying_others(
    small_queue_server: ServerProcess,
) -> None:
    server = small_queue_server
    player = await RawClient.open(server.ws, hello={"name": "Ada"})
    room = await new_room(player, "yamb", 2, turn_window=TURN_WINDOW, public=False)
    await player.call("join", room=room, seat=0)
    await player.call("add_bots", room=room)
    # (No keepalive of its own: a client that reads nothing cannot see its pongs.)
    slow = await RawClient.open(
        server.ws, sock=small_socket(server.ws), max_queue=1, ping_interval=None
    )
    await slow.call("spectate", room=room)
    table = await new_room(slow, "qwixx", 2, name="slow reader's table")
    await slow.call("join", room=table)
    assert dropped(server) == 0
    await player.call("start", room=room)

    cut_at: float | None = None
    windows_after_cut = 0

    def enough(m: dict[str, Any]) -> bool:
        nonlocal windows_after_cut
        if cut_at is not None and m.get("type") == "window_closed":
            windows_after_cut += 1
        return windows_after_cut >= 6

    playing = asyncio.create_task(player.play_until(room, 0, enough, random.Random(2), 150))
    await stall(server, slow)
    assert not playing.done(), "the game stopped while a spectator did not read"
    cut_at = time.monotonic()

    # Cut off, it is gone from its rooms at once, though its socket is still stuck.
    await eventually(lambda: not seat_connected(server, table), "its seat shown as gone", 5)

    # The slow client, reading again within CLOSE_TIMEOUT, finds the goodbye and the close
    # frame: 4003.
    code, reason = await slow.until_closed(timeout=CLOSE_TIMEOUT)
    assert code == 4003
    assert slow.log[-1] == {"type": "goodbye", "code": 4003, "reason": reason}
    assert dropped(server) == 1

    await asyncio.wait_for(playing, 150)

    # Every window of the measured room closed by answers, and promptly.
    closed = [m for m in player.room_messages(room) if m["type"] == "window_closed"]
    assert len(closed) >= 10
    assert all(not a["default"] for m in closed for a in m["actions"])
    arrivals = [t for m, t in zip(player.log, player.times, strict=True) if m.get("room") == room]
    assert max(b - a for a, b in itertools.pairwise(arrivals)) < TURN_WINDOW / 2
    await player.sync()  # the player's connection is unaffected
    assert [m["seq"] for m in slow.room_messages(room)][-1] < closed[-1]["seq"]
    await player.close()


async def test_clients_that_request_and_never_read_are_cut_and_pin_little_memory() -> None:
    """Five clients ask for the lobby (a large reply: 80 public rooms) and read nothing:
    each is cut off (4003, counted) once its queue holds --max-queue-bytes (1 MiB), the
    server's RSS never grows by more than 4 MiB for each, and a client that reads is
    unaffected."""
    with running_server() as server:  # the default bounds: 1024 frames, 1 MiB
        hosts = [await StreamClient.open(server.port) for _ in range(5)]
        for h, host in enumerate(hosts):
            host.writer.write(StreamClient.request("hello", 1, client=f"host {h}"))
            for i in range(16):  # the most rooms one connection may host
                await asyncio.sleep(0.06)  # under the rate limit
                host.writer.write(
                    StreamClient.request("create", 2 + i, game="qwixx", seats=6, public=True)
                )
            assert len(await host.replies(17)) == 17
        reader = await StreamClient.open(server.port)
        reader.writer.write(StreamClient.request("hello", 1, client="reader"))
        assert await reader.replies(1) == [1]
        before = metrics(server)["process_resident_memory_bytes"]
        hogs = [await StreamClient.open(server.port, rcvbuf=4096) for _ in range(5)]
        for hog in hogs:
            hog.writer.write(StreamClient.request("hello", 1, client="hog"))
        rid = itertools.count(2)
        deadline = time.monotonic() + 120
        peak = before
        while (seen := metrics(server))["dicehall_slow_consumers_dropped_total"] < len(hogs):
            peak = max(peak, seen["process_resident_memory_bytes"])
            assert time.monotonic() < deadline, f"only {dropped(server)} of 5 cut off"
            request = StreamClient.request("rooms", next(rid))
            for hog in hogs:
                if not hog.writer.is_closing():
                    hog.writer.write(request)
            reader.writer.write(StreamClient.request("ping", next(rid)))
            assert len(await reader.replies(1)) == 1, "the reading client is answered"
            await asyncio.sleep(0.055)  # ~18 requests a second: under the rate limit
        grown = peak - before  # while they were connected, at the worst
        assert grown <= 5 * 4 * 2**20, f"{grown / 2**20:.1f} MiB for five never-reading clients"
        for client in [*hogs, *hosts, reader]:
            client.close()


async def test_a_client_cut_off_that_never_reads_again_is_let_go(
    small_queue_server: ServerProcess,
) -> None:
    """Its goodbye and close frame can never be written: the server gives the closing
    handshake CLOSE_TIMEOUT, then drops the connection, so a client that never reads
    cannot pin a socket, its buffers and a place in the connection count for ever."""
    server = small_queue_server
    slow = await RawClient.open(
        server.ws, sock=small_socket(server.ws), max_queue=1, ping_interval=None
    )
    assert metrics(server)["dicehall_connections"] == 1
    await stall(server, slow)
    await eventually(
        lambda: metrics(server)["dicehall_connections"] == 0,
        "the stuck connection dropped",
        CLOSE_TIMEOUT + 30,
    )
    slow.abort()
