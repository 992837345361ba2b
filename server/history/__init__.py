"""Game history, player identities and ratings in a database (docs/history.md).

`store.HistoryStore` is the database (SQLite or PostgreSQL); `ratings` the pure rating
maths; `schema` the tables and `migrate` their Alembic migrations.
"""
