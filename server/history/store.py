"""The history store: finished games, their seats' results and ratings, player identities,
in SQLite or PostgreSQL through SQLAlchemy Core (asyncio: aiosqlite, asyncpg).

A game is saved once, in one transaction with its result rows and the ratings it moves:
its row is inserted first and only when absent (the room's id is its key), so a save that
is repeated (a restart, the next owner, a retry after a lost reply) changes nothing. No
SQL is built from input: every statement is SQLAlchemy's, every value a bound parameter.
"""

from __future__ import annotations

import math
import secrets as random
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import msgspec
from sqlalchemy import Row, Table, and_, bindparam, event, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from ..jsonvalue import JsonObject
from . import migrate
from .paths import data_dir, private_file, private_folder, tighten
from .ratings import NEW, Rating, places, rate_game, shared
from .schema import game_seats, games, players, ratings, secrets

CONNECT_SECONDS = 10.0
"""PostgreSQL: how long opening a connection may take before it fails (the URL's `timeout`
sets another: `postgresql://host/name?timeout=5`)."""
COMMAND_SECONDS = 30.0
"""PostgreSQL: how long one statement may wait for its answer before it fails (the URL's
`command_timeout` sets another)."""
READ_SECONDS = 5.0
"""PostgreSQL: how long a read for the HTTP API (a pooled connection's check, a new
connection if needed, its statements) may take before the request gets a 503; at most the
command deadline. A page takes about 10 ms: a read this slow finds a database out of reach,
and a player's browser should not wait 30 s to learn it."""
DEADLINES = {"timeout": CONNECT_SECONDS, "command_timeout": COMMAND_SECONDS}
"""The PostgreSQL URL's deadline parameters (asyncpg's names for them) and their defaults."""
RECORD_LEVEL = 6
"""zlib level of a stored record (a 4-seat Qwixx record: ~7.2 KB of JSON, ~0.9 KB kept)."""


class HistoryError(Exception):
    """The history store cannot do what was asked (a bad URL, a database that is gone)."""


class SeatResult(msgspec.Struct, frozen=True):
    seat: int
    name: str
    player: str | None
    """The seat's player id (from its player key); None: played without one."""
    score: int


class FinishedGame(msgspec.Struct, frozen=True):
    """What is stored of a game that ended (and waits in the outbox until it is)."""

    id: str
    game: str
    ladder: str | None
    """Where its result is rated (ratings.ladder_of); None: not rated. The store rates
    nobody still when a person holds two seats (ratings.shared)."""
    finished_at: int
    """Unix milliseconds."""
    record: dict[str, object]
    """The game record (JSON), passed through as the room made it."""
    seats: list[SeatResult]
    public: bool = True
    """The room was public; a private room's game is listed only to its own players
    (docs/history.md, "What is public"). An outbox file of an older version has none."""


class PlayedSeat(msgspec.Struct, frozen=True):
    """One seat of a stored game: a line of a player's games, or of a game's results."""

    game_id: str
    game: str
    ladder: str | None
    finished_at: int
    seats: int
    """How many seats the game had."""
    seat: int
    player: str | None
    name: str
    score: int
    place: int
    rating_before: float | None
    rating_after: float | None
    """The seat's rating (ordinal) on the ladder before and after; None: not rated."""


class Standing(msgspec.Struct, frozen=True):
    """One line of a leaderboard (or a player's place on one)."""

    ladder: str
    rank: int
    player: str
    name: str
    rating: float
    """openskill's ordinal, mu - 3 sigma: what the board is ordered by."""
    mu: float
    sigma: float
    games: int


class StoredGame(msgspec.Struct, frozen=True):
    id: str
    game: str
    ladder: str | None
    finished_at: int
    seats: list[PlayedSeat]
    record: dict[str, Any]  # (Any: the API's schema says "an object", which object cannot)


def engine_url(url: str) -> str:
    """`sqlite:///path` and `postgresql://...` (what an operator writes) with the asyncio
    driver the store uses; a URL that names its driver is taken as it is."""
    parsed = make_url(url)
    driver = {"sqlite": "sqlite+aiosqlite", "postgresql": "postgresql+asyncpg"}
    backend = "postgresql" if parsed.drivername == "postgres" else parsed.drivername
    if backend in driver:
        parsed = parsed.set(drivername=driver[backend])
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise HistoryError(f"--db: {parsed.drivername} is not supported (sqlite, postgresql)")
    if parsed.get_backend_name() == "postgresql":
        _deadlines(parsed)  # (refused here, at start, rather than by every retry later)
    return parsed.render_as_string(hide_password=False)


def _deadlines(parsed: URL) -> tuple[URL, dict[str, float]]:
    """A PostgreSQL URL's deadlines (`DEADLINES`: its `timeout` and `command_timeout`, in
    seconds, or the defaults) and the URL without them.

    (SQLAlchemy hands a URL's query to `asyncpg.connect` as strings, and `connect_args`
    override them: the store reads them itself and passes numbers.)"""
    found = dict(DEADLINES)
    for name in DEADLINES:
        value = parsed.query.get(name)
        if value is None:
            continue
        text = value if isinstance(value, str) else value[-1]
        try:
            seconds = float(text)
        except ValueError:
            seconds = math.nan
        if not (math.isfinite(seconds) and seconds > 0):
            raise HistoryError(f"--db: {name}={text!r}: a number of seconds above 0, please")
        found[name] = seconds
    return parsed.difference_update_query(list(DEADLINES)), found


def _private_sqlite(file: Path) -> None:
    """The SQLite file (it holds the player-key secret) and its folder, for its owner only
    (paths.py). Made before SQLite opens it: SQLite gives its journal, WAL and shared
    memory files the database file's mode."""
    own = file.parent.resolve() == data_dir().resolve()
    private_folder(file.parent, own=own)
    private_file(file)
    for suffix in ("-wal", "-shm", "-journal"):
        tighten(file.with_name(file.name + suffix))


def _sqlite_settings(engine: AsyncEngine) -> None:
    """WAL (readers never wait for the writer), a wait instead of an error when another
    process holds the write lock, foreign keys on, and BEGIN IMMEDIATE: a transaction that
    will write takes the lock first, so two writers queue instead of one failing half-way.
    (SQLAlchemy's documented recipe for the pysqlite/aiosqlite drivers.)

    synchronous=NORMAL: in WAL mode a commit no longer waits for the disk (fsync at
    checkpoints only); a killed process loses nothing committed, a power cut may lose the
    last commits. That is the outbox's own promise (its files are written, not fsynced),
    so FULL would pay a disk flush per game for a durability the game never had before
    reaching the database."""

    @event.listens_for(engine.sync_engine, "connect")
    def connect(dbapi_connection: _SqliteConnection, record: object) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in (
            "journal_mode=WAL",
            "synchronous=NORMAL",
            "busy_timeout=10000",
            "foreign_keys=ON",
        ):
            cursor.execute(f"PRAGMA {pragma}")  # (constants: no input in them)
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")


_Insert = Callable[[Table], sqlite.Insert] | Callable[[Table], postgresql.Insert]
"""The dialect's INSERT, which has its ON CONFLICT clauses."""


class _Cursor(Protocol):
    def execute(self, sql: str, /) -> object: ...
    def close(self) -> None: ...


class _SqliteConnection(Protocol):
    """What the store sets up on a new SQLite connection (the driver's DB-API one)."""

    isolation_level: str | None

    def cursor(self) -> _Cursor: ...


class _Writes:
    """The write statements, built once per store (for its dialect's upsert): SQLAlchemy
    then only binds each call's values (a statement built per call cost most of a save)."""

    def __init__(self, insert: _Insert) -> None:
        self.add_game = insert(games).on_conflict_do_nothing(index_elements=["id"])
        upsert = insert(players)
        self.remember = upsert.on_conflict_do_update(
            index_elements=["id"], set_={"name": upsert.excluded.name}
        )
        self.add_ratings = insert(ratings).on_conflict_do_nothing(
            index_elements=["player_id", "ladder"]
        )
        self.hold_ratings = (
            select(ratings.c.player_id, ratings.c.mu, ratings.c.sigma, ratings.c.games)
            .where(
                ratings.c.ladder == bindparam("ladder"),
                ratings.c.player_id.in_(bindparam("ids", expanding=True)),
            )
            .order_by(ratings.c.player_id)
            .with_for_update()  # (PostgreSQL: two games of one player queue; SQLite: one writer)
        )
        self.move_ratings = (
            update(ratings)
            .where(ratings.c.player_id == bindparam("p"), ratings.c.ladder == bindparam("l"))
            .values(
                mu=bindparam("mu"),
                sigma=bindparam("sigma"),
                ordinal=bindparam("o"),
                games=ratings.c.games + 1,
                updated_at=bindparam("at"),
            )
        )
        self.add_seats = game_seats.insert()


class HistoryStore:
    """One database; `open()` connects and brings the schema up to date."""

    def __init__(self, url: str, pool_size: int = 5) -> None:
        self.url = engine_url(url)
        parsed = make_url(self.url)
        self.command_seconds: float | None = None
        """PostgreSQL: one statement's deadline (None: SQLite, a file on this machine)."""
        self.read_seconds: float | None = None
        """PostgreSQL: an HTTP API read's deadline (`READ_SECONDS`, at most the command's)."""
        if parsed.get_backend_name() == "sqlite":
            if parsed.database and parsed.database != ":memory:":
                _private_sqlite(Path(parsed.database))
            self.engine = create_async_engine(self.url)
            _sqlite_settings(self.engine)
            self._insert: _Insert = sqlite.insert
        else:
            parsed, deadlines = _deadlines(parsed)
            self.command_seconds = deadlines["command_timeout"]
            self.read_seconds = min(READ_SECONDS, self.command_seconds)
            self.engine = create_async_engine(
                parsed,
                pool_size=pool_size,
                pool_pre_ping=True,
                # Deadlines: a black-holed database fails a call, it never hangs one.
                connect_args=deadlines,
            )
            self._insert = postgresql.insert
        self._writes = _Writes(self._insert)

    @classmethod
    async def open(cls, url: str) -> HistoryStore:
        store = cls(url)
        try:
            async with store.engine.begin() as conn:
                await migrate.upgrade(conn)
        except BaseException:
            await store.close()
            raise
        return store

    async def close(self) -> None:
        await self.engine.dispose()

    # --- writing ---------------------------------------------------------------------------

    async def save(self, game: FinishedGame) -> bool:
        """Store a finished game with its results and rating changes; False when it was
        stored already (nothing changes then). Each statement is built once (`_Writes`)
        and sends all its rows at once: a save is a handful of round trips."""
        w = self._writes
        record = zlib.compress(msgspec.json.encode(game.record), RECORD_LEVEL)
        at = game.finished_at
        names = {s.player: s.name for s in game.seats if s.player is not None}
        ids = sorted(names)  # (one order for every writer: no deadlock)
        finish = places([s.score for s in game.seats])
        before: list[float | None] = [None] * len(game.seats)
        after: list[float | None] = [None] * len(game.seats)
        ladder = game.ladder
        if len(game.seats) < 2 or shared([s.player for s in game.seats]):
            ladder = None  # (one seat, or a person in two: docs/history.md, "Ratings")
        async with self.engine.begin() as conn:
            row: dict[str, object] = {"id": game.id, "game": game.game, "ladder": ladder}
            row |= {"seats": len(game.seats), "finished_at": at, "record": record}
            row["public"] = game.public
            if (await conn.execute(w.add_game, row)).rowcount == 0:
                return False
            if ids:
                rows = [{"id": p, "name": names[p], "created_at": at} for p in ids]
                await conn.execute(w.remember, rows)
            if ladder is not None:
                before, after = await self._rate(conn, game, ladder, ids, finish)
            seats = [
                {
                    "game_id": game.id,
                    "seat": s.seat,
                    "player_id": s.player,
                    "name": s.name,
                    "score": s.score,
                    "place": finish[i],
                    "finished_at": at,
                    "rating_before": before[i],
                    "rating_after": after[i],
                }
                for i, s in enumerate(game.seats)
            ]
            await conn.execute(w.add_seats, seats)
        return True

    async def _rate(
        self,
        conn: AsyncConnection,
        game: FinishedGame,
        ladder: str,
        ids: list[str],
        finish: list[int],
    ) -> tuple[list[float | None], list[float | None]]:
        w, at = self._writes, game.finished_at
        players = [s.player for s in game.seats]
        current: dict[str, tuple[Rating, int]] = {}
        if ids:
            # A row only for whom the game rates (a house bot in two seats is not rated).
            once = [p for p in ids if players.count(p) == 1]
            fresh: dict[str, object] = {"ladder": ladder, "mu": NEW.mu, "sigma": NEW.sigma}
            fresh["ordinal"] = NEW.ordinal
            fresh |= {"games": 0, "updated_at": at}
            if once:
                await conn.execute(w.add_ratings, [{"player_id": p, **fresh} for p in once])
            held = await conn.execute(w.hold_ratings, {"ladder": ladder, "ids": ids})
            current = {r.player_id: (Rating(r.mu, r.sigma), r.games) for r in held}
        old = [current.get(p, (NEW, 0)) if p else (NEW, 0) for p in players]
        new = rate_game(players, [r for r, _ in old], [n for _, n in old], finish)
        moved = [
            {"p": p, "l": ladder, "mu": r.mu, "sigma": r.sigma, "o": r.ordinal, "at": at}
            for p, r in zip(players, new, strict=True)
            if p is not None and r is not None  # (a keyless seat is rated, and forgotten)
        ]
        if moved:
            await conn.execute(w.move_ratings, moved)
        return (
            [o.ordinal if n is not None else None for (o, _), n in zip(old, new, strict=True)],
            [n.ordinal if n is not None else None for n in new],
        )

    async def signing_secret(self) -> bytes:
        """The key that signs player keys: made once, then the same for every process."""
        async with self.engine.begin() as conn:
            await conn.execute(
                self._insert(secrets)
                .values(name="player-keys", value=random.token_bytes(32))
                .on_conflict_do_nothing(index_elements=["name"])
            )
            value: bytes = (
                await conn.execute(select(secrets.c.value).where(secrets.c.name == "player-keys"))
            ).scalar_one()
        return value

    # --- reading ---------------------------------------------------------------------------

    async def record(self, game_id: str) -> JsonObject | None:
        async with self.engine.connect() as conn:
            packed: bytes | None = (
                await conn.execute(select(games.c.record).where(games.c.id == game_id))
            ).scalar_one_or_none()
        if packed is None:
            return None
        record: JsonObject = msgspec.json.decode(zlib.decompress(packed))
        return record

    async def game(self, game_id: str) -> StoredGame | None:
        """A stored game: its seats' results (in seat order) and its record."""
        query = (
            select(game_seats, games.c.game, games.c.ladder, games.c.seats, games.c.record)
            .join(games, games.c.id == game_seats.c.game_id)
            .where(game_seats.c.game_id == game_id)
            .order_by(game_seats.c.seat)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        if not rows:
            return None
        first = rows[0]
        record: JsonObject = msgspec.json.decode(zlib.decompress(first.record))
        seats = [_played(row) for row in rows]
        return StoredGame(game_id, first.game, first.ladder, first.finished_at, seats, record)

    async def player_name(self, player: str) -> str | None:
        async with self.engine.connect() as conn:
            name: str | None = (
                await conn.execute(select(players.c.name).where(players.c.id == player))
            ).scalar_one_or_none()
        return name

    async def player_games(
        self,
        player: str,
        limit: int,
        before: tuple[int, str] | None = None,
        private: bool = True,
    ) -> list[PlayedSeat]:
        """A player's games, newest first; `before` (finished_at, game id) of the last one
        seen gives the next page (keyset paging: as fast on page 1,000 as on page 1).
        `private`: private rooms' games too."""
        query = (
            select(game_seats, games.c.game, games.c.ladder, games.c.seats)
            .join(games, games.c.id == game_seats.c.game_id)
            .where(game_seats.c.player_id == player)
            .order_by(game_seats.c.finished_at.desc(), game_seats.c.game_id.desc())
            .limit(limit)
        )
        if not private:
            query = query.where(games.c.public)
        if before is not None:
            at, game_id = before
            query = query.where(
                or_(
                    game_seats.c.finished_at < at,
                    and_(game_seats.c.finished_at == at, game_seats.c.game_id < game_id),
                )
            )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [_played(row) for row in rows]

    async def leaderboard(self, ladder: str, offset: int, limit: int) -> list[Standing]:
        query = (
            select(ratings, players.c.name)
            .join(players, players.c.id == ratings.c.player_id)
            .where(ratings.c.ladder == ladder)
            .order_by(ratings.c.ordinal.desc(), ratings.c.player_id)
            .offset(offset)
            .limit(limit)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [
            Standing(ladder, offset + i + 1, r.player_id, r.name, r.ordinal, r.mu, r.sigma, r.games)
            for i, r in enumerate(rows)
        ]

    async def ratings_of(self, player: str) -> dict[str, Standing]:
        """A player's rating on every ladder they have played on, with their rank there."""
        mine = ratings.alias("mine")
        better = (
            select(func.count())
            .select_from(ratings)
            .where(ratings.c.ladder == mine.c.ladder, ratings.c.ordinal > mine.c.ordinal)
            .scalar_subquery()
        )
        query = (
            select(mine, players.c.name, better.label("better"))
            .join(players, players.c.id == mine.c.player_id)
            .where(mine.c.player_id == player)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return {
            r.ladder: Standing(
                r.ladder, r.better + 1, player, r.name, r.ordinal, r.mu, r.sigma, r.games
            )
            for r in rows
        }

    async def counts(self) -> tuple[int, int]:
        """(games, players) stored."""
        async with self.engine.connect() as conn:
            n_games = (await conn.execute(select(func.count()).select_from(games))).scalar_one()
            n_players = (await conn.execute(select(func.count()).select_from(players))).scalar_one()
        return n_games, n_players


def _played(row: Row[tuple[object, ...]]) -> PlayedSeat:
    return PlayedSeat(
        game_id=row.game_id,
        game=row.game,
        ladder=row.ladder,
        finished_at=row.finished_at,
        seat=row.seat,
        player=row.player_id,
        name=row.name,
        score=row.score,
        place=row.place,
        seats=row.seats,
        rating_before=row.rating_before,
        rating_after=row.rating_after,
    )
