"""`dicehall serve --workers 2` (docs/operations.md, "Several processes on one machine"):
one supervisor, two worker processes sharing a real Redis.

Both workers answer on the shared port and on their own; seats that come in through the
shared port follow their room to its worker's own port; a worker killed with SIGKILL is
started again by the supervisor while the other worker's room plays on; SIGTERM to the
supervisor stops everything, with exit status 0. A supervisor killed outright leaves no
worker serving on, and a port in use stops it before any worker starts.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
from pathlib import Path

from tests.support.cli import dicehall
from tests.support.redis import RedisServer, check_stream, closing, committed_log, seat_players
from tests.support.servers import Listener, ServerProcess, bindable, free_port, running_server
from tests.support.wait import eventually

from .wire import RawClient

STARTED = re.compile(r"worker (\d+) started \(pid (\d+)\)")
"""The supervisor's report of a worker's start (server/edge/workers.py)."""


def free_ports_in_a_row(count: int, besides: int) -> int:
    """The first of `count` loopback ports in a row that nothing listens on, `besides`
    not among them (the workers' own ports, after the shared one)."""
    while True:
        first = free_port()
        ports = range(first, first + count)
        if besides not in ports and ports[-1] <= 65535 and all(map(bindable, ports[1:])):
            return first


def pids(server: ServerProcess) -> dict[int, int]:
    """Each worker's pid, as the supervisor last reported starting it."""
    return {int(worker): int(pid) for worker, pid in STARTED.findall(server.output())}


def answers(listener: Listener) -> bool:
    try:
        return listener.get("/healthz")[0] == 200
    except OSError:
        return False


def gone(pid: int) -> bool:
    """The process has exited (a zombie counts: an orphan waits for whoever reaps it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


async def runs_rooms_at(url: str) -> str:
    """Where a room created through `url` is run: its worker's own address."""
    host = await RawClient.open(url)
    try:
        info = await host.call("create", game="qwixx", seats=2, public=False)
        where: str = info["room"]["url"]
        return where
    finally:
        await host.close()


async def test_workers_share_a_port_and_rooms_follow_to_their_own(
    redis_server: RedisServer,
) -> None:
    db = redis_server.fresh_db()
    port = free_port()
    first = free_ports_in_a_row(2, besides=port)
    own = [Listener(first), Listener(first + 1)]
    args = ("--workers", "2", "--worker-ports", str(first), "--redis", redis_server.url_db(db))
    with running_server(*args, "--db", "none", port=port) as server:
        await eventually(lambda: all(map(answers, own)), "both workers on their own ports")
        assert set(pids(server)) == {1, 2}
        # The shared port reaches both: the rooms made through it are run by either worker.
        seen: set[str] = set()
        for _ in range(64):  # (the kernel picks a worker per connection: 2**-63 to fail)
            seen.add(await runs_rooms_at(server.ws))
            if len(seen) == 2:
                break
        assert seen == {w.ws for w in own}

        # Three seats come in through the shared port and follow the room to its worker.
        room, players = await seat_players(lambda i: [server.ws], "qwixx", 3, think=0.05)
        async with closing(players):
            async with asyncio.timeout(10):
                while not all(p.client.url in seen and p.client.connected for p in players):
                    await asyncio.sleep(0.02)  # polling the clients: a move tells nothing else
            (owner,) = {p.client.url for p in players}
            other = 2 if owner == own[0].ws else 1
            await players[0].client.start(room)

            # The other worker dies mid-game; the supervisor starts it again.
            victim = pids(server)[other]
            os.kill(victim, signal.SIGKILL)
            assert not any(p.over() for p in players)
            await eventually(lambda: pids(server)[other] != victim, f"worker {other} restarted")
            overs = await asyncio.gather(*(p.finish() for p in players))
            assert len({o.seed for o in overs}) == 1
            log = committed_log(redis_server.client(db), room)
            assert len({check_stream(p, log) for p in players}) == 1
            assert all(p.client.reconnects == 0 for p in players), "the game never noticed"
        await eventually(lambda: answers(own[other - 1]), f"worker {other} back", timeout=20)
        said = server.output()
        assert f"worker {other} (pid {victim}) died after" in said
        assert "(killed by SIGKILL); starting it again in 0.5 s" in said

        workers = list(pids(server).values())
        assert server.terminate() == 0
    assert all(map(gone, workers)), "a worker outlived its supervisor"
    assert not any(map(answers, [*own, Listener(port)]))


async def test_workers_drain_and_exit_when_their_supervisor_is_killed(
    redis_server: RedisServer,
) -> None:
    url = redis_server.url_db(redis_server.fresh_db())
    port = free_port()
    first = free_ports_in_a_row(2, besides=port)
    args = ("--workers", "2", "--worker-ports", str(first), "--redis", url, "--db", "none")
    with running_server(*args, port=port) as server:
        await eventually(lambda: all(answers(Listener(first + i)) for i in (0, 1)), "workers up")
        workers = list(pids(server).values())
        server.proc.kill()
        server.proc.wait()
        await eventually(lambda: all(map(gone, workers)), "the orphans gone", timeout=20)


def test_a_port_in_use_stops_the_supervisor_at_once_in_one_line() -> None:
    nowhere = "redis://127.0.0.1:9/0"  # (never reached: nothing starts)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = ("--port", str(port), "--workers", "2", "--redis", nowhere, "--db", "none")
        done = dicehall("serve", *args)
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"dicehall serve: worker 1 cannot listen on 127.0.0.1:{port}: "), line
    assert "Address already in use" in line
