"""Whether Redis can be reached now: what /readyz says, and what refuses requests at once.

Two signals: the link's subscription is whole (pub/sub loses what is published while its
connection is down), and Redis answered the last health ping. The ping comes every half
`reply_timeout`, on every connection the link keeps: a connection that owes its reply for
longer is given up (resp.py), so a black hole shows within about one and a half of it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from redis.exceptions import RedisError

from .link import Link

log = logging.getLogger("dicehall.redis")


class Health:
    def __init__(
        self, link: Callable[[], Link], reply_timeout: float, back: Callable[[], None]
    ) -> None:
        self._link = link
        self.reply_timeout = reply_timeout
        self._back = back
        """Called when the subscription is whole again after it was lost."""
        self.subscribed = False
        """The subscription is whole (False from a lost connection until subscribed again)."""
        self.answering = True
        """Redis answered the last health ping."""

    @property
    def reachable(self) -> bool:
        return self.subscribed and self.answering

    def down(self) -> None:
        """The link lost its subscription."""
        self.subscribed = False

    def up(self) -> None:
        """Subscribed again after a lost connection (CLIENT KILL, a blip, a restart): what
        was published meanwhile is not coming, and Redis may have come back empty."""
        self.subscribed = True
        self._back()

    async def watch(self) -> None:
        """Ping Redis every half `reply_timeout`, for ever. Whatever a ping raises, the
        watch goes on (as not answering): a watch that died would leave /readyz saying
        ready for good."""
        while True:
            await asyncio.sleep(self.reply_timeout / 2)
            try:
                answering = await self._pings()
            except Exception:
                log.exception("the Redis health ping failed")
                answering = False
            if self.answering and not answering:
                log.warning("redis does not answer")
            self.answering = answering

    async def _pings(self) -> bool:
        """Redis answers a ping within `reply_timeout`. A connection that was merely cut
        (CLIENT KILL, a restart of a proxy) fails at once: ping again on a new one. The
        deadline is also checked between pings, not only by the time-out's cancel, which
        a callee may swallow (see server/cancelling.py): one lost cancel must not leave
        Redis "answering" while every ping fails."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.reply_timeout
        try:
            async with asyncio.timeout_at(deadline):
                while True:
                    try:
                        await self._link().ping()
                        return True
                    except RedisError:
                        if loop.time() >= deadline:
                            return False
                        await asyncio.sleep(0.05)
        except TimeoutError:
            return False
