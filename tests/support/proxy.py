"""A TCP proxy on loopback whose connections a test can cut: a dropped network, for real."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

from tests.support.servers import free_port


class CuttableProxy:
    """Forwards 127.0.0.1:`port` to 127.0.0.1:`target` in a thread of its own."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.port = free_port()
        self.cuts = 0
        self._loop = asyncio.new_event_loop()
        self._writers: set[asyncio.StreamWriter] = set()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", self.port)
        )
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        self._writers |= {writer, up_writer}
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        self._writers -= {writer, up_writer}

    def cut(self) -> None:
        """Drop every open connection at once (no close handshake: like a network failure)."""

        def abort() -> None:
            for w in list(self._writers):
                w.transport.abort()
            self.cuts += 1

        self._loop.call_soon_threadsafe(abort)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"


@contextlib.contextmanager
def cuttable_proxy(target: int) -> Iterator[CuttableProxy]:
    proxy = CuttableProxy(target)
    proxy._thread.start()
    proxy._ready.wait(10)
    try:
        yield proxy
    finally:
        proxy._loop.call_soon_threadsafe(proxy._loop.stop)
        proxy._thread.join(10)
