"""A peer's writer task: what a turn's flush cannot write at once goes out from here.

Two cases only (server/peer.py): a paused socket (the client reads slowly: wait until it
drains, then write everything queued meanwhile, still bounded by the queue's limits) and
a server without dicehall's own WebSocket protocol (one ASGI message per frame); and then
the close the protocol decided on. A coroutine, so it stays Python in a compiled build
(server/compiled.py says why), while the peer, which every delivery goes through, may
compile.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from dicehall.protocol.codec import Frame

if TYPE_CHECKING:
    from .peer import Peer

SendFrame = Callable[[Frame], Awaitable[None]]
CloseSocket = Callable[[int, str], Awaitable[None]]


async def write_loop(peer: Peer, send: SendFrame, close: CloseSocket, wake: asyncio.Event) -> None:
    """Drain `peer`'s queue each time `wake` is set, until its close is reached."""
    latency = peer.fanout_latency
    socket = peer.socket
    while True:
        await wake.wait()
        wake.clear()
        while socket is not None and peer.pending:
            if not peer.write_ready(socket):
                await socket.drained()
        while (queued := peer.next_frame()) is not None:
            frame, produced = queued
            await send(frame)
            if produced and latency is not None:
                latency.observe(time.monotonic() - produced)
        goodbye = peer.goodbye
        if goodbye is not None:
            with contextlib.suppress(Exception):
                await close(int(goodbye.code), goodbye.reason)
            return
