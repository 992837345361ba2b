"""Staying connected: the first connection, the supervisor that follows each wire to its
end, and the reconnects (next URL, growing delays) after a drop worth retrying."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from typing import Final, Self

from dicehall.protocol import errors
from dicehall.protocol.close import CloseCode

from .client_errors import ClientClosed, ClientError, ConnectError, describe
from .client_link import Link
from .client_state import log
from .client_wire import Wire

FATAL_CLOSE_CODES: Final = frozenset(
    {
        CloseCode.NORMAL,
        CloseCode.MESSAGE_TOO_BIG,
        CloseCode.UNSUPPORTED_SUBPROTOCOL,
        CloseCode.PROTOCOL_ABUSE,
        CloseCode.RATE_LIMIT,
        CloseCode.REPLACED,
    }
)
"""Close codes after which reconnecting would fail the same way (or fight another holder of
the seat); every other close, and a drop without a goodbye, is followed by a reconnect."""


class Keeper(Link):
    """The life of a client's connection: `connect()`, `close()`, and everything between
    (a wire dropped, the next one found)."""

    async def connect(self) -> Self:
        """Connect to the first URL that answers and say `hello`; raises `ConnectError`."""
        if self._task is not None or self._finished:
            raise ClientError("connect() may be called once")
        failures: list[str] = []
        for i, url in enumerate(self.urls):
            try:
                wire = await self._open(url)
                await self._attach(wire)
            except errors.BadKeyError as exc:  # (every process of the deployment says so)
                self._finish(exc)
                raise
            except (ClientError, errors.ProtocolError) as exc:
                failures.append(f"{url}: {describe(exc)}")
                continue
            self._url_index = i
            self._task = asyncio.get_running_loop().create_task(
                self._supervise(wire), name="dicehall-client"
            )
            return self
        error = ConnectError("could not connect: " + "; ".join(failures))
        self._finish(error)
        raise error

    async def close(self) -> None:
        """Close the socket (1000) and stop reconnecting; `messages()` then ends."""
        self._closing = True
        wire = self._wire
        if self._moving is not None and not self._moving.done():
            self._moving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._moving
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if wire is not None:
            await self._drop(wire)
        self._finish(None)

    # --- staying connected ----------------------------------------------------------------

    async def _supervise(self, wire: Wire) -> None:
        error: BaseException | None = None
        try:
            while True:
                assert wire.reader is not None
                await wire.reader
                if wire.successor is not None:  # a move: the next wire takes over
                    new = await wire.successor
                    await self._drop(wire)
                    if new is not None:
                        wire = new
                        continue
                self._ready.clear()
                self._wire = None
                self._last_seqs = wire.conn.last_seqs
                await self._drop(wire)
                decision = self._after_drop(wire)
                if isinstance(decision, BaseException) or decision is None:
                    error = decision
                    return
                wire = await self._reconnect(decision)
        except ConnectError as exc:
            error = exc
        finally:
            self._finish(error)

    def _after_drop(self, wire: Wire) -> float | BaseException | None:
        """The delay before reconnecting, or why not to (None: closed by us)."""
        if self._closing:
            return None
        if wire.fatal is not None:
            return wire.fatal
        goodbye = wire.goodbye
        code = goodbye.code if goodbye is not None else wire.ws.close_code
        reason = goodbye.reason if goodbye is not None else (wire.ws.close_reason or "")
        log.warning("connection to %s closed: %s %s", wire.url, code, reason)
        fatal = code in FATAL_CLOSE_CODES and (goodbye is not None or code != CloseCode.NORMAL)
        if fatal or not self.reconnect:
            return ClientClosed(f"the server closed the connection: {code} {reason}", code, reason)
        if goodbye is not None and goodbye.retry_ms is not None:
            return min(goodbye.retry_ms / 1000, self.reconnect_timeout)
        return self.backoff[0]

    async def _reconnect(self, delay: float) -> Wire:
        """Try the next URLs with growing delays until one takes us back, or give up."""
        deadline = time.monotonic() + self.reconnect_timeout
        failures: list[str] = []
        attempt = 0
        while True:
            await asyncio.sleep(delay)
            if self._followed is not None:  # where the rooms were run: first, once
                url, self._followed = self._followed, None
            else:
                self._url_index = (self._url_index + 1) % len(self.urls)
                url = self.urls[self._url_index]
            try:
                wire = await self._open(url)
                await self._attach(wire)
            except (ClientError, errors.ProtocolError) as exc:
                failures.append(f"{url}: {describe(exc)}")
                log.warning("reconnect to %s failed: %s", url, describe(exc))
            else:
                self.reconnects += 1
                log.info("reconnected to %s", url)
                return wire
            attempt += 1
            first, cap = self.backoff
            delay = min(cap, first * 2**attempt) * random.uniform(1.0, 1.5)
            if time.monotonic() + delay > deadline:
                raise ConnectError(
                    f"gave up reconnecting after {self.reconnect_timeout} s: "
                    + "; ".join(failures[-3:])
                )
