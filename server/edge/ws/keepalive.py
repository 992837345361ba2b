"""WebSocket keepalive: a ping every interval; no pong within the time-out fails the
connection with 1011. The same rule as uvicorn's own protocols (`ws_ping_interval`,
`ws_ping_timeout` of its Config), kept by `WebSocketProtocol` since it replaces them."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable


class Keepalive:
    """Timers only: `ping` sends a ping with the payload given, `dead` fails the link."""

    __slots__ = ("_dead", "_interval", "_loop", "_payload", "_ping", "_timeout", "_timer")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        interval: float | None,
        timeout: float | None,
        ping: Callable[[bytes], None],
        dead: Callable[[], None],
    ) -> None:
        self._loop = loop
        self._interval = interval
        self._timeout = timeout
        self._ping = ping
        self._dead = dead
        self._timer: asyncio.TimerHandle | None = None
        self._payload: bytes | None = None

    def start(self) -> None:
        self._schedule(self._interval)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._payload = None

    def pong(self, data: bytes) -> None:
        """A pong arrived: if it answers the ping in flight, the next ping is due in an
        interval (a stale or unsolicited pong changes nothing)."""
        if self._payload is not None and data == self._payload:
            self._schedule(self._interval)

    def _schedule(self, delay: float | None) -> None:
        self.stop()
        if delay:
            self._timer = self._loop.call_later(delay, self._send)

    def _send(self) -> None:
        self._timer = None
        payload = os.urandom(4)
        self._ping(payload)
        if self._timeout:
            self._payload = payload
            self._timer = self._loop.call_later(self._timeout, self._expire)
        else:
            self._schedule(self._interval)  # (no time-out: no pong is waited for)

    def _expire(self) -> None:
        self._timer = None
        self._payload = None
        self._dead()
