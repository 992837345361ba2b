"""bench/server_path.py plays whole games through the server's own layers (the timing
itself is a benchmark's, not a test's): what it counts must be what the server sent."""

from __future__ import annotations

from bench.server_path import measure


async def test_the_games_are_played_and_every_delivery_counted() -> None:
    # (uvloop is the benchmark's loop; the layers it drives are the same on asyncio's)
    cpu, deliveries = await measure(rooms=3, acts=300, seed=1)
    assert cpu > 0
    # four members each receive every room message: at least a window per roll, and the
    # three seats' `answered` and `applied` each time the shared window resolves
    assert deliveries >= 300 * 4
