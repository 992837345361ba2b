"""server/backends/redis/health.py: Redis is reported away within its reply time-out, even
when a ping loses the time-out's cancel, and the watch outlives whatever a ping raises."""

from __future__ import annotations

import asyncio
import logging
from typing import cast

import pytest
from redis.exceptions import ConnectionError

from dicehall.server.backends.redis.health import Health
from dicehall.server.backends.redis.link import Link
from tests.support.wait import eventually

REPLY_TIMEOUT = 0.2


class Refusing:
    """A link to a Redis that is gone, whose ping outlasts the reply time-out and swallows
    its first cancel (a cancel lost in a library's call), then fails as a refused
    connection does."""

    def __init__(self) -> None:
        self.swallowed = 0

    async def ping(self) -> None:
        try:
            await asyncio.sleep(REPLY_TIMEOUT * 5)
        except asyncio.CancelledError:
            if self.swallowed:
                raise
            task = asyncio.current_task()
            assert task is not None
            task.uncancel()
            self.swallowed += 1
        raise ConnectionError("cannot reach Redis")


class Broken:
    """A link whose ping raises what no ping should, until it is mended."""

    def __init__(self) -> None:
        self.mended = False

    async def ping(self) -> None:
        if not self.mended:
            raise RuntimeError("a bug in the link")


def health(link: object) -> Health:
    return Health(lambda: cast(Link, link), REPLY_TIMEOUT, lambda: None)


async def test_redis_away_is_reported_even_when_a_ping_loses_the_cancel() -> None:
    link = Refusing()
    watched = health(link)
    watch = asyncio.create_task(watched.watch())
    try:
        await eventually(lambda: not watched.answering, "Redis reported away", timeout=5)
        assert link.swallowed >= 1, "the cancel this test is about was never lost"
    finally:
        watch.cancel()


async def test_the_watch_outlives_a_ping_that_raises(caplog: pytest.LogCaptureFixture) -> None:
    link = Broken()
    watched = health(link)
    watch = asyncio.create_task(watched.watch())
    try:
        with caplog.at_level(logging.ERROR, "dicehall.redis"):
            await eventually(lambda: not watched.answering, "Redis reported away", timeout=5)
        assert "the Redis health ping failed" in caplog.text
        link.mended = True
        await eventually(lambda: watched.answering, "Redis reported back", timeout=5)
        assert not watch.done()
    finally:
        watch.cancel()
