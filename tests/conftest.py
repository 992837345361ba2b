"""Shared fixtures: a real `dicehall serve` process per test module, once per backend.

Every module that uses `server` runs twice: against the embedded memory backend and against
the Redis backend (one real `redis-server` for the whole session, a fresh logical database
per module so no module sees another's lobby).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.redis import RedisServer, running_redis
from tests.support.servers import ServerProcess, running_server

BACKENDS = ["memory", "redis"]


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """One real `redis-server` for the whole run (tests that restart or cut Redis off
    start their own)."""
    with running_redis() as r:
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
