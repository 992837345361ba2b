"""Bring a history database's schema up to date with Alembic, on the store's connection.

Why Alembic: operators upgrade dicehall in place, and a schema that changes needs
migrations that run the same on SQLite and PostgreSQL, know which revision a database is
at (its `alembic_version` table), and refuse a database newer than the code. Run at start
(`HistoryStore.open`) under a lock, so that processes starting together migrate once.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import AsyncConnection

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
LOCK = 0x6469636568616C6C
"""PostgreSQL advisory lock key ("dicehall"): one migrating process at a time."""


class SchemaTooNew(Exception):
    """The database was migrated by a newer dicehall than this one."""


def _config(connection: Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def _upgrade(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK})
    config = _config(connection)
    known = {s.revision for s in ScriptDirectory.from_config(config).walk_revisions()}
    current = MigrationContext.configure(connection).get_current_heads()
    unknown = [r for r in current if r not in known]
    if unknown:
        raise SchemaTooNew(
            f"the database is at schema revision {', '.join(unknown)}, which this dicehall "
            "does not know: it was upgraded by a newer version"
        )
    command.upgrade(config, "head")


async def upgrade(conn: AsyncConnection) -> None:
    await conn.run_sync(_upgrade)


def head() -> str:
    """The newest revision this code knows."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    revision = ScriptDirectory.from_config(config).get_current_head()
    assert revision is not None
    return revision
