"""server/cancelling.py: tasks cancelled until they end, even when a cancel is lost; a
task that will not end is given up after the deadline instead of hanging a stop."""

from __future__ import annotations

import asyncio
import logging
import random

import pytest
from redis.asyncio import RedisCluster

from dicehall.server.cancelling import cancel_and_wait
from tests.support.redis import running_cluster


async def loses_its_first_cancel(ended: list[str]) -> None:
    """What a cancel lost inside a library call looks like from outside: the loop goes on
    to its next await as if nothing had happened."""
    lost = False
    try:
        while True:
            try:
                await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                if lost:
                    raise
                lost = True
                task = asyncio.current_task()
                assert task is not None
                task.uncancel()
    finally:
        ended.append("ended")


async def test_a_task_that_loses_a_cancel_is_cancelled_again_until_it_ends() -> None:
    ended: list[str] = []
    task = asyncio.create_task(loses_its_first_cancel(ended))
    await asyncio.sleep(0.02)
    await asyncio.wait_for(cancel_and_wait([task]), 5)
    assert task.cancelled()
    assert ended == ["ended"]


async def test_a_task_that_never_ends_is_given_up_after_the_deadline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    deaf_until = asyncio.Event()

    async def deaf() -> None:
        while not deaf_until.is_set():
            try:
                await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                assert task is not None
                task.uncancel()

    task = asyncio.create_task(deaf())
    quick = asyncio.create_task(asyncio.sleep(10))
    with caplog.at_level(logging.ERROR, "dicehall.server"):
        await asyncio.wait_for(cancel_and_wait([task, quick], timeout=0.3), 5)
    assert quick.cancelled() and not task.done()
    assert "did not end" in caplog.text
    deaf_until.set()
    await task


async def test_an_error_a_task_ended_with_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def fails() -> None:
        raise OSError("the connection went away")

    task = asyncio.create_task(fails())
    other = asyncio.create_task(asyncio.sleep(10))
    await asyncio.sleep(0)
    with caplog.at_level(logging.WARNING, "dicehall.server"):
        await cancel_and_wait([task, other])
    assert other.cancelled()
    assert "the connection went away" in caplog.text


async def test_tasks_looping_on_redis_cluster_commands_end_every_time() -> None:
    """The case that hung CI: redis-py's cluster client loses a cancel that lands while
    it writes (asyncio.wait_for on Python 3.11). Each of 30 tasks, cancelled at a random
    point of its loop, ends."""
    with running_cluster(3) as nodes:
        redis = RedisCluster.from_url(nodes.url)
        try:
            await redis.hset("rooms", mapping={f"room{i}": b"x" for i in range(50)})

            async def scan() -> None:
                while True:
                    await redis.hkeys("rooms")

            for _ in range(30):
                task = asyncio.create_task(scan())
                await asyncio.sleep(random.uniform(0, 0.004))
                await asyncio.wait_for(cancel_and_wait([task], timeout=3), 5)
                assert task.cancelled()
        finally:
            await redis.aclose()
