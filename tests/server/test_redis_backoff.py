"""The waits of the loops that retry until Redis answers (server/backends/redis/backoff.py)."""

from __future__ import annotations

from dicehall.server.backends.redis.backoff import FIRST, Backoff


def test_the_waits_double_up_to_the_ceiling_and_start_short_again() -> None:
    backoff = Backoff(ceiling=0.5)
    assert [backoff.next() for _ in range(6)] == [FIRST, 0.1, 0.2, 0.4, 0.5, 0.5]
    backoff.reset()
    assert backoff.next() == FIRST and backoff.delay == 2 * FIRST
