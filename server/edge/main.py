"""`dicehall serve`: check the settings, then serve in this process (server/edge/serving.py).

With `--workers N` this process serves nothing itself: it supervises N processes that each
serve on sockets it hands them (server/edge/workers.py).
"""

from __future__ import annotations

import dataclasses
import sys

from sqlalchemy.exc import ArgumentError

from ..history.paths import default_db
from ..history.store import HistoryError, engine_url
from .serving import run
from .settings import Config
from .workers import supervise


def serve(config: Config) -> int:
    """`dicehall serve`: check the settings, then serve here, or run `--workers` worker
    processes that do (server/edge/workers.py). Exit status 2 for settings that cannot work."""
    problem = config.problem()
    if problem:
        print(f"dicehall serve: {problem}", file=sys.stderr)
        return 2
    problem = redis_url_problem(config.redis, config.redis_cluster) if config.redis else None
    if problem:
        print(f"dicehall serve: --redis: {problem}", file=sys.stderr)
        return 2
    db = default_db() if config.db is None else config.db
    config = dataclasses.replace(config, db=db)
    if db != "none":
        try:
            engine_url(db)
        except HistoryError as exc:  # (its message names --db)
            print(f"dicehall serve: {exc}", file=sys.stderr)
            return 2
        except ArgumentError as exc:
            print(f"dicehall serve: --db: {exc}", file=sys.stderr)
            return 2
    if config.workers > 1:
        return supervise(config)
    return run(config)


def redis_url_problem(url: str, cluster: bool) -> str | None:
    """What makes a `--redis` URL unusable, said at start-up in one line (the URL is not
    repeated: it may hold a password); None if nothing does."""
    from ..backends.redis.urls import RedisUrlError, parse_redis_url

    try:
        parse_redis_url(url, cluster)
    except RedisUrlError as exc:
        return str(exc)
    return None
