"""Room spam (issue 39, item 4) against a real `dicehall serve`, over real sockets: an
address past its bound is refused while another is not, and the lobby comes in pages.

The clients connect from loopback, which is not bounded per address, as a proxy on the
machine would; like such a proxy (deploy/nginx.conf) they say whose connection it is in
`X-Forwarded-For`, which uvicorn trusts from loopback: the server then counts that address.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.wire import RawClient
from tests.support.servers import ServerProcess, running_server

PER_ADDRESS = 2


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with running_server("--max-rooms-per-address", str(PER_ADDRESS)) as s:
        yield s


async def from_address(server: ServerProcess, address: str | None) -> RawClient:
    headers = {} if address is None else {"X-Forwarded-For": address}
    return await RawClient.open(server.ws, additional_headers=headers)


async def test_an_address_past_its_bound_is_refused_while_another_is_not(
    server: ServerProcess,
) -> None:
    spammer = [await from_address(server, "203.0.113.7") for _ in range(2)]
    player = await from_address(server, "198.51.100.20")
    local = await from_address(server, None)
    try:
        for i in range(PER_ADDRESS):
            await spammer[i % 2].call("create", game="qwixx", seats=2)
        for client in spammer:  # (every connection from there: the address's bound)
            error = await client.fails("create", game="qwixx", seats=2)
            assert (error["code"], error["name"]) == (2013, "too-many-rooms")
        await player.call("create", game="qwixx", seats=2)
        for _ in range(PER_ADDRESS + 1):  # (loopback itself is not bounded per address)
            await local.call("create", game="qwixx", seats=2)
        lobby = await local.call("rooms")
        assert lobby["total"] == len(lobby["rooms"]) == PER_ADDRESS + 1 + PER_ADDRESS + 1
        assert lobby["next"] is None
    finally:
        for client in (*spammer, player, local):
            await client.close()
