"""Shared fixtures: a real `dicehall serve` process per test module, once per backend.

Every module that uses `server` runs twice: against the embedded memory backend and against
the Redis backend (one real `redis-server` for the whole session, a fresh logical database
per module so no module sees another's lobby).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import hangs
from tests.support.postgres import PostgresServer, running_postgres
from tests.support.redis import RedisServer, running_redis
from tests.support.servers import ServerProcess, running_server
from tests.support.tls import Certs, make_certs

BACKENDS = ["memory", "redis"]


def pytest_configure(config: pytest.Config) -> None:
    hangs.install()


@pytest.fixture(autouse=True)
def tasks_shown_if_hung(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that hangs prints its event loop's tasks before pytest-timeout fails it."""
    timer = hangs.watch(float(request.config.getini("timeout")))
    yield
    timer.cancel()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """One real `redis-server` for the whole run (tests that restart or cut Redis off
    start their own)."""
    with running_redis() as r:
        yield r


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    """A CA, an unrelated one, a server certificate for 127.0.0.1 and a client's."""
    return make_certs(Path(tmp_path_factory.mktemp("certs")))


@pytest.fixture(scope="session")
def tls_redis(certs: Certs) -> Iterator[RedisServer]:
    """A `redis-server` that speaks TLS only and wants the client's certificate."""
    with running_redis(tls=certs) as r:
        yield r


@pytest.fixture(scope="module", params=BACKENDS)
def server(request: pytest.FixtureRequest) -> Iterator[ServerProcess]:
    if request.param == "memory":
        with running_server() as s:
            yield s
        return
    r: RedisServer = request.getfixturevalue("redis_server")
    with running_server("--redis", r.url_db(r.fresh_db())) as s:
        yield s


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One real PostgreSQL cluster for the whole run (a fresh database per test)."""
    with running_postgres() as pg:
        yield pg


@pytest.fixture(params=["sqlite", "postgresql"])
def history_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty history database: a SQLite file, or a new database on the PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'history.db'}"
    pg: PostgresServer = request.getfixturevalue("postgres")
    return pg.fresh_database()
