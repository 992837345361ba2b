"""The history database behind a real network fault: a real `dicehall serve` whose
PostgreSQL is reached through tests/support/proxy.py, and a path that black-holes (every
byte held, nobody told), as a dropped route or a dead firewall state does.

What the deadlines promise (docs/history.md, "Deadlines"): play goes on, /readyz stays 200
and says games wait, each save gives up at its deadline and counts a failure instead of
hanging, the HTTP API answers 503 at its own deadline, and once the path is back every
finished game is stored. The deadlines are the `--db` URL's (`timeout`, `command_timeout`),
shortened here from their 10 and 30 s: the same code an operator's URL reaches.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from dicehall.server.history.store import HistoryError, HistoryStore
from dicehall.server.history.writer import save_deadline
from tests.e2e.helpers import bot_game, metrics, stored, waiting
from tests.support.postgres import PostgresServer
from tests.support.proxy import FaultyProxy, faulty_proxy
from tests.support.servers import ServerProcess, running_server
from tests.support.wait import eventually

DEADLINE = 2.0
"""Seconds: the URL's connect and command deadlines (a save's is twice the command's)."""


def through(proxy: FaultyProxy, url: str) -> str:
    """`url` reached through `proxy`, with the short deadlines in its query."""
    seconds = f"{DEADLINE:g}"
    parsed = make_url(url).set(port=proxy.port)
    parsed = parsed.update_query_dict({"timeout": seconds, "command_timeout": seconds})
    return parsed.render_as_string(hide_password=False)


def timed_get(server: ServerProcess, path: str) -> tuple[int, dict[str, Any], float]:
    """GET `path`: its status, JSON body and how long it took (a client that would wait a
    minute: the server's deadline is what is measured)."""
    started = time.monotonic()
    try:
        with urllib.request.urlopen(server.http + path, timeout=60) as r:
            status, body = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read()
    return status, json.loads(body), time.monotonic() - started


def failures(server: ServerProcess) -> float:
    return metrics(server)["dicehall_history_failures_total"]


def saved(server: ServerProcess) -> float:
    return metrics(server)["dicehall_history_saved_total"]


@pytest.mark.parametrize("ending", ["cut", "heal"])
async def test_a_black_holed_database_delays_history_only(
    postgres: PostgresServer, tmp_path: Path, ending: str
) -> None:
    """`cut`: the black hole never heals; its connections are cut (their fate unknowable:
    a commit may or may not have landed) and new ones get through. `heal`: the path comes
    back with every held byte, as TCP's retransmissions deliver them: statements of
    attempts given up long ago land then (a save is keyed by its room: stored once)."""
    url = postgres.fresh_database()
    with (
        faulty_proxy(postgres.port) as proxy,
        running_server("--db", through(proxy, url), env={"XDG_DATA_HOME": str(tmp_path)}) as server,
    ):
        await eventually(lambda: metrics(server)["dicehall_history_writer_up"] == 1, "up")
        before = await bot_game(server)
        await eventually(lambda: saved(server) == 1, "the first game is stored")
        assert server.get(f"/api/games/{before}")[0] == 200  # (the reader's pool is warm)

        proxy.black_hole()
        started = time.monotonic()
        rooms = [await bot_game(server), await bot_game(server)]  # play goes on
        played = time.monotonic() - started
        await eventually(lambda: waiting(server) == 2, "both games wait in the outbox")

        # A save gives up at its deadline (2 x 2 s) instead of hanging: a failure counted.
        await eventually(lambda: failures(server) >= 1, "a save fails", timeout=4 * DEADLINE)
        first_failure = time.monotonic() - started
        status, text = server.get("/readyz")
        assert status == 200, text
        assert "history: 2 finished game(s) waiting for the database" in text, text
        assert "no answer from the database" in text, text

        # The HTTP API answers 503 at its own deadline (the URL's 2 s here; 5 s unset).
        answered = []
        for path in ("/api/leaderboards/qwixx", f"/api/games/{before}"):
            status, body, took = timed_get(server, path)
            assert status == 503, body
            assert body["error"].startswith("the history database did not answer within 2 s")
            assert took < DEADLINE + 2, f"{path} answered in {took:.1f} s"
            answered.append(f"{took:.1f}")

        # The writer keeps trying, and every attempt ends at its deadline.
        count = failures(server)
        await eventually(lambda: failures(server) > count, "another attempt fails", timeout=15)
        assert saved(server) == 1 and waiting(server) == 2
        holed = time.monotonic() - started

        if ending == "cut":
            proxy.cut()  # (the held connections are dropped, their bytes never delivered)
        proxy.restore()
        healed = time.monotonic()
        await eventually(lambda: waiting(server) == 0, "every game is stored", timeout=15)
        stored_after = time.monotonic() - healed
        await eventually(lambda: saved(server) == 3, "its reports are read")  # (file gone first)
        assert server.get("/readyz") == (200, "ready\nhistory: up to date\n")
        for room in rooms:
            status, body, _ = timed_get(server, f"/api/games/{room}")
            assert status == 200 and body["id"] == room
        print(
            f"{ending}: 2 games played in {played:.1f} s while black-holed; first failure "
            f"{first_failure:.1f} s in; API 503 in {' and '.join(answered)} s; "
            f"{failures(server):.0f} failures in {holed:.1f} s; "
            f"stored {stored_after:.1f} s after the path came back"
        )
    for room in (before, *rooms):
        assert await stored(url, room) is not None


async def test_the_url_deadlines_reach_the_driver(postgres: PostgresServer) -> None:
    """Through a black-holed path, opening a store gives up at the URL's `timeout` and a
    statement at its `command_timeout` (each 1 s here, against their 10 and 30 s unset)."""
    url = postgres.fresh_database()
    with faulty_proxy(postgres.port) as proxy:
        short = (
            make_url(url)
            .set(port=proxy.port)
            .update_query_dict({"timeout": "1", "command_timeout": "1"})
        )
        store = await HistoryStore.open(short.render_as_string(hide_password=False))
        try:
            proxy.black_hole()
            started = time.monotonic()
            with pytest.raises(TimeoutError):
                await HistoryStore.open(short.render_as_string(hide_password=False))
            opening = time.monotonic() - started
            started = time.monotonic()
            with pytest.raises(TimeoutError):
                await store.leaderboard("qwixx", 0, 10)  # (no deadline of the test's own)
            reading = time.monotonic() - started
        finally:
            proxy.cut()
            await store.close()
    print(f"black-holed: open gave up after {opening:.1f} s, a read after {reading:.1f} s")
    assert 0.9 < opening < 3, f"opening gave up after {opening:.1f} s"
    assert 0.9 < reading < 5, f"a read gave up after {reading:.1f} s"


async def test_the_database_url_sets_the_deadlines() -> None:
    """`?timeout=&command_timeout=` (asyncpg's names) set the connect and statement
    deadlines; a save's is twice the statement's, an API read's at most 5 s."""
    base = "postgresql://dicehall@127.0.0.1:9/none"
    for query, command, read, save in (
        ("", 30.0, 5.0, 60.0),
        ("?command_timeout=2&timeout=1.5", 2.0, 2.0, 4.0),
        ("?command_timeout=12", 12.0, 5.0, 24.0),
    ):
        store = HistoryStore(base + query)  # (no connection is opened)
        try:
            assert (store.command_seconds, store.read_seconds) == (command, read)
            assert save_deadline(store) == save
        finally:
            await store.close()
    for bad in ("command_timeout=0", "timeout=soon", "command_timeout=inf"):
        with pytest.raises(HistoryError, match="a number of seconds above 0"):
            HistoryStore(f"{base}?{bad}")
