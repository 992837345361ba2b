"""A game's room was public or private: private rooms' games are listed only to their
players (docs/history.md, "What is public").

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # (games stored before were listed to anyone: they stay public)
    op.add_column(
        "games", sa.Column("public", sa.Boolean, nullable=False, server_default=sa.true())
    )


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_column("public")
