"""A lean Redis connection for what every turn window does: pipelined commands and pub/sub.

Why not redis-py here: through it one command costs the sending process 110-150 µs of CPU
(connection pool, retry wrapper, packing in Python), its pool of 100 connections runs out
under a few hundred busy rooms, and its pub/sub reader is a polling loop
(docs/benchmarks/journal.md, "Redis hop"). Here everything sent during one turn of the event
loop leaves in one write on one connection, replies are matched to their callers in order
(Redis answers a connection's commands in order), hiredis parses, and pub/sub messages are
handed to a callback as they are parsed, without a task each. A command nobody waits for
(`send`) goes out with CLIENT REPLY SKIP: on a VM, a process woken by a reply it has no use
for pays about as much as for a whole delivered message.

Errors are redis-py's exception classes, so callers treat both clients alike. A lost
connection fails the commands in flight with `ConnectionError` (they may or may not have
run: the backend's writes are idempotent or deduplicated) and the next command reconnects.
Standalone Redis only (a cluster routes by slot, which redis-py's cluster client does): one
address, or the primary that Sentinel names, asked again on every connect (sentinel.py).
A READONLY error reply means the primary was demoted: the connection is given up like a
lost one, and the next finds the new primary. TLS is as the URL sets it (urls.py).

A network can also lose a connection without telling either end (a black hole: a path
that drops every packet, a peer that froze). So every connection has a reply deadline:
while a reply is awaited and nothing has been heard for `reply_timeout` seconds, the
connection is given up (its commands fail with `ConnectionError`, the next reconnects).
One timer per connection checks it, not one per command. TCP keepalive catches a dead
peer on an idle connection; `ping` lets the owner of a connection make it not idle.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import socket
from collections import deque

import hiredis
from redis.exceptions import ConnectionError, ResponseError

from .resptypes import Arg, Reply, pack
from .sentinel import Sentinels
from .urls import RedisUrl, parse_redis_url

log = logging.getLogger("dicehall.redis")


PUSHES = frozenset((b"message", b"subscribe", b"unsubscribe"))
"""Replies a subscribed connection gets that no command of ours waits for in order."""

_SKIP = pack(("CLIENT", "REPLY", "SKIP"))
_SKIP_REFUSED = "'client|reply'"
"""In the error Redis answers CLIENT REPLY with once an ACL forbids it."""


KEEPALIVE = (("TCP_KEEPIDLE", 5), ("TCP_KEEPINTVL", 2), ("TCP_KEEPCNT", 3))
"""A silent peer is given up after about 5 + 2 x 3 seconds of an idle connection."""


def keepalive_options() -> dict[int, int]:
    """TCP keepalive timings, as socket options (those this platform has)."""
    return {
        option: value
        for name, value in KEEPALIVE
        if (option := getattr(socket, name, None)) is not None
    }


def _keep_alive(sock: socket.socket) -> None:
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for option, value in keepalive_options().items():
        sock.setsockopt(socket.IPPROTO_TCP, option, value)


class Script:
    """A Lua script run by its SHA1 (EVALSHA), loaded again when Redis has forgotten it."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()


class RespClient(asyncio.Protocol):
    """One connection to a standalone Redis; `execute` pipelines, `close` ends it."""

    _loop: asyncio.AbstractEventLoop
    """Set when connecting, and kept (docs/contributing.md, "Hot paths")."""

    def __init__(
        self, url: str | RedisUrl, connect_timeout: float = 2.0, reply_timeout: float = 1.0
    ) -> None:
        target = parse_redis_url(url) if isinstance(url, str) else url
        self._host = target.host
        self._port = target.port
        self._path = target.path
        self._ssl = target.ssl_context
        """The URL's TLS settings (urls.py), or None for plain TCP."""
        self._db = target.db
        self._auth = target.auth
        self._sentinels = Sentinels(target, reply_timeout) if target.sentinel else None
        """Ask these where the primary is, on every connect (sentinel.py)."""
        self._connect_timeout = connect_timeout
        if target.sentinel:  # each sentinel may take `reply_timeout` before the next
            self._connect_timeout += reply_timeout * len(target.sentinels)
        self._reply_timeout = reply_timeout
        self._heard = 0.0
        """Loop time of the last bytes from Redis, or of the first command sent after a
        silence: with a reply awaited, a connection silent since longer is given up."""
        self._watchdog: asyncio.TimerHandle | None = None
        self._transport: asyncio.Transport | None = None
        self._gone: asyncio.Future[None] | None = None
        """Done once the transport's connection is lost (its socket closed)."""
        self._ready = False
        """Connected and set up (AUTH, SELECT): before that only `_open` may send."""
        self._reader = self._new_reader()
        self._waiters: deque[asyncio.Future[Reply]] = deque()
        self._out: list[bytes] = []
        self._connecting: asyncio.Future[None] | None = None
        self._closed = False
        self._skips = False
        """Redis lets this connection skip replies (CLIENT REPLY): asked on each connect,
        since an ACL or a Redis-like server may refuse it."""

    @staticmethod
    def _new_reader() -> hiredis.Reader:
        return hiredis.Reader(replyError=ResponseError)

    # --- commands -------------------------------------------------------------------------

    async def execute(self, *args: Arg) -> Reply:
        """Send one command (with whatever else this turn of the loop sends) and await its
        reply; a server error reply raises `ResponseError`, a lost connection
        `ConnectionError`."""
        if not self._ready:
            await self._connect()
        return await self._send(pack(args))

    async def send(self, *args: Arg) -> None:
        """Send one command and have Redis skip its reply (CLIENT REPLY SKIP), so that no
        reply wakes this process for it. Nothing tells whether it ran: only for what the
        protocol sends again when it goes missing. (Where replies cannot be skipped, the
        reply is awaited.)"""
        if not self._ready:
            await self._connect()
        if not self._skips:
            await self._send(pack(args))
            return
        if self._transport is None:
            raise ConnectionError("not connected to Redis")
        self._queue(_SKIP + pack(args))

    async def ping(self) -> None:
        """A round trip: raises `ConnectionError` if Redis does not answer in time."""
        await self.execute("PING")

    async def script(self, script: Script, keys: list[str], args: list[Arg]) -> Reply:
        try:
            return await self.execute("EVALSHA", script.sha, len(keys), *keys, *args)
        except ResponseError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
        return await self.execute("EVAL", script.source, len(keys), *keys, *args)

    def _send(self, command: bytes) -> asyncio.Future[Reply]:
        if self._transport is None:
            raise ConnectionError("not connected to Redis")
        fut = self._loop.create_future()
        if not self._awaiting():
            self._heard = self._loop.time()  # the deadline counts from now
        self._waiters.append(fut)
        self._queue(command)
        return fut

    def _queue(self, command: bytes) -> None:
        """To be written at the end of this turn of the event loop, with the others."""
        if not self._out:
            self._loop.call_soon(self._flush)
        self._out.append(command)

    def _flush(self) -> None:
        out, self._out = self._out, []
        if self._transport is not None and out:
            self._transport.write(b"".join(out))

    # --- the connection -------------------------------------------------------------------

    async def _connect(self) -> None:
        """Open the connection once for every caller waiting on it; raise if Redis is away."""
        if self._closed:
            raise ConnectionError("the Redis connection is closed")
        if self._connecting is None:
            self._connecting = asyncio.get_running_loop().create_future()
            connecting = self._connecting
            try:
                async with asyncio.timeout(self._connect_timeout):
                    await self._open()
            except BaseException as exc:
                # (cancelled too: whoever waits for this connection must not wait forever)
                if self._transport is not None:
                    self._transport.abort()
                self._transport = None
                error = ConnectionError(f"cannot reach Redis: {exc or type(exc).__name__}")
                connecting.set_exception(error)
                connecting.exception()  # seen here; waiters raise their own copy
                if isinstance(exc, OSError | TimeoutError | ResponseError | ConnectionError):
                    raise error from exc
                raise
            finally:
                self._connecting = None
            self._ready = self._transport is not None  # (it may have dropped already)
            connecting.set_result(None)
            return
        await asyncio.shield(self._connecting)

    async def _open(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        if self._path is not None:
            await loop.create_unix_connection(lambda: self, self._path)
        else:
            host, port = self._host, self._port
            if self._sentinels is not None:
                host, port = await self._sentinels.primary()
            await loop.create_connection(lambda: self, host, port, ssl=self._ssl)
        if self._auth:
            await self._send(pack(("AUTH", *self._auth)))
        if self._db:
            await self._send(pack(("SELECT", self._db)))
        try:
            await self._send(pack(("CLIENT", "REPLY", "ON")))
            self._skips = True
        except ResponseError:
            self._skips = False
        if self._sentinels is not None:
            await self._check_primary()
        await self._opened()

    async def _check_primary(self) -> None:
        """The node a sentinel named is a primary: one that has not heard of a failover
        yet may name the old one, back as a replica. (Where an ACL forbids ROLE, an
        admin command, the READONLY answer to a write gives the connection up instead.)"""
        try:
            role = await self._send(pack(("ROLE",)))
        except ResponseError:
            return
        kind = role[0] if isinstance(role, list) and role else role
        if kind != b"master":
            name = kind.decode() if isinstance(kind, bytes) else repr(kind)
            raise ConnectionError(f"the node Sentinel named is a {name} now")

    async def _opened(self) -> None:
        """Hook: more set-up on a fresh connection (a subscriber subscribes again)."""

    def _awaiting(self) -> bool:
        """Something sent waits for Redis's answer."""
        return bool(self._waiters)

    def _watch(self) -> None:
        """Give the connection up when a reply is overdue: it may be a black hole."""
        transport = self._transport
        if transport is None:
            return
        silent = self._loop.time() - self._heard
        if self._awaiting() and silent > self._reply_timeout:
            log.warning("redis: no answer for %.1f s; reconnecting", silent)
            self._abandon(transport, f"no answer from Redis for {silent:.1f} s")
            return
        self._watchdog = self._loop.call_later(self._reply_timeout / 4, self._watch)

    def _abandon(self, transport: asyncio.Transport, why: str) -> None:
        """Fail what is in flight now, and drop the connection without a goodbye."""
        self._lose(ConnectionError(why))
        transport.abort()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]  # (uvloop's is no subclass)
        self._gone = self._loop.create_future()
        self._reader = self._new_reader()
        self._skips = False  # until asked
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            _keep_alive(sock)
        self._heard = self._loop.time()
        self._watchdog = self._loop.call_later(self._reply_timeout / 4, self._watch)

    def data_received(self, data: bytes) -> None:
        self._heard = self._loop.time()
        reader = self._reader
        reader.feed(data)
        while (reply := reader.gets()) is not False:
            self._reply(reply)
            if self._transport is None:
                return  # given up (see `_reply`): what follows matches nothing

    def _reply(self, reply: Reply | ResponseError) -> None:
        if type(reply) is ResponseError and self._gives_up(reply):
            return
        fut = self._waiters.popleft()
        if fut.done():
            return
        if isinstance(reply, ResponseError):
            fut.set_exception(reply)
        else:
            fut.set_result(reply)

    def _gives_up(self, error: ResponseError) -> bool:
        """An error reply that means this connection cannot go on: then it is given up
        (what is in flight fails with `ConnectionError`, the next command reconnects)."""
        text = str(error)
        if self._skips and _SKIP_REFUSED in text:
            # CLIENT REPLY SKIP was refused after the connection was allowed it (an ACL
            # changed): the skipped reply came after all, and the replies no longer match
            # their callers. Start again; the next connection asks again.
            why = "Redis refused CLIENT REPLY"
        elif text.startswith("READONLY"):
            # The primary was demoted (a failover): the next connection finds the new
            # one, through the sentinels or whatever the URL's name points to now.
            why = "Redis is a read-only replica now"
        else:
            return False
        log.warning("redis: %s; reconnecting", error)
        if self._transport is not None:
            self._abandon(self._transport, why)
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self._lose(exc)
        gone, self._gone = self._gone, None
        if gone is not None and not gone.done():
            gone.set_result(None)

    def _lose(self, exc: Exception | None) -> None:
        """Fail what is in flight. (Twice for an abandoned connection: by `_abandon`, then
        when the transport tells `connection_lost`.)"""
        self._transport = None
        self._ready = False
        self._out.clear()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        waiters, self._waiters = self._waiters, deque()
        for fut in waiters:
            if not fut.done():
                fut.set_exception(ConnectionError(f"Redis connection lost: {exc or 'closed'}"))
                fut.exception()  # the caller may have gone (cancelled): never "not retrieved"

    async def close(self) -> None:
        """Close the connection; returns once it is closed, socket and all (a TLS goodbye
        that Redis does not answer within `reply_timeout` is cut short)."""
        self._closed = True
        transport, gone = self._transport, self._gone
        if transport is not None:
            transport.close()
        if gone is None:
            return
        try:
            async with asyncio.timeout(self._reply_timeout):
                await asyncio.shield(gone)
        except TimeoutError:
            if transport is not None:
                transport.abort()
            await gone
