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

from dicehall.server.history.migrate import SchemaTooNew, head
from dicehall.server.history.ratings import NEW, NEWCOMER_GAMES
from dicehall.server.history.schema import metadata
from dicehall.server.history.store import (
    FinishedGame,
    HistoryError,
    HistoryStore,
    SeatResult,
    engine_url,
)
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


async def place(store: HistoryStore, players: list[str], at: int = 0) -> None:
    """Takes `players` past their first games (ratings.NEWCOMER_GAMES) with ties among
    them: no rating moves, and from then on beating them counts."""
    for i in range(NEWCOMER_GAMES):
        tie: list[tuple[str | None, int]] = [(p, 7) for p in players]
        await store.save(finished(f"placing-{'-'.join(players)}-{i}", tie, at=at + i))


async def test_the_winner_climbs_and_ties_share(store: HistoryStore) -> None:
    await place(store, ["bo", "cy"])
    assert {s.rating for s in await store.leaderboard("qwixx", 0, 50)} == {NEW.ordinal}
    await store.save(finished("r1", [("ada", 30), ("bo", 12), ("cy", 12)], at=100))
    board = await store.leaderboard("qwixx", 0, 50)
    assert board[0].player == "ada" and {board[1].player, board[2].player} == {"bo", "cy"}
    assert [s.rank for s in board] == [1, 2, 3]
    by_player = {s.player: s for s in board}
    assert by_player["ada"].rating > NEW.ordinal
    assert by_player["bo"].rating == pytest.approx(by_player["cy"].rating)
    assert by_player["bo"].mu < NEW.mu
    games = await store.player_games("bo", 1)
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


async def test_a_person_in_two_seats_rates_nobody(store: HistoryStore) -> None:
    """Issue 39's farm: one key in both seats, one of them passing, climbed a ladder (each
    seat was rated from the same start, the last update kept, and both counted)."""
    await place(store, ["bo", "cy"])
    for i in range(8):
        await store.save(finished(f"farm{i}", [("ada", 60), ("ada", -40)], at=100 + i))
    await store.save(finished("three", [("ada", 60), ("bo", 10), ("ada", -40)], at=200))
    assert await store.ratings_of("ada") == {}
    assert (await store.ratings_of("bo"))["qwixx"].games == NEWCOMER_GAMES  # (not rated)
    for played in await store.player_games("ada", 20):
        assert (played.ladder, played.rating_before, played.rating_after) == (None, None, None)
    game = await store.game("three")
    assert game is not None and game.ladder is None and {s.place for s in game.seats} == {1, 2, 3}


async def test_beating_newcomers_earns_nothing_and_losing_to_them_costs(
    store: HistoryStore,
) -> None:
    """A farm of throw-away identities (a new key each game, made to lose) moves no
    rating, however long it runs; a newcomer who wins is rated as usual."""
    for i in range(2 * NEWCOMER_GAMES):
        await store.save(finished(f"farm{i}", [("ada", 60), (f"throwaway{i}", -40)], at=i))
        await store.save(finished(f"anon{i}", [("ada", 60), (None, -40)], at=i))
    ada = (await store.ratings_of("ada"))["qwixx"]
    assert (ada.mu, ada.sigma, ada.games) == (NEW.mu, NEW.sigma, 4 * NEWCOMER_GAMES)
    assert (await store.ratings_of("throwaway0"))["qwixx"].mu < NEW.mu
    await store.save(finished("upset", [("ada", 10), ("cy", 50)], at=100))
    cy = (await store.ratings_of("cy"))["qwixx"]
    assert cy.mu > NEW.mu and cy.rating > NEW.ordinal
    assert (await store.ratings_of("ada"))["qwixx"].mu < NEW.mu


async def test_a_house_bot_in_several_seats_is_the_others_opponent_each_time(
    store: HistoryStore,
) -> None:
    await store.save(finished("bots", [("ada", 5), ("house:strong", 50), ("house:strong", 40)]))
    assert await store.ratings_of("house:strong") == {}
    (game,) = await store.player_games("ada", 5)
    assert game.ladder == "qwixx" and game.rating_before == NEW.ordinal
    assert game.rating_after is not None and game.rating_after < NEW.ordinal  # (lost twice)
    stored = await store.game("bots")
    assert stored is not None
    assert [(s.rating_before, s.rating_after) for s in stored.seats[1:]] == [(None, None)] * 2
    await store.save(finished("one", [("ada", 5), ("house:strong", 50)], at=2_000))
    assert (await store.ratings_of("house:strong"))["qwixx"].games == 1


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
        await place(a, ["ada", "bo", "cy"])  # (so that every game moves every rating)
        games = [
            finished(f"g{i}", [("ada", i % 3), ("bo", 1), ("cy", 2)], at=100 + i) for i in range(24)
        ]
        await asyncio.gather(*((a if i % 2 else b).save(g) for i, g in enumerate(games)))
        for player in ("ada", "bo", "cy"):
            assert (await a.ratings_of(player))["qwixx"].games == NEWCOMER_GAMES + 24
            # Each game moved the rating the one before it left: one chain, no fork.
            played = await a.player_games(player, 24)
            before = [g.rating_before for g in played]
            after = {g.rating_after for g in played}
            assert len(set(before)) == 24 and before.count(NEW.ordinal) == 1
            assert set(before) - {NEW.ordinal} <= after
        assert await b.counts() == (NEWCOMER_GAMES + 24, 3)
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
            [sys.executable, "-m", "dicehall.clients.cli", "serve", "--port", "1", "--db", url],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2 and done.stdout == ""
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("dicehall serve: --db: "), lines
        assert says in lines[0] and "--db: --db" not in lines[0]
