"""A Redis connection in subscribe mode whose messages reach a callback as they are parsed.

No task per message and no polling: the parser hands each message over in
`data_received`. It reconnects by itself and subscribes again to everything; what was
published while it was down is lost, and the owner of the callbacks reads it from the
room logs (`on_down` / `on_up` say when).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from typing import Any

from redis.exceptions import ConnectionError

from .backoff import Backoff
from .resp import PUSHES, RespClient, log
from .resptypes import pack
from .urls import RedisUrl


class RespSubscriber(RespClient):
    """A connection in subscribe mode: messages go to `on_message(channel, data)` as they
    arrive; it reconnects with backoff by itself and subscribes again to everything,
    telling `on_down` when it lost Redis and `on_up` once it is subscribed again (what
    was published meanwhile is lost: the backend reads it from the room logs)."""

    def __init__(
        self,
        url: str | RedisUrl,
        on_message: Callable[[bytes, bytes], None],
        on_down: Callable[[], None],
        on_up: Callable[[], None],
        reply_timeout: float = 1.0,
    ) -> None:
        super().__init__(url, reply_timeout=reply_timeout)
        self.channels: set[bytes] = set()
        self._on_message = on_message
        self._on_down = on_down
        self._on_up = on_up
        self._acks: dict[bytes, deque[asyncio.Future[None]]] = {}
        self._revive: asyncio.Task[None] | None = None

    async def subscribe(self, channel: str) -> None:
        """Returns once Redis confirmed it: what is published after that arrives."""
        name = channel.encode()
        if not self._ready:
            await self._connect()
        self.channels.add(name)
        await self._request(b"SUBSCRIBE", [name])

    async def unsubscribe(self, channel: str) -> None:
        name = channel.encode()
        self.channels.discard(name)
        if self._transport is not None:
            await self._request(b"UNSUBSCRIBE", [name])

    async def _request(self, verb: bytes, names: list[bytes]) -> None:
        """(UN)SUBSCRIBE: each channel is confirmed by a push message, not by a reply."""
        if self._transport is None:
            raise ConnectionError("not connected to Redis")
        loop = self._loop
        if not self._awaiting():
            self._heard = loop.time()  # the deadline counts from now
        acks = []
        for name in names:
            ack = loop.create_future()
            self._acks.setdefault(name, deque()).append(ack)
            acks.append(ack)
        self._queue(pack((verb, *names)))
        await asyncio.gather(*acks)

    async def _opened(self) -> None:
        if self.channels:
            await self._request(b"SUBSCRIBE", sorted(self.channels))

    async def ping(self) -> None:
        """A round trip (a subscribed connection answers PING too); raises
        `ConnectionError` while the connection is down or if it does not answer in time.
        (One never opened yet is opened, as `subscribe` would.)"""
        if not self._ready:
            if self._revive is not None or self.channels:
                raise ConnectionError("the Redis subscriber is reconnecting")
            await self._connect()
        await self._send(pack(("PING",)))

    def _awaiting(self) -> bool:
        return bool(self._waiters or self._acks)

    def _reply(self, reply: Any) -> None:  # (as hiredis parsed it: a push is 3 bytes values)
        if type(reply) is list and reply and reply[0] in PUSHES:
            kind = reply[0]
            if kind == b"message":
                try:
                    self._on_message(reply[1], reply[2])
                except Exception:
                    log.exception("handling a message on %r failed", reply[1])
                return
            acks = self._acks.get(reply[1])
            if acks:
                ack = acks.popleft()
                if not acks:
                    del self._acks[reply[1]]
                if not ack.done():
                    ack.set_result(None)
            return
        super()._reply(reply)

    def _lose(self, exc: Exception | None) -> None:
        super()._lose(exc)
        acks, self._acks = self._acks, {}
        for queue in acks.values():
            for ack in queue:
                if not ack.done():
                    ack.set_exception(ConnectionError("Redis connection lost"))
                    ack.exception()
        if not self._closed:
            self._on_down()
            if self._revive is None or self._revive.done():
                self._revive = asyncio.get_running_loop().create_task(self._reconnect())

    async def _reconnect(self) -> None:
        backoff = Backoff()
        while not self._closed:
            await asyncio.sleep(backoff.next())
            try:
                if not self._ready:
                    await self._connect()
            except ConnectionError as exc:
                log.warning("redis pub/sub: %s; retrying in %.2fs", exc, backoff.delay)
                continue
            self._on_up()
            return

    async def close(self) -> None:
        await super().close()
        if self._revive is not None:
            self._revive.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._revive
