"""The history database's tables (SQLAlchemy Core), the same on SQLite and PostgreSQL.

Alembic's migrations (migrations/versions/) create and change them; this module is what
the code reads and writes, and a test checks the two agree (an upgraded database has
exactly these tables, columns and indexes). Times are Unix milliseconds (integers sort and
compare the same in both databases); a record is stored as zlib-compressed JSON (a 4-seat
Qwixx record of ~7 KB keeps ~0.9 KB), since 100,000 games should fit anywhere.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    true,
)

metadata = MetaData()

players = Table(
    "players",
    metadata,
    Column("id", String(32), primary_key=True),
    Column(
        "name",
        String(64),
        nullable=False,
        doc="The name the identity last played under (names stay free text).",
    ),
    Column("created_at", BigInteger, nullable=False),
)

games = Table(
    "games",
    metadata,
    Column("id", String(64), primary_key=True, doc="The room's id: a room plays one game."),
    Column("game", String(32), nullable=False),
    Column(
        "ladder",
        String(64),
        nullable=True,
        doc="Where its result was rated (ratings.ladder_of); None: not rated.",
    ),
    Column("seats", Integer, nullable=False),
    Column("finished_at", BigInteger, nullable=False),
    Column("record", LargeBinary, nullable=False),
    Column(
        "public",
        Boolean,
        nullable=False,
        server_default=true(),
        doc="False: a private room's game, listed only to its own players (games stored\n"
        "before this column are public, as they were listed).",
    ),
    Index("games_finished", "finished_at"),
)

game_seats = Table(
    "game_seats",
    metadata,
    Column("game_id", String(64), ForeignKey("games.id"), primary_key=True),
    Column("seat", Integer, primary_key=True),
    Column(
        "player_id",
        String(32),
        ForeignKey("players.id"),
        nullable=True,
        doc="None: a seat played without a player key.",
    ),
    Column("name", String(64), nullable=False),
    Column("score", Integer, nullable=False),
    Column("place", Integer, nullable=False),
    Column(
        "finished_at",
        BigInteger,
        nullable=False,
        doc="(The game's, repeated: a player's games page in one index scan.)",
    ),
    Column("rating_before", Float, nullable=True),
    Column(
        "rating_after",
        Float,
        nullable=True,
        doc="The seat's ordinal on the ladder before and after the game; None: not rated.",
    ),
    Index("game_seats_player", "player_id", "finished_at"),
)

ratings = Table(
    "ratings",
    metadata,
    Column("player_id", String(32), ForeignKey("players.id"), primary_key=True),
    Column("ladder", String(64), primary_key=True),
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column(
        "ordinal",
        Float,
        nullable=False,
        doc="mu - 3 sigma, kept as a column for the leaderboard's index.",
    ),
    Column("games", Integer, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Index("ratings_board", "ladder", "ordinal"),
)

secrets = Table(
    "secrets",
    metadata,
    Column("name", String(32), primary_key=True),
    Column(
        "value",
        LargeBinary,
        nullable=False,
        doc="The key that signs player keys: kept in the database, so that every process\n"
        "sharing it, and every restart, accepts the keys already handed out.",
    ),
)
