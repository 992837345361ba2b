"""TLS to Redis with real processes: a `redis-server` that speaks TLS only and wants a
client certificate (certificates made by `openssl` for the test), and two `dicehall serve
--redis rediss://...?ssl_ca_certs=...&ssl_certfile=...&ssl_keyfile=...` playing a game to
its end across both. Every path (our RESP connection and subscriber, redis-py's pool)
must use the URL's certificates: the system's CAs do not know the test's CA, and Redis
refuses a connection without the client's certificate.
"""

from __future__ import annotations

import asyncio

from tests.support.redis import (
    Player,
    RedisServer,
    check_stream,
    committed_log,
    seat_players,
)
from tests.support.servers import running_server


async def test_a_game_across_two_processes_over_tls(tls_redis: RedisServer) -> None:
    db = tls_redis.fresh_db()
    url = tls_redis.url_db(db)
    assert url.startswith("rediss://") and "ssl_certfile=" in url
    with running_server("--redis", url) as a, running_server("--redis", url) as b:
        room, players = await seat_players(
            lambda i: [a.ws, b.ws] if i % 2 == 0 else [b.ws, a.ws], "qwinto", 3
        )
        try:
            watcher = await Player([b.ws], "watcher", "qwinto").connect()
            players.append(watcher)
            await watcher.join(room)
            await players[0].client.start(room)  # seat 1's acts go from B to A over Redis
            await asyncio.gather(*(p.finish() for p in players))
        finally:
            await asyncio.gather(*(p.close() for p in players), return_exceptions=True)
        with tls_redis.client(db) as r:
            log = committed_log(r, room)
        assert len({check_stream(p, log) for p in players}) == 1
        for server in (a, b):
            assert server.get(f"/api/rooms/{room}/record")[0] == 200  # (redis-py's path)
            assert server.get("/readyz")[0] == 200
