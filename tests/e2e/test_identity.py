"""Player identity over real sockets (docs/protocol.md, "identity"): `dicehall serve`
processes and raw clients that know only the documented wire.

A key is issued on the first `hello`, names the same player on every later connection, on
a restarted server that keeps its secret and on the other process of a deployment sharing
Redis; a key the deployment did not sign fails the `hello`, which the connection may then
say again; no key however malformed makes the server fail.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.redis import RedisServer
from tests.support.servers import ROOT, ServerProcess, running_server

from .wire import MSGPACK, RawClient, ReplyError

SECRET = {"DICEHALL_SECRET": "a deployment's own secret, 32 by"}
IDENTITY = {"features": ["identity"]}


async def identify(url: str, key: str | None = None, **options: Any) -> dict[str, Any]:
    """One connection's `hello` with the feature (and `key`): the reply's `player`."""
    hello = {**IDENTITY, **({"key": key} if key is not None else {})}
    client = await RawClient.open(url, hello=hello, **options)
    try:
        assert "identity" in client.welcome["features"]
        assert client.hello["features"] == ["identity"]
        player: dict[str, Any] = client.hello["player"]
        return player
    finally:
        await client.close()


async def test_a_key_is_issued_on_first_contact_and_names_the_player_again(
    server: ServerProcess,
) -> None:
    first = await identify(server.ws)
    assert set(first) == {"id", "key"} and first["id"] in first["key"]
    assert await identify(server.ws, first["key"]) == first
    assert await identify(server.ws, first["key"], subprotocol=MSGPACK) == first
    assert (await identify(server.ws))["id"] != first["id"]
    plain = await RawClient.open(server.ws)
    try:
        assert "player" not in plain.hello  # without the feature: no field at all
    finally:
        await plain.close()


async def test_a_key_not_signed_here_fails_hello_and_hello_may_come_again(
    server: ServerProcess,
) -> None:
    real = await identify(server.ws)
    with running_server(env={"DICEHALL_SECRET": "another deployment, 32 bytes...."}) as other:
        foreign = (await identify(other.ws))["key"]
    last = real["key"][-1]
    altered = real["key"][:-1] + ("A" if last != "A" else "B")
    forged = f"pk1.{real['id']}.{'A' * 32}"
    client = await RawClient.open(server.ws, hello={})
    try:
        for key in (foreign, altered, forged, "pk1.house:strong.x"):
            error = await client.fails("hello", client="e2e", key=key, **IDENTITY)
            assert (error["code"], error["name"]) == (2012, "bad-key")
            assert "hello without a key" in error["message"]
        error = await client.fails("games")  # still waiting for hello
        assert error["name"] == "hello-first"
        error = await client.fails("hello", client="e2e", key=real["key"])  # no feature
        assert error["name"] == "invalid-message" and "identity" in error["message"]
        again = await client.call("hello", client="e2e", name="Ada", key=real["key"], **IDENTITY)
        assert again["player"] == real and again["name"] == "Ada"
        assert (await client.fails("hello", client="e2e"))["name"] == "already-hello"
        await client.call("games")
    finally:
        await client.close()


async def test_keys_survive_a_restart_with_the_same_secret() -> None:
    with running_server(env=SECRET) as server:
        first = await identify(server.ws)
    with running_server(env=SECRET) as server:
        assert await identify(server.ws, first["key"]) == first
    with running_server() as server:  # a random secret per start: the key is foreign there
        client = await RawClient.open(server.ws, hello={})
        try:
            error = await client.fails("hello", client="e2e", key=first["key"], **IDENTITY)
        finally:
            await client.close()
        assert error["name"] == "bad-key"


async def test_a_key_works_on_every_process_sharing_redis(redis_server: RedisServer) -> None:
    """No DICEHALL_SECRET and no history database: the first process stores one in Redis
    and both sign with it (with a database, its secret: tests/e2e/test_history.py)."""
    url = redis_server.url_db(redis_server.fresh_db())
    plain = ("--redis", url, "--db", "none")
    with running_server(*plain) as a, running_server(*plain) as b:
        first = await identify(a.ws)
        assert await identify(b.ws, first["key"]) == first
        assert await identify(a.ws, (await identify(b.ws))["key"]) != first


GARBAGE = st.one_of(
    st.text(max_size=140),
    st.builds(lambda i, m: f"pk1.{i}.{m}", st.text(max_size=30), st.text(max_size=40)),
    st.from_regex(r"pk1\.[A-Za-z0-9_-]{1,20}\.[A-Za-z0-9_-]{0,40}", fullmatch=True),
    st.integers(),
    st.booleans(),
    st.lists(st.text(max_size=4), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(key=GARBAGE)
def test_garbage_keys_get_an_error_never_a_failure(server: ServerProcess, key: Any) -> None:
    error, after = asyncio.run(_garbage(server, key))
    assert error["name"] in {"bad-key", "invalid-message"}, error
    assert after["player"]["id"]  # and the same connection says hello again, fine


async def _garbage(server: ServerProcess, key: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    client = await RawClient.open(server.ws, hello={})
    try:
        rid = await client.send({"type": "hello", "client": "e2e", "key": key, **IDENTITY})
        reply = await client.reply(rid)
        if reply["ok"]:
            raise ReplyError(reply)  # no garbage is anyone's key
        after = await client.call("hello", client="e2e", **IDENTITY)
        return reply["error"], after
    finally:
        await client.close()


async def test_the_documented_bad_key_example_is_what_the_server_says(
    server: ServerProcess,
) -> None:
    section = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    section = section.split("### identity", 1)[1].split("\n## ", 1)[0]
    examples = [json.loads(line) for line in section.splitlines() if line.startswith("{")]
    [sent] = [m for m in examples if m["type"] == "hello" and "key" in m]
    [answer] = [m for m in examples if m["type"] == "reply" and not m["ok"]]
    client = await RawClient.open(server.ws, hello={})
    try:
        fields = {k: v for k, v in sent.items() if k not in {"type", "id"}}
        assert await client.fails("hello", **fields) == answer["error"]
    finally:
        await client.close()
