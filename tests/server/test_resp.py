"""The lean Redis connection (server/backends/redis/resp.py) against a real redis-server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator

import pytest
import redis
from redis.exceptions import ConnectionError, ResponseError

from dicehall.server.backends.redis.pubsub import RespSubscriber
from dicehall.server.backends.redis.resp import RespClient, Script
from tests.support.proxy import FaultyProxy, faulty_proxy
from tests.support.redis import RedisServer, free_redis_port
from tests.support.wait import eventually


@pytest.fixture
def db(redis_server: RedisServer) -> tuple[str, redis.Redis]:
    db = redis_server.fresh_db()
    return redis_server.url_db(db), redis_server.client(db)


@pytest.fixture
async def conn(db: tuple[str, redis.Redis]) -> AsyncIterator[RespClient]:
    connection = RespClient(db[0])
    yield connection
    await connection.close()


def _kill(client: redis.Redis, name_part: str) -> int:
    """CLIENT KILL every connection to this database whose last command has `name_part`."""
    db = str(client.connection_pool.connection_kwargs["db"])
    killed = 0
    for c in client.client_list():
        if name_part in c["cmd"] and c["db"] == db:
            client.client_kill_filter(_id=c["id"])
            killed += 1
    return killed


async def test_commands_sent_together_get_their_own_replies_in_order(
    conn: RespClient, db: tuple[str, redis.Redis]
) -> None:
    client = db[1]
    replies = await asyncio.gather(*(conn.execute("INCR", "n") for _ in range(500)))
    assert replies == list(range(1, 501))
    value = bytes(range(256)) * 4
    await conn.execute("SET", "bin", value)
    assert await conn.execute("GET", "bin") == value
    assert await conn.execute("GET", "missing") is None
    assert client.get("n") == b"500"  # the database of the URL


async def test_commands_asked_while_connecting_wait_until_the_database_is_selected(
    conn: RespClient, db: tuple[str, redis.Redis]
) -> None:
    asked = []
    for _ in range(30):  # one each turn of the loop while the connection opens
        asked.append(asyncio.ensure_future(conn.execute("INCR", "early")))
        await asyncio.sleep(0)
    await asyncio.gather(*asked)
    assert db[1].get("early") == b"30"


async def test_an_error_reply_raises_and_the_next_replies_still_match(conn: RespClient) -> None:
    await conn.execute("SET", "s", "text")
    results = await asyncio.gather(
        conn.execute("INCR", "s"), conn.execute("GET", "s"), return_exceptions=True
    )
    assert isinstance(results[0], ResponseError)
    assert results[1] == b"text"


async def test_a_command_sent_without_its_reply_runs_and_the_other_replies_still_match(
    conn: RespClient, db: tuple[str, redis.Redis]
) -> None:
    """`send` asks Redis to skip the reply (what would wake the process for nothing); an
    error it causes is skipped too, and every awaited reply still reaches its caller."""
    await conn.execute("SET", "s", "text")
    asked = [conn.send("INCR", "n"), conn.execute("GET", "s"), conn.send("INCR", "s")]
    asked += [conn.send("INCR", "n"), conn.execute("INCR", "n")]
    results = await asyncio.gather(*asked)
    assert results == [None, b"text", None, None, 3]
    assert db[1].get("n") == b"3"


@contextlib.asynccontextmanager
async def as_acl_user(
    redis_server: RedisServer, commands: list[str]
) -> AsyncIterator[tuple[RespClient, redis.Redis, str]]:
    """A connection as a fresh ACL user allowed `commands` (and every key and channel);
    -> it, an admin client of the same database, and the user's name."""
    db = redis_server.fresh_db()
    admin = redis_server.client(db)
    user = f"acl-user-{db}"
    admin.acl_setuser(user, enabled=True, passwords=["+pw"], keys=["*"], channels=["*"],
                      commands=commands)  # fmt: skip
    conn = RespClient(f"redis://{user}:pw@127.0.0.1:{redis_server.port}/{db}")
    try:
        yield conn, admin, user
    finally:
        await conn.close()
        admin.acl_deluser(user)


async def test_where_replies_cannot_be_skipped_send_waits_for_them(
    redis_server: RedisServer,
) -> None:
    """An ACL (or a Redis-like server) may refuse CLIENT REPLY: then `send` is `execute`
    without the result, and an error it causes raises."""
    async with as_acl_user(redis_server, ["+@all", "-client"]) as (conn, admin, _):
        await conn.send("SET", "k", "v")
        assert admin.get("k") == b"v"
        with pytest.raises(ResponseError):
            await conn.send("INCR", "k")
        assert await conn.execute("GET", "k") == b"v"


async def test_a_connection_refused_reply_skipping_midway_starts_again(
    redis_server: RedisServer,
) -> None:
    """An ACL that forbids CLIENT REPLY while the connection is open: Redis answers the
    SKIP with an error and then the command after all. The connection starts again
    rather than hand anyone a reply meant for another."""
    async with as_acl_user(redis_server, ["+@all"]) as (conn, admin, user):
        await conn.send("SET", "k", "v1")
        assert await conn.execute("GET", "k") == b"v1"
        admin.acl_setuser(user, enabled=True, commands=["-client"])
        sent = conn.send("SET", "k", "v2")
        asked = conn.execute("GET", "k")
        results = await asyncio.gather(sent, asked, return_exceptions=True)
        assert results[0] is None and isinstance(results[1], ConnectionError)
        assert await conn.execute("GET", "k") == b"v2"
        await conn.send("SET", "k", "v3")  # now awaits its reply
        assert await conn.execute("GET", "k") == b"v3"


async def test_a_script_is_loaded_again_when_redis_forgot_it(
    conn: RespClient, db: tuple[str, redis.Redis]
) -> None:
    client = db[1]
    double = Script("return tonumber(ARGV[1]) * 2 + #KEYS")
    assert await conn.script(double, ["k"], [20]) == 41
    client.script_flush()
    assert await conn.script(double, [], [5]) == 10
    assert await conn.script(double, [], [6]) == 12


async def test_a_cut_connection_fails_what_is_in_flight_and_the_next_command_reconnects(
    conn: RespClient, db: tuple[str, redis.Redis]
) -> None:
    client = db[1]
    await conn.execute("SET", "k", "v")
    blocked = asyncio.ensure_future(conn.execute("BLPOP", "nothing", 10))
    await eventually(lambda: any(c["cmd"] == "blpop" for c in client.client_list()), "BLPOP")
    assert _kill(client, "blpop") == 1
    with pytest.raises(ConnectionError):
        await blocked
    assert await conn.execute("GET", "k") == b"v"  # same database after reconnecting


async def test_an_unreachable_redis_is_a_connection_error() -> None:
    conn = RespClient(f"redis://127.0.0.1:{free_redis_port()}/0")
    with pytest.raises(ConnectionError):
        await conn.execute("PING")


async def test_callers_waiting_for_a_connection_are_told_when_its_opener_is_cancelled() -> None:
    """The first caller opens the connection and the others wait for it: if the first is
    cancelled (its client left) while Redis is slow to answer, the others fail at once
    instead of waiting for ever."""
    heard = asyncio.Event()
    served: list[asyncio.StreamWriter] = []

    async def answer_nothing(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.append(writer)
        await reader.readline()  # the opener's first command arrived: it awaits the reply
        heard.set()
        await reader.read()  # and never gets one, until it hangs up

    silent = await asyncio.start_server(answer_nothing, "127.0.0.1", 0)
    port = silent.sockets[0].getsockname()[1]
    conn = RespClient(f"redis://127.0.0.1:{port}/0", connect_timeout=30)
    try:
        opener = asyncio.ensure_future(conn.execute("PING"))
        await asyncio.wait_for(heard.wait(), 5)
        waiter = asyncio.ensure_future(conn.execute("PING"))
        await asyncio.sleep(0)  # one step: the waiter runs until it waits for the opener
        opener.cancel()
        with pytest.raises(ConnectionError):
            await asyncio.wait_for(waiter, 5)
        assert opener.cancelled()
    finally:
        await conn.close()
        silent.close()  # (stops listening; what it accepted stays open until closed here)
        for writer in served:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


async def test_a_subscriber_hears_what_is_published_after_subscribing_and_comes_back(
    db: tuple[str, redis.Redis],
) -> None:
    url, client = db
    heard: list[tuple[bytes, bytes]] = []
    events: list[str] = []
    up = asyncio.Event()

    def on_up() -> None:
        events.append("up")
        up.set()

    sub = RespSubscriber(
        url, lambda c, d: heard.append((c, d)), lambda: events.append("down"), on_up
    )
    try:
        await sub.subscribe("a")
        await sub.subscribe("b")
        for i in range(100):
            client.publish("a" if i % 2 else "b", str(i))
        client.publish("c", "not subscribed")
        await sub.unsubscribe("b")
        client.publish("b", "after unsubscribe")
        client.publish("a", "last")
        for _ in range(200):
            if heard and heard[-1] == (b"a", b"last"):
                break
            await asyncio.sleep(0.01)
        assert heard == [(b"a" if i % 2 else b"b", str(i).encode()) for i in range(100)] + [
            (b"a", b"last")
        ]

        assert _kill(client, "subscribe") == 1
        await asyncio.wait_for(up.wait(), 5)
        assert events == ["down", "up"]
        heard.clear()
        assert client.publish("a", "again") == 1  # subscribed again, and only to "a"
        assert client.publish("b", "no") == 0
        for _ in range(200):
            if heard:
                break
            await asyncio.sleep(0.01)
        assert heard == [(b"a", b"again")]
    finally:
        await sub.close()


# --- a black hole: Redis goes silent and nothing says so ---------------------------------------


@pytest.fixture
def hole(redis_server: RedisServer) -> Iterator[tuple[FaultyProxy, int]]:
    """A proxy in front of the test Redis, and a fresh database behind it."""
    with faulty_proxy(redis_server.port) as proxy:
        yield proxy, redis_server.fresh_db()


async def test_a_silent_redis_fails_what_is_in_flight_and_the_connection_heals(
    hole: tuple[FaultyProxy, int],
) -> None:
    proxy, db = hole
    conn = RespClient(proxy.redis_url(db), connect_timeout=0.5, reply_timeout=0.3)
    try:
        await conn.execute("SET", "k", "v")
        proxy.black_hole()
        async with asyncio.timeout(10):  # (a hang fails here, not at the suite's time-out)
            with pytest.raises(ConnectionError, match="no answer from Redis"):
                await conn.execute("GET", "k")
            with pytest.raises(ConnectionError, match="cannot reach Redis"):
                await conn.ping()  # a new connection gets no answer either
        proxy.restore()
        assert await conn.execute("GET", "k") == b"v"
    finally:
        await conn.close()


async def test_a_silent_redis_takes_the_subscriber_down_and_back_up(
    hole: tuple[FaultyProxy, int], redis_server: RedisServer
) -> None:
    proxy, db = hole
    heard: list[bytes] = []
    down, up = asyncio.Event(), asyncio.Event()
    sub = RespSubscriber(
        proxy.redis_url(db), lambda c, d: heard.append(d), down.set, up.set, reply_timeout=0.3
    )
    try:
        await sub.subscribe("a")
        await sub.ping()
        proxy.black_hole()
        async with asyncio.timeout(10):
            with pytest.raises(ConnectionError):
                await sub.ping()
            await down.wait()
        assert not up.is_set()
        proxy.restore()
        async with asyncio.timeout(15):
            await up.wait()
        assert redis_server.client(db).publish("a", "after") == 1
        async with asyncio.timeout(5):
            while not heard:
                await sub.ping()  # (a round trip: the message came before its reply)
        assert heard == [b"after"]
    finally:
        await sub.close()
