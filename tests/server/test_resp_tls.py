"""TLS to Redis as the URL sets it (`rediss://...?ssl_*=`), on every path: our RESP
connection and subscriber (resp.py, pubsub.py) and redis-py's clients (connect.py), against
a real `redis-server` that speaks TLS only and wants a client certificate, with
certificates the test made with `openssl`."""

from __future__ import annotations

import asyncio
import socket

import pytest
from redis.exceptions import ConnectionError

from dicehall.server.backends.redis.pubsub import RespSubscriber
from dicehall.server.backends.redis.resp import RespClient
from tests.support.proxy import faulty_proxy
from tests.support.redis import RedisServer, backend_connections
from tests.support.tls import Certs


def url(server: RedisServer, certs: Certs, host: str = "127.0.0.1", **params: str) -> str:
    """The server's rediss:// URL with the client's files and `params` (None drops one)."""
    query = {
        "ssl_ca_certs": str(certs.ca),
        "ssl_certfile": str(certs.client_cert),
        "ssl_keyfile": str(certs.client_key),
        **params,
    }
    text = "&".join(f"{k}={v}" for k, v in query.items() if v)
    return f"rediss://{host}:{server.port}/{server.fresh_db()}?{text}"


async def works(url: str) -> None:
    """Our connection and subscriber both get through (and redis-py's client too)."""
    conn = RespClient(url)
    heard: list[bytes] = []
    sub = RespSubscriber(url, lambda c, d: heard.append(d), lambda: None, lambda: None)
    try:
        await sub.subscribe("ch")
        assert await conn.execute("PUBLISH", "ch", b"\x00secret") == 1
        await conn.execute("SET", "k", b"v")
        async with asyncio.timeout(5):
            while not heard:
                await sub.ping()  # (a round trip: the message came before its reply)
        assert heard == [b"\x00secret"]
    finally:
        await sub.close()
        await conn.close()
    client, link = await backend_connections(url)
    try:
        assert await client.get("k") == b"v"
        await link.ping()
    finally:
        await link.close()
        await client.aclose()


async def refused(url: str, why: str | None) -> None:
    """Neither our connection nor redis-py's client gets through."""
    conn = RespClient(url)
    try:
        with pytest.raises(ConnectionError, match=why):
            await conn.execute("PING")
    finally:
        await conn.close()
    client, link = await backend_connections(url)
    try:
        with pytest.raises(ConnectionError):
            await client.ping()
    finally:
        await link.close()
        await client.aclose()


async def test_the_urls_ca_and_client_certificate_get_through(
    tls_redis: RedisServer, certs: Certs
) -> None:
    await works(url(tls_redis, certs))
    await works(url(tls_redis, certs, ssl_cert_reqs="required", ssl_check_hostname="true"))


async def test_a_server_certificate_from_another_ca_is_refused(
    tls_redis: RedisServer, certs: Certs
) -> None:
    """Our connections used to trust the system's CAs whatever the URL said."""
    await refused(url(tls_redis, certs, ssl_ca_certs=str(certs.other_ca)), "CERTIFICATE_VERIFY")
    await refused(url(tls_redis, certs, ssl_ca_certs=""), "CERTIFICATE_VERIFY")  # system CAs


async def test_ssl_cert_reqs_none_takes_any_server_certificate(
    tls_redis: RedisServer, certs: Certs
) -> None:
    await works(url(tls_redis, certs, ssl_ca_certs=str(certs.other_ca), ssl_cert_reqs="none"))


async def test_the_name_in_the_certificate_is_checked_unless_the_url_says_not(
    tls_redis: RedisServer, certs: Certs
) -> None:
    """The certificate names 127.0.0.1 only: `localhost` (the same server) is not it."""
    await refused(url(tls_redis, certs, host="localhost"), "Hostname mismatch")
    await works(url(tls_redis, certs, host="localhost", ssl_check_hostname="false"))


async def test_without_a_client_certificate_redis_refuses(
    tls_redis: RedisServer, certs: Certs
) -> None:
    """The server wants one (`tls-auth-clients yes`, its default): the URL's is what is
    shown, and none is shown when the URL gives none."""
    await refused(url(tls_redis, certs, ssl_certfile="", ssl_keyfile=""), None)


async def test_deadlines_and_keepalive_hold_over_tls(tls_redis: RedisServer, certs: Certs) -> None:
    """TCP keepalive on the socket under TLS, and a black-holed path (through a proxy that
    passes the TLS bytes) fails what is in flight after `reply_timeout`."""
    with faulty_proxy(tls_redis.port) as proxy:
        behind = url(tls_redis, certs).replace(f":{tls_redis.port}/", f":{proxy.port}/")
        conn = RespClient(behind, connect_timeout=0.5, reply_timeout=0.3)
        try:
            await conn.execute("SET", "k", "v")
            assert conn._transport is not None
            sock = conn._transport.get_extra_info("socket")
            assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
            proxy.black_hole()
            async with asyncio.timeout(10):
                with pytest.raises(ConnectionError, match="no answer from Redis"):
                    await conn.execute("GET", "k")
                with pytest.raises(ConnectionError, match="cannot reach Redis"):
                    await conn.ping()  # the handshake of a new one gets no answer either
            proxy.restore()
            assert await conn.execute("GET", "k") == b"v"
        finally:
            await conn.close()
