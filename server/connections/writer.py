"""The outboxes' writer tasks (server/connections/outbox.py), and the outboxes made with them.

A socket's outbox writes from the flusher, once per turn, and needs a task only while the
socket is paused (the client reads slowly: wait until it drains, then write everything
queued meanwhile, still bounded by the peer) and for the close. An ASGI outbox sends one
ASGI message per frame from its task, then the close. Coroutines, so they stay Python in
a compiled build (server/compiled.py says why), while the outboxes, which every delivery
goes through, may compile: this module imports the outboxes and hands them its
coroutines (`socket_outbox`, `asgi_outbox`), never the other way round.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from dicehall.protocol.subprotocols import Encoding

from ..edge.ws import FrameSocket
from ..metrics import LatencyHistogram
from .outbox import (
    AsgiOutbox,
    CloseSocket,
    ExtensionOutbox,
    Flusher,
    SendFrame,
    SocketOutbox,
    WireCache,
)


def socket_outbox(
    socket: FrameSocket,
    encoding: Encoding,
    flusher: Flusher,
    wires: WireCache,
    latency: LatencyHistogram | None = None,
) -> SocketOutbox:
    """The outbox of a connection to `dicehall serve`'s own socket: whole frames, or
    payloads when an extension (per-message deflate) frames them."""
    kind = SocketOutbox if socket.fast else ExtensionOutbox
    return kind(socket, encoding, latency, flusher, wires, drain_socket)


def asgi_outbox(
    send: SendFrame,
    close: CloseSocket,
    encoding: Encoding,
    latency: LatencyHistogram | None = None,
) -> AsgiOutbox:
    """The outbox of a connection through plain ASGI messages (any other server)."""
    return AsgiOutbox(send, close, encoding, latency, send_each)


async def drain_socket(outbox: SocketOutbox, wake: asyncio.Event) -> None:
    """Each time `wake` is set: write the queue, waiting while the socket is paused; then
    the close, once decided."""
    socket = outbox.socket
    while True:
        await wake.wait()
        wake.clear()
        while outbox.queue:
            if not outbox.write_ready():
                await socket.drained()
        goodbye = outbox.goodbye
        if goodbye is not None:
            with contextlib.suppress(Exception):
                socket.close(*goodbye)
            return


async def send_each(outbox: AsgiOutbox, wake: asyncio.Event) -> None:
    """Each time `wake` is set: send the queue frame by frame; then the close, once
    decided."""
    latency = outbox.latency
    while True:
        await wake.wait()
        wake.clear()
        while (queued := outbox.next_frame()) is not None:
            frame, produced = queued
            await outbox.send(frame)
            if produced and latency is not None:
                latency.observe(time.monotonic() - produced)
        goodbye = outbox.goodbye
        if goodbye is not None:
            with contextlib.suppress(Exception):
                await outbox.close_socket(*goodbye)
            return
