"""Alembic's entry point, run by `migrate.upgrade` with an open connection (never by an
alembic.ini: the database URL is the server's `--db`, and the connection is the store's)."""

from __future__ import annotations

from alembic import context

from dicehall.server.history.schema import metadata

context.configure(
    connection=context.config.attributes["connection"],
    target_metadata=metadata,
    render_as_batch=True,  # SQLite changes a table by copying it: Alembic's batch mode
)
with context.begin_transaction():
    context.run_migrations()
