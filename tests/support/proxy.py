"""A TCP proxy on loopback that injects real network faults: cuts and black holes.

- `cut()` drops every open connection at once, with no close handshake: both ends learn
  at once, as after a reset.
- `black_hole()` tells nobody: the proxy keeps every socket open and accepts new ones but
  moves no byte in either direction, like a path that drops every packet while both hosts
  stay up. `restore()` lets the held bytes through in order, as TCP's retransmissions would
  once the path heals. A client that gave up on a connection meanwhile closes it, and the
  proxy closes the other side.

It runs its own event loop in a thread, so the test's loop and the processes under test
see only a real socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator

from tests.support.servers import free_port


class FaultyProxy:
    """Forwards 127.0.0.1:`port` to 127.0.0.1:`target` in a thread of its own."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.port = free_port()
        self.cuts = 0
        self._loop = asyncio.new_event_loop()
        self._writers: set[asyncio.StreamWriter] = set()
        """The open connections' two sides (what `cut()` drops)."""
        self._opened: list[asyncio.StreamWriter] = []
        """Every side ever opened: closed, all of them, before the loop is."""
        self._flowing = asyncio.Event()
        """Set while bytes flow; clear while the path is a black hole."""
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def url(self) -> str:
        """The proxied dicehall server's WebSocket URL."""
        return f"ws://127.0.0.1:{self.port}/ws"

    def redis_url(self, db: int = 0) -> str:
        """The proxied Redis's URL."""
        return f"redis://127.0.0.1:{self.port}/{db}"

    def cut(self) -> None:
        """Drop every open connection at once (no close handshake: like a network failure)."""

        def abort() -> None:
            for w in list(self._writers):
                w.transport.abort()
            self.cuts += 1

        self._loop.call_soon_threadsafe(abort)

    def black_hole(self) -> None:
        self._call(self._flowing.clear)

    def restore(self) -> None:
        self._call(self._flowing.set)

    def _call(self, fn: Callable[[], None]) -> None:
        """Run `fn` in the proxy's loop and return once it ran."""
        done = threading.Event()

        def run() -> None:
            fn()
            done.set()

        self._loop.call_soon_threadsafe(run)
        done.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._flowing.set()
        try:
            server = self._loop.run_until_complete(
                asyncio.start_server(self._handle, "127.0.0.1", self.port)
            )
            self._ready.set()
            try:
                self._loop.run_forever()
            finally:
                self._loop.run_until_complete(self._shut(server))
        finally:
            asyncio.set_event_loop(None)
            self._loop.close()

    async def _shut(self, server: asyncio.Server) -> None:
        """Stop listening, drop every connection and end every piping task, so that the
        loop closes with nothing left open."""
        server.close()
        for w in self._opened:
            w.transport.abort()
        self._flowing.set()  # (a pipe holding bytes goes on, to find its connection gone)
        tasks = asyncio.all_tasks() - {asyncio.current_task()}
        if tasks:
            # Each ends by itself now. (Not cancelled: asyncio 3.11 logs a cancelled
            # connection handler as an error.)
            _, stuck = await asyncio.wait(tasks, timeout=10)
            for task in stuck:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(w.wait_closed() for w in self._opened), return_exceptions=True)
        await server.wait_closed()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Copy bytes while the path is open; hold them (read, not passed on) while it is a
        black hole. Closes the other side when this one ends."""
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await reader.read(65536):
                await self._flowing.wait()
                writer.write(data)
                await writer.drain()
        writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        self._opened.append(writer)
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:  # the target is down: the client learns it as a closed connection
            writer.transport.abort()
            self._writers.discard(writer)
            return
        self._writers.add(up_writer)
        self._opened.append(up_writer)
        # (each pipe closes the other side when it ends; `_shut` aborts what is still open)
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        self._writers -= {writer, up_writer}


@contextlib.contextmanager
def faulty_proxy(target: int) -> Iterator[FaultyProxy]:
    proxy = FaultyProxy(target)
    proxy._thread.start()
    proxy._ready.wait(10)
    try:
        yield proxy
    finally:
        proxy._loop.call_soon_threadsafe(proxy._loop.stop)
        proxy._thread.join(10)
