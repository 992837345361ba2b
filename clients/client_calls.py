"""Requests on one wire, its heartbeat, and tearing it down: what the client does with
a socket once it is open, whichever connection it is."""

from __future__ import annotations

import asyncio
import contextlib
import time

from websockets.exceptions import ConnectionClosed

from dicehall.protocol import errors
from dicehall.protocol.client_connection import Response
from dicehall.protocol.messages import client as requests
from dicehall.protocol.messages import results

from .client_errors import ClientError, ConnectionLost, RequestTimeout, Unsent
from .client_state import ClientState, log
from .client_wire import Wire


class WireCalls(ClientState):
    """Sending a request on a given wire and waiting for its reply; the heartbeat; the
    end of a wire (dropped, or retired by a move)."""

    async def _call(
        self, wire: Wire, message: requests.Request, timeout: float | None
    ) -> results.Result:
        async with wire.send_lock:  # ids must reach the socket in the order they are given
            await wire.pacer.take()
            if wire.closed:
                raise Unsent(f"the connection to {wire.url} dropped")
            numbered, frame = wire.conn.request(message)
            fut: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
            wire.waiters[numbered.id] = fut
            try:
                await wire.ws.send(frame)
            except ConnectionClosed:
                wire.waiters.pop(numbered.id, None)
                self._mark_closed(wire)
                raise Unsent(f"the connection to {wire.url} dropped") from None
        try:
            # not `asyncio.wait_for`: on CPython 3.11 it returns a reply that arrives as the
            # caller is cancelled, and the caller's cancellation is lost
            async with asyncio.timeout(timeout):
                response = await fut
        except TimeoutError:
            wire.waiters.pop(numbered.id, None)
            raise RequestTimeout(
                f"no reply to {type(message).__name__} {numbered.id} within {timeout} s"
            ) from None
        if response.error is not None:
            raise response.error
        assert response.result is not None
        return response.result

    async def _heartbeat(self, wire: Wire) -> None:
        """A protocol `ping` every `heartbeat_ms`: keeps an idle client from the idle close
        and measures the round trip and the clock offset."""
        interval = wire.welcome.limits.heartbeat_ms / 1000
        while not wire.closed:
            await asyncio.sleep(interval)
            sent = time.time()
            try:
                result = await self._call(
                    wire, requests.Ping(id=0, time=int(sent * 1000)), max(interval, 1.0)
                )
            except (ClientError, errors.ProtocolError) as exc:
                log.debug("heartbeat on %s: %s", wire.url, exc)
                continue
            assert isinstance(result, results.PingResult)
            received = time.time()
            self.rtt = received - sent
            self.clock_offset_ms = result.time - (sent + received) * 500

    async def _retire(self, wire: Wire) -> None:
        """Close a wire that hands over to another: its reader ends by itself."""
        self._mark_closed(wire)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(self.open_timeout):
                await wire.ws.close()
        if wire.reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(wire.reader), self.open_timeout)

    async def _drop(self, wire: Wire) -> None:
        """Tear a wire down: socket closed, its tasks stopped, in-flight requests failed."""
        self._mark_closed(wire)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(self.open_timeout):
                await wire.ws.close()
        current = asyncio.current_task()
        for task in [*wire.tasks, wire.reader]:
            if task is not None and task is not current and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._fail_waiters(wire)

    def _mark_closed(self, wire: Wire) -> None:
        """Nothing more goes out on `wire`; new requests wait for the reconnect."""
        wire.closed = True
        if self._wire is wire:
            self._ready.clear()

    def _fail_waiters(self, wire: Wire) -> None:
        for rid, fut in list(wire.waiters.items()):
            if not fut.done():
                fut.set_exception(
                    ConnectionLost(f"the connection to {wire.url} dropped before reply {rid}")
                )
        wire.waiters.clear()
