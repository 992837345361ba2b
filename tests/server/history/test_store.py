"""The history store against real databases: a SQLite file and a PostgreSQL cluster."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, text

from server.history.migrate import SchemaTooNew, head
from server.history.ratings import NEW
from server.history.schema import metadata
from server.history.store import FinishedGame, HistoryError, HistoryStore, SeatResult, engine_url
from tests.support.servers import ROOT


@pytest.fixture
async def store(history_url: str) -> AsyncIterator[HistoryStore]:
    s = await HistoryStore.open(history_url)
    try:
        yield s
    finally:
        await s.close()


def finished(
    room: str,
    results: list[tuple[str | None, int]],
    at: int = 1_000,
    ladder: str | None = "qwixx",
) -> FinishedGame:
    names = [f"p{i}" if p is None else f"name-{p}" for i, (p, _) in enumerate(results)]
    record: dict[str, Any] = {"format": 1, "game": "qwixx", "seats": names, "log": []}
    return FinishedGame(
        id=room,
        game="qwixx",
        ladder=ladder,
        finished_at=at,
        record=record,
        seats=[
            SeatResult(seat=i, name=names[i], player=p, score=score)
            for i, (p, score) in enumerate(results)
        ],
    )


async def test_the_migrated_schema_is_the_one_the_code_reads(store: HistoryStore) -> None:
    def differences(conn: Connection) -> list[Any]:
        return list(compare_metadata(MigrationContext.configure(conn), metadata))

    async with store.engine.connect() as conn:
        assert await conn.run_sync(differences) == []
        version = (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalar()
    assert version == head()


async def test_opening_again_migrates_nothing_and_keeps_the_data(history_url: str) -> None:
    first = await HistoryStore.open(history_url)
    await first.save(finished("r1", [("ada", 10), ("bo", 5)]))
    await first.close()
    again = await HistoryStore.open(history_url)
    try:
        assert await again.counts() == (1, 2)
    finally:
        await again.close()


async def test_a_database_from_a_newer_version_is_refused(history_url: str) -> None:
    store = await HistoryStore.open(history_url)
    async with store.engine.begin() as conn:
        await conn.execute(text("UPDATE alembic_version SET version_num = 'f00d'"))
    await store.close()
    with pytest.raises(SchemaTooNew, match="f00d"):
        await HistoryStore.open(history_url)


async def test_a_game_is_stored_once(store: HistoryStore) -> None:
    game = finished("room-1", [("ada", 30), ("bo", 12)])
    assert await store.save(game) is True
    assert await store.save(game) is False  # a repeated save (restart, next owner, retry)
    assert await store.counts() == (1, 2)
    ada = await store.ratings_of("ada")
    assert ada["qwixx"].games == 1
    assert await store.record("room-1") == game.record
    assert await store.record("nothing") is None


async def test_the_winner_climbs_and_ties_share(store: HistoryStore) -> None:
    await store.save(finished("r1", [("ada", 30), ("bo", 12), ("cy", 12)]))
    board = await store.leaderboard("qwixx", 0, 50)
    assert board[0].player == "ada" and {board[1].player, board[2].player} == {"bo", "cy"}
    assert [s.rank for s in board] == [1, 2, 3]
    by_player = {s.player: s for s in board}
    assert by_player["ada"].rating > NEW.ordinal
    assert by_player["bo"].rating == pytest.approx(by_player["cy"].rating)
    assert by_player["bo"].mu < NEW.mu
    games = await store.player_games("bo", 10)
    assert [(g.game_id, g.place, g.score, g.seats) for g in games] == [("r1", 2, 12, 3)]
    assert games[0].rating_before == pytest.approx(NEW.ordinal)
    assert games[0].rating_after == pytest.approx(by_player["bo"].rating)


async def test_solitaire_house_rules_and_keyless_seats(store: HistoryStore) -> None:
    await store.save(finished("solo", [("ada", 40)]))
    await store.save(finished("house", [("ada", 40), ("bo", 1)], ladder=None))
    assert await store.ratings_of("ada") == {}
    assert [g.rating_after for g in await store.player_games("ada", 10)] == [None, None]
    await store.save(finished("anon", [("ada", 40), (None, 1)]))
    assert (await store.ratings_of("ada"))["qwixx"].games == 1
    assert await store.counts() == (3, 2)  # the keyless seat is no one


async def test_a_players_games_page_newest_first(store: HistoryStore) -> None:
    for i in range(7):
        await store.save(finished(f"g{i}", [("ada", i), ("bo", 3)], at=1_000 + i // 2))
    seen: list[str] = []
    page = await store.player_games("ada", 3)
    while page:
        seen += [g.game_id for g in page]
        last = page[-1]
        page = await store.player_games("ada", 3, before=(last.finished_at, last.game_id))
    assert seen == ["g6", "g5", "g4", "g3", "g2", "g1", "g0"]
    assert await store.player_games("nobody", 3) == []


async def test_leaderboard_pages_and_each_players_rank(store: HistoryStore) -> None:
    players = [f"p{i:02}" for i in range(12)]
    for i in range(len(players) - 1):  # p00 beats p01 beats p02 ...
        await store.save(finished(f"g{i}", [(players[i], 10), (players[i + 1], 5)], at=i))
    top = await store.leaderboard("qwixx", 0, 5)
    rest = await store.leaderboard("qwixx", 5, 50)
    everyone = top + rest
    assert [s.rank for s in everyone] == list(range(1, 13))
    assert sorted(s.player for s in everyone) == players
    ratings = [s.rating for s in everyone]
    assert ratings == sorted(ratings, reverse=True)
    for standing in everyone:
        assert (await store.ratings_of(standing.player))["qwixx"].rank == standing.rank
    assert await store.leaderboard("yamb", 0, 5) == []


async def test_concurrent_games_of_the_same_players_lose_no_update(history_url: str) -> None:
    """Two processes' writers saving at once: every game counts on every rating."""
    a, b = await HistoryStore.open(history_url), await HistoryStore.open(history_url)
    try:
        games = [finished(f"g{i}", [("ada", i % 3), ("bo", 1), ("cy", 2)], at=i) for i in range(24)]
        await asyncio.gather(*((a if i % 2 else b).save(g) for i, g in enumerate(games)))
        for player in ("ada", "bo", "cy"):
            assert (await a.ratings_of(player))["qwixx"].games == 24
            # Each game moved the rating the one before it left: one chain, no fork.
            played = await a.player_games(player, 100)
            before = [g.rating_before for g in played]
            after = {g.rating_after for g in played}
            assert len(set(before)) == 24 and before.count(NEW.ordinal) == 1
            assert set(before) - {NEW.ordinal} <= after
        assert await b.counts() == (24, 3)
    finally:
        await a.close()
        await b.close()


async def test_the_signing_secret_is_made_once_for_everyone(history_url: str) -> None:
    a, b = await HistoryStore.open(history_url), await HistoryStore.open(history_url)
    try:
        first, second = await asyncio.gather(a.signing_secret(), b.signing_secret())
        assert first == second and len(first) == 32
    finally:
        await a.close()
        await b.close()
    again = await HistoryStore.open(history_url)
    try:
        assert await again.signing_secret() == first
    finally:
        await again.close()


def test_database_urls() -> None:
    assert engine_url("sqlite:///x.db") == "sqlite+aiosqlite:///x.db"
    assert engine_url("postgresql://u:pw@h/db") == "postgresql+asyncpg://u:pw@h/db"
    assert engine_url("postgres://h/db") == "postgresql+asyncpg://h/db"
    assert engine_url("postgresql+asyncpg://h/db") == "postgresql+asyncpg://h/db"
    with pytest.raises(HistoryError, match="mysql"):
        engine_url("mysql://h/db")
    with pytest.raises(HistoryError, match="command_timeout='soon'"):
        engine_url("postgresql://h/db?command_timeout=soon")


def test_dicehall_serve_refuses_a_bad_database_url_at_start_in_one_line() -> None:
    for url, says in [
        ("mysql://h/db", "mysql is not supported"),
        ("postgresql://h/db?timeout=0", "timeout='0': a number of seconds above 0"),
        ("::", "Could not parse"),
    ]:
        done = subprocess.run(
            [sys.executable, "-m", "clients.cli", "serve", "--port", "1", "--db", url],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2 and done.stdout == ""
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("dicehall serve: --db: "), lines
        assert says in lines[0] and "--db: --db" not in lines[0]
