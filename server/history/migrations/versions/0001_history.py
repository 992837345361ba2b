"""History, identities and ratings: the first schema.

Revision ID: 0001
Revises:
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "games",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("ladder", sa.String(64), nullable=True),
        sa.Column("seats", sa.Integer, nullable=False),
        sa.Column("finished_at", sa.BigInteger, nullable=False),
        sa.Column("record", sa.LargeBinary, nullable=False),
    )
    op.create_index("games_finished", "games", ["finished_at"])
    op.create_table(
        "game_seats",
        sa.Column("game_id", sa.String(64), sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("seat", sa.Integer, primary_key=True),
        sa.Column("player_id", sa.String(32), sa.ForeignKey("players.id"), nullable=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("score", sa.Integer, nullable=False),
        sa.Column("place", sa.Integer, nullable=False),
        sa.Column("finished_at", sa.BigInteger, nullable=False),
        sa.Column("rating_before", sa.Float, nullable=True),
        sa.Column("rating_after", sa.Float, nullable=True),
    )
    op.create_index("game_seats_player", "game_seats", ["player_id", "finished_at"])
    op.create_table(
        "ratings",
        sa.Column("player_id", sa.String(32), sa.ForeignKey("players.id"), primary_key=True),
        sa.Column("ladder", sa.String(64), primary_key=True),
        sa.Column("mu", sa.Float, nullable=False),
        sa.Column("sigma", sa.Float, nullable=False),
        sa.Column("ordinal", sa.Float, nullable=False),
        sa.Column("games", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.BigInteger, nullable=False),
    )
    op.create_index("ratings_board", "ratings", ["ladder", "ordinal"])
    op.create_table(
        "secrets",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("value", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    for index, table in (("ratings_board", "ratings"), ("game_seats_player", "game_seats")):
        op.drop_index(index, table_name=table)
    op.drop_index("games_finished", table_name="games")
    for table in ("secrets", "ratings", "game_seats", "games", "players"):
        op.drop_table(table)
