"""Where the primary is now, asked of the sentinels, for our RESP connections (resp.py).

Sentinel's documented client protocol: ask each sentinel in turn `SENTINEL
GET-MASTER-ADDR-BY-NAME service` until one answers, and start with the one that answered
last time. A connection asks on every (re)connect, so after a failover the next
connection reaches the new primary; it then checks that the node it reached is a primary
(ROLE), since a sentinel may not have heard of the failover yet.

Each sentinel gets `timeout` seconds for its connection and its answer: a black-holed
sentinel costs that much, then the next is asked. The sentinels are asked in plain TCP
(TLS, if any, is for the data nodes), with AUTH first when they want a password.
"""

from __future__ import annotations

import asyncio

import hiredis
from redis.exceptions import ConnectionError, RedisError, ResponseError

from .resptypes import Arg, Reply, pack
from .urls import RedisUrl


class Sentinels:
    """The sentinels of one URL; `primary()` gives the address of the current primary."""

    def __init__(self, target: RedisUrl, timeout: float) -> None:
        assert target.service is not None and target.sentinels, "not a Sentinel URL"
        self.service = target.service
        self.addresses = list(target.sentinels)
        self.timeout = timeout
        self._auth = target.sentinel_auth
        self._first = 0
        """The sentinel that answered last: asked first next time."""

    async def primary(self) -> tuple[str, int]:
        """Raises `ConnectionError` saying what each sentinel said when none could tell."""
        problems = []
        count = len(self.addresses)
        for i in range(count):
            index = (self._first + i) % count
            host, port = self.addresses[index]
            try:
                async with asyncio.timeout(self.timeout):
                    address = await self._ask(host, port)
            except (OSError, TimeoutError, RedisError) as exc:
                problems.append(f"sentinel {host}:{port}: {exc or type(exc).__name__}")
                continue
            if address is None:
                problems.append(f"sentinel {host}:{port} knows no {self.service!r}")
                continue
            self._first = index
            return address
        raise ConnectionError(
            f"no sentinel named the primary of {self.service!r} ({'; '.join(problems)})"
        )

    async def _ask(self, host: str, port: int) -> tuple[str, int] | None:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            commands: list[tuple[Arg, ...]] = []
            if self._auth:
                commands.append(("AUTH", *self._auth))
            commands.append(("SENTINEL", "GET-MASTER-ADDR-BY-NAME", self.service))
            writer.write(b"".join(pack(c) for c in commands))
            parser = hiredis.Reader(replyError=ResponseError)
            replies: list[Reply | ResponseError] = []
            while len(replies) < len(commands):
                data = await reader.read(65536)
                if not data:
                    raise ConnectionError("closed the connection")
                parser.feed(data)
                while (reply := parser.gets()) is not False:
                    replies.append(reply)
        finally:
            writer.transport.abort()
        for reply in replies:
            if isinstance(reply, ResponseError):
                raise reply
        answer = replies[-1]
        if not answer:
            return None
        match answer:
            case [bytes(name), bytes(number)]:
                return name.decode(), int(number)
        raise ResponseError(f"not an address: {answer!r}")
