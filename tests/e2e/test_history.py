"""Finished games reach the history database from a real `dicehall serve`: SQLite and a real
PostgreSQL, a database that is down when the game ends, and a server killed before the
database had the game (the next start stores it). Scale-out (a process taking over a game
whose owner died first, players shared) runs over every Redis link: test_history_links.py."""

from __future__ import annotations

import random
from pathlib import Path

from dicehall.server.history.store import HistoryStore
from tests.e2e.helpers import bot_game, hello_player, metrics, new_room, stored, waiting
from tests.e2e.wire import RawClient, is_over
from tests.support.postgres import running_postgres
from tests.support.servers import running_server
from tests.support.wait import eventually


async def test_a_finished_game_is_stored_with_its_seed(history_url: str) -> None:
    with running_server("--db", history_url) as server:
        room = await bot_game(server)
        await eventually(lambda: metrics(server)["dicehall_history_saved_total"] == 1, "saved")
        record = await stored(history_url, room)
        assert record is not None and record["game"] == "qwixx" and "seed" in record
        assert waiting(server) == 0
        assert server.get("/readyz") == (200, "ready\nhistory: up to date\n")


async def test_the_default_database_is_a_file_in_the_data_directory(tmp_path: Path) -> None:
    with running_server(env={"XDG_DATA_HOME": str(tmp_path)}) as server:
        room = await bot_game(server)
        await eventually(lambda: metrics(server)["dicehall_history_saved_total"] == 1, "saved")
    url = f"sqlite:///{tmp_path / 'dicehall' / 'history.db'}"
    assert await stored(url, room) is not None


async def test_play_goes_on_while_the_database_is_down_and_a_kill_loses_nothing(
    tmp_path: Path,
) -> None:
    """PostgreSQL is stopped: games still end, wait in the outbox, and /readyz and /metrics
    say so. The server is then killed (SIGKILL) before the database had them; the next start
    stores them once PostgreSQL is back."""
    data = {"XDG_DATA_HOME": str(tmp_path / "data")}
    with running_postgres() as pg:
        url = pg.fresh_database()
        with running_server("--db", url, env=data) as server:
            await eventually(lambda: metrics(server)["dicehall_history_writer_up"] == 1, "up")
            pg.stop()
            rooms = [await bot_game(server), await bot_game(server, "yamb")]
            await eventually(lambda: waiting(server) == 2, "both games wait in the outbox")
            status, text = server.get("/readyz")
            assert status == 200 and "2 finished game(s) waiting for the database" in text
            server.proc.kill()
            server.proc.wait(10)
        assert sorted(p.stem for p in (tmp_path / "data/dicehall/pending-games").iterdir()) == (
            sorted(rooms)
        )
        pg.start()
        with running_server("--db", url, env=data) as server:
            await eventually(lambda: waiting(server) == 0, "the outbox is emptied", timeout=30)
        for room in rooms:
            assert await stored(url, room) is not None


async def test_the_database_coming_back_late_delays_history_only(tmp_path: Path) -> None:
    """The database is unreachable when the server starts: it serves games at once, and
    stores them once PostgreSQL is up."""
    with running_postgres() as pg:
        url = pg.fresh_database()
        pg.stop()
        with running_server("--db", url, env={"XDG_DATA_HOME": str(tmp_path)}) as server:
            room = await bot_game(server)
            await eventually(lambda: waiting(server) == 1, "the game waits")
            pg.start()
            await eventually(lambda: waiting(server) == 0, "stored", timeout=60)
        assert await stored(url, room) is not None


async def test_keys_survive_a_restart_with_no_secret_set(tmp_path: Path) -> None:
    """The history database keeps the key-signing secret: no DICEHALL_SECRET needed."""
    data = {"XDG_DATA_HOME": str(tmp_path)}
    with running_server(env=data) as server:
        first = await hello_player(server)
    assert first is not None
    with running_server(env=data) as server:
        assert await hello_player(server, first["key"]) == first


async def test_identity_waits_for_a_database_out_of_reach_at_start(tmp_path: Path) -> None:
    with running_postgres() as pg:
        url = pg.fresh_database()
        pg.stop()
        with running_server("--db", url, env={"XDG_DATA_HOME": str(tmp_path)}) as server:
            assert await hello_player(server) is None  # play goes on, without players
            pg.start()

            async def identity_on() -> bool:
                return await hello_player(server) is not None

            await eventually(identity_on, "identity is on", timeout=30)
            player = await hello_player(server)
            assert player is not None and await hello_player(server, player["key"]) == player


async def test_a_game_is_stored_under_its_players_and_rates_them(history_url: str) -> None:
    with running_server("--db", history_url) as server:
        host = await RawClient.open(server.ws, hello={"name": "Ada", "features": ["identity"]})
        try:
            ada = host.hello["player"]["id"]
            room = await new_room(host, "qwixx", 2, public=False, turn_window=5)
            await host.call("join", room=room)
            await host.call("add_bots", room=room)
            await host.call("start", room=room)
            await host.play_until(room, 0, is_over, random.Random(7))
        finally:
            await host.close()
        await eventually(lambda: metrics(server)["dicehall_history_saved_total"] == 1, "saved")
    store = await HistoryStore.open(history_url)
    try:
        (played,) = await store.player_games(ada, 10)
        assert (played.game_id, played.seats, played.name) == (room, 2, "Ada")
        board = await store.leaderboard("qwixx", 0, 10)
        assert {s.player for s in board} == {ada, "house:random"}  # (add_bots default kind)
        assert all(s.games == 1 for s in board)
    finally:
        await store.close()
