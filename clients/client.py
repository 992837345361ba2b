"""The Python client library: one logical connection to a dicehall server, kept alive.

`Client` speaks the protocol through `protocol.ClientConnection` (request ids, replies
matched to requests, typed results, duplicate room messages dropped, gaps detected) over a
`websockets` socket, and adds what a real network needs:

- requests are paced to the server's announced `rate` and `burst`, so a busy bot is never
  refused with `rate-limited`;
- an application `ping` every `heartbeat_ms`, so an idle but live client is not closed;
- when the socket drops (or the server says goodbye with 1001 and `retry_ms`), it
  reconnects with backoff to the next URL, sends `hello` with every seat token it holds
  (and its player key), then `resume`s each room from the last `seq` it delivered. The
  consumer of `messages()` sees one stream per room with no gap and no duplicate (a
  `Snapshot` where the server says the missed messages are gone).

A request that was in flight when the socket dropped fails with `ConnectionLost`: it may or
may not have been applied, so it is never resent behind the caller's back (an `act` is not
idempotent). Errors the server answers with are raised as the catalogue's exception
(`dicehall.protocol.errors`, e.g. `NoSuchRoomError`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any, Final, TypeVar
from urllib.parse import urlsplit, urlunsplit

import msgspec
from websockets.asyncio.client import ClientConnection as WebSocket
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, WebSocketException
from websockets.typing import Subprotocol

from dicehall.protocol import errors, names
from dicehall.protocol.client_connection import ClientConnection, Gap, Response
from dicehall.protocol.close import CloseCode
from dicehall.protocol.features import IDENTITY, LOBBY_PAGES
from dicehall.protocol.limits import MAX_TOKENS, Limits, ReaderLimits
from dicehall.protocol.messages import client as requests
from dicehall.protocol.messages import results
from dicehall.protocol.messages.common import Action, GameInfo, RoomInfo
from dicehall.protocol.messages.server import (
    ErrorMessage,
    GameOver,
    Goodbye,
    Progress,
    RoomMessage,
    RoomUpdate,
    Snapshot,
    TurnWindow,
    Welcome,
    Window,
    WindowClosed,
)
from dicehall.protocol.subprotocols import Encoding, subprotocol

log = logging.getLogger("dicehall.client")

PROGRAM: Final = "dicehall-py/0.1.0"

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

_RATE_LIMIT_RETRIES = 3
_PROTOCOL_ERROR_CLOSE = 1002
"""RFC 6455: the client closes with this when the server broke the protocol."""

ResultT = TypeVar("ResultT", bound=results.Result)


# --- errors ---------------------------------------------------------------------------------


class ClientError(Exception):
    """A failure on the client's side of the connection (the server's errors are
    `dicehall.protocol.errors.ProtocolError`s)."""


class ConnectError(ClientError):
    """No URL could be connected to (at `connect()`, or a reconnect gave up)."""


class ConnectionLost(ClientError):
    """The socket dropped while this request was in flight: it may or may not have been
    applied. The client reconnects by itself; look at the room's messages (or ask `legal`)
    before deciding again."""


class _Unsent(ConnectionLost):
    """The wire was already down when this request was to be written: it never left, so
    `request` sends it again on the next wire instead of raising."""


class RequestTimeout(ClientError):
    """No reply within the request's time-out."""


class ClientClosed(ClientError):
    """The client is closed: by `close()`, or by the server with a code after which a
    reconnect would not help (`code`, `reason`)."""

    def __init__(self, message: str, code: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason


# --- what the stream delivers besides room messages -----------------------------------------


@dataclass(frozen=True, slots=True)
class RoomLost:
    """After a reconnect the server would not take this client back into `room` (its seat
    token was refused, or the room is gone): nothing more will arrive for it."""

    room: str
    reason: str


Delivery = RoomMessage | RoomLost
"""What `messages()` yields: the room messages, in seq order per room, and `RoomLost`."""


@dataclass(frozen=True, slots=True)
class Resumed:
    """One catch-up after a reconnect: `room` resumed after `last_seq` up to `seq`."""

    room: str
    last_seq: int
    mode: str
    seq: int


@dataclass(frozen=True, slots=True)
class _End:
    error: BaseException | None


# --- pacing ---------------------------------------------------------------------------------


class Pacer:
    """Keeps the client under the server's token bucket (`rate` per second, `burst`).

    The server measures arrivals, the client departures; arrivals can bunch up after a
    network hiccup, so the client keeps a margin of the burst in reserve.
    """

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = float(rate)
        self.capacity = float(max(1, burst - max(2, burst // 8)))
        self.tokens = self.capacity
        self._last = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self._last) * self.rate)
        self._last = now

    async def take(self) -> None:
        """Wait until one frame may be sent, and count it."""
        while True:
            self._refill()
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return
            await asyncio.sleep((1.0 - self.tokens) / self.rate)

    def refused(self) -> None:
        """The server said `rate-limited` anyway: its bucket is empty, so is ours now."""
        self._refill()
        self.tokens = min(self.tokens, -1.0)


# --- one socket -----------------------------------------------------------------------------


@dataclass(eq=False)
class _Wire:
    """One WebSocket connection and its protocol state; replaced on every reconnect."""

    url: str
    ws: WebSocket
    conn: ClientConnection
    welcome: Welcome
    pacer: Pacer
    send_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    waiters: dict[int, asyncio.Future[Response]] = field(default_factory=dict)
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)
    reader: asyncio.Task[None] | None = None
    goodbye: Goodbye | None = None
    fatal: BaseException | None = None
    closed: bool = False
    successor: asyncio.Future[_Wire | None] | None = None
    """Set while the client moves from this wire to a room's own server: the wire that
    takes over (None: the move failed after this wire was closed; reconnect)."""


def http_url(url: str, path: str = "") -> str:
    """The HTTP(S) address of the server behind WebSocket `url`, plus `path`.

    `ws://host:8000/ws` -> `http://host:8000` + path; a prefix before `/ws` is kept, so a
    server mounted at `wss://example.org/dice/ws` serves `https://example.org/dice/...`.
    """
    parts = urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    base = parts.path[: -len("/ws")] if parts.path.endswith("/ws") else parts.path.rstrip("/")
    return urlunsplit((scheme, parts.netloc, base + path, "", ""))


def _retired(wire: _Wire) -> bool:
    """(A function, so that a type checker reads the attribute anew after an await.)"""
    return wire.closed


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ConnectError):
        return str(exc)
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


class Client:
    """An asyncio dicehall client that reconnects and resumes by itself.

    ```python
    async with Client(["ws://a:8000/ws", "ws://b:8000/ws"], name="Ada") as client:
        room = await client.create("qwixx", seats=2)
        await client.join(room.room)
        async for message in client.messages():
            ...
    ```

    `urls`: the first reachable one is used; reconnects go on to the next. `encoding`:
    MessagePack (default) or JSON. `tokens` (room -> seat token) takes seats back that an
    earlier process held. `backoff` is the first reconnect delay and its cap (seconds);
    reconnecting gives up after `reconnect_timeout` seconds. `request_timeout` bounds the
    wait for each reply (None: wait as long as the connection lives). `features`: the
    optional protocol features to ask for in every `hello` (docs/protocol.md); those the
    server turned on are in `hello.features`. `follow`: move to the server process that
    runs the rooms this client is in when a reply names it (docs/protocol.md, "Following a
    room to its server"), falling back to `urls` when it cannot be reached. `key`: the
    player key to say `hello` with, from an earlier connection's `player` (docs/protocol.md,
    "identity"); without one a server that offers the feature gives a new player, and
    reconnects keep that one. A key the server did not sign is `BadKeyError` from
    `connect()`; at a reconnect (to a server of another deployment, or one that lost its
    secret, where the seats are lost too) the client goes on as a new player there, and
    says so in the log and in `player`.
    """

    def __init__(
        self,
        urls: str | Sequence[str],
        *,
        name: str | None = None,
        encoding: Encoding | str = Encoding.MSGPACK,
        program: str = PROGRAM,
        tokens: Mapping[str, str] | None = None,
        reconnect: bool = True,
        backoff: tuple[float, float] = (0.1, 5.0),
        reconnect_timeout: float = 60.0,
        open_timeout: float = 10.0,
        request_timeout: float | None = 30.0,
        limits: ReaderLimits | None = None,
        features: Sequence[str] = (),
        follow: bool = True,
        key: str | None = None,
    ) -> None:
        self.urls = [urls] if isinstance(urls, str) else list(urls)
        self.features = list(features)
        self.follow = follow
        if not self.urls:
            raise ValueError("give at least one server URL")
        if name is not None:  # (here, rather than the server refusing every hello)
            names.check("name", names.display_name_problem(name))
        self.name = name
        self.encoding = Encoding(encoding)
        self.program = program
        self.reconnect = reconnect
        self.backoff = backoff
        self.reconnect_timeout = reconnect_timeout
        self.open_timeout = open_timeout
        self.request_timeout = request_timeout
        self.limits = limits or ReaderLimits()
        self.hello: results.HelloResult | None = None
        """The reply to the latest `hello`."""
        self.key = key
        """The player key every `hello` sends (the server's `identity` feature): the one
        given, else the one the first `hello` was given."""
        self.goodbye: Goodbye | None = None
        """The latest `goodbye` the server sent."""
        self.reconnects = 0
        self.resumes: list[Resumed] = []
        """Every catch-up after a reconnect, in order."""
        self.rate_limited = 0
        """Requests the server refused with `rate-limited` (and that were sent again)."""
        self.rtt: float | None = None
        """Round trip of the latest heartbeat `ping`, seconds."""
        self.clock_offset_ms: float | None = None
        """Server clock minus client clock, from the latest `ping` (for countdowns)."""
        self.moves = 0
        """Times the client moved to a room's own server."""
        self._owners: dict[str, str | None] = {}
        """Where each room's server takes connections, as the latest reply said."""
        self._followed: str | None = None
        """The server moved to last: reconnects try it first."""
        self._moving: asyncio.Task[None] | None = None
        self._url_index = 0
        self._tokens: dict[str, str] = dict(tokens or {})
        self._seats: dict[str, int] = {}
        self._watching: set[str] = set()
        self._last_seqs: dict[str, int] = {}
        self._turns: dict[str, TurnWindow | None] = {}
        self._infos: dict[str, RoomInfo] = {}
        self._queue: asyncio.Queue[Delivery | _End] = asyncio.Queue()
        self._wire: _Wire | None = None
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._finished = False
        self._error: BaseException | None = None

    # --- lifecycle -------------------------------------------------------------------------

    async def connect(self) -> Client:
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
                failures.append(f"{url}: {_describe(exc)}")
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

    async def __aenter__(self) -> Client:
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        """True while a socket is open and its handshake (and resumes) are done."""
        return self._ready.is_set() and self._wire is not None and not self._finished

    @property
    def url(self) -> str | None:
        """The URL of the current connection."""
        return self._wire.url if self._wire is not None else None

    @property
    def welcome(self) -> Welcome | None:
        return self._wire.welcome if self._wire is not None else None

    @property
    def server_limits(self) -> Limits | None:
        return self._wire.welcome.limits if self._wire is not None else None

    @property
    def player(self) -> results.PlayerIdentity | None:
        """Who this client plays as (`id` public, `key` secret: keep it to be that player
        again), or None when the server does not offer the `identity` feature."""
        hello = self.hello
        if hello is None or isinstance(hello.player, msgspec.UnsetType):
            return None
        return hello.player

    # --- what the client knows about its rooms -----------------------------------------------

    @property
    def tokens(self) -> dict[str, str]:
        """Seat tokens by room: keep them to take the seats back from another process."""
        return dict(self._tokens)

    @property
    def seats(self) -> dict[str, int]:
        return dict(self._seats)

    def last_seq(self, room: str) -> int | None:
        """The seq of the last message delivered for `room`."""
        wire = self._wire
        if wire is not None:
            return wire.conn.last_seq(room)
        return self._last_seqs.get(room)

    def turn(self, room: str) -> TurnWindow | None:
        """The turn window of `room` open as of the latest message received (which may be
        ahead of what the consumer of `messages()` has read); its `actors` are the seats
        still to answer, as far as this client knows (a `snapshot` lists only those, and
        with the `progress` feature each `progress` takes the answered ones off)."""
        return self._turns.get(room)

    def info(self, room: str) -> RoomInfo | None:
        """The latest room info received for `room`."""
        return self._infos.get(room)

    # --- the stream -----------------------------------------------------------------------------

    async def receive(self, timeout: float | None = None) -> Delivery:
        """The next room message (or `RoomLost`); raises `ClientClosed` (or the error that
        ended the client) once the stream is over, `TimeoutError` after `timeout`."""
        async with asyncio.timeout(timeout):
            item = await self._queue.get()
        if isinstance(item, _End):
            self._queue.put_nowait(item)
            if item.error is not None:
                raise item.error
            raise ClientClosed("the client is closed")
        return item

    async def messages(self) -> AsyncIterator[Delivery]:
        """Every room message in order, until `close()` (then it ends) or a fatal error
        (then it raises it)."""
        while True:
            item = await self._queue.get()
            if isinstance(item, _End):
                self._queue.put_nowait(item)
                if item.error is not None:
                    raise item.error
                return
            yield item

    # --- requests ---------------------------------------------------------------------------

    async def request(
        self, message: requests.Request, *, timeout: float | EllipsisType | None = ...
    ) -> results.Result:
        """Send `message` (its `id` is replaced) and return the typed result of its reply.

        Raises the catalogue's `ProtocolError` subclass for an error reply, `ConnectionLost`
        if the socket dropped after the request left, `RequestTimeout`, or `ClientClosed`.
        A request that finds the connection down (even before the client has noticed)
        waits for the reconnect and goes out then.
        """
        wait = self.request_timeout if isinstance(timeout, EllipsisType) else timeout
        attempt = 0
        while True:
            wire = await self._usable_wire()
            try:
                return await self._call(wire, message, wait)
            except _Unsent:
                continue  # the reader has not noticed the drop yet; wait for the next wire
            except errors.RateLimitedError:
                wire.pacer.refused()
                self.rate_limited += 1
                if attempt == _RATE_LIMIT_RETRIES:
                    raise
                attempt += 1

    async def _typed(self, message: requests.Request, kind: type[ResultT]) -> ResultT:
        result = await self.request(message)
        if not isinstance(result, kind):
            raise errors.InvalidMessageError(
                f"expected {kind.__name__}, got {type(result).__name__}"
            )
        return result

    async def games(self) -> list[GameInfo]:
        return (await self._typed(requests.Games(id=0), results.GamesResult)).games

    async def rooms(self, game: str | None = None) -> list[RoomInfo]:
        """Every public room (of `game`), page after page: one reply of them all could
        outgrow any frame limit. A server without `lobby_pages` says one page only."""
        rooms: list[RoomInfo] = []
        cursor: str | None = None
        while True:
            page = await self.rooms_page(game, cursor=cursor)
            rooms += page.rooms
            if page.next is None or page.next == cursor or not page.rooms or not self.pages:
                return rooms
            cursor = page.next

    async def rooms_page(
        self, game: str | None = None, *, limit: int | None = None, cursor: str | None = None
    ) -> results.RoomsResult:
        """One page of the public rooms (of `game`): at most `limit` (None: as many as the
        server says in one), from `cursor` (the `next` of the page before; None: the first).
        `limit` and `cursor` need a server that offers `lobby_pages` (`pages`)."""
        request = requests.Rooms(id=0, game=game, limit=limit, cursor=cursor)
        return await self._typed(request, results.RoomsResult)

    @property
    def pages(self) -> bool:
        """The server pages the lobby on request (the `lobby_pages` feature is on)."""
        return self.hello is not None and LOBBY_PAGES in self.hello.features

    async def create(
        self,
        game: str,
        seats: int,
        *,
        options: Mapping[str, bool | int | str] | None = None,
        preset: str | None = None,
        turn_window: int | None = None,
        public: bool = True,
        name: str | None = None,
        autostart: bool = False,
    ) -> RoomInfo:
        """Create a room; this client is its host (it still has to `join` to sit)."""
        req = requests.Create(
            id=0,
            game=game,
            seats=seats,
            options=dict(options or {}),
            preset=preset,
            turn_window=turn_window,
            public=public,
            name=name,
            autostart=autostart,
        )
        # (no move before it sits: until then the host role is this connection's)
        return (await self._typed(req, results.CreateResult)).room

    async def join(
        self, room: str, seat: int | None = None, name: str | None = None
    ) -> results.JoinResult:
        """Take a seat; its token is kept for reconnects, and a `Snapshot` follows."""
        result = await self._typed(
            requests.Join(id=0, room=room, seat=seat, name=name), results.JoinResult
        )
        self._tokens[result.room] = result.token
        self._seats[result.room] = result.seat
        self._consider(result.room, result.url)
        return result

    async def spectate(self, room: str) -> None:
        result = await self._typed(requests.Spectate(id=0, room=room), results.SpectateResult)
        self._watching.add(room)
        self._consider(room, result.url)

    async def leave(self, room: str) -> None:
        await self._typed(requests.Leave(id=0, room=room), results.Empty)
        self._forget(room)

    async def start(self, room: str) -> str:
        """Start the game (the room's host only: docs/protocol.md, "The host"); returns the
        dice seed's commitment."""
        return (await self._typed(requests.Start(id=0, room=room), results.StartResult)).commitment

    async def add_bots(
        self, room: str, kind: str | None = None, count: int | None = None
    ) -> list[int]:
        """Seat house bots in open seats (the room's host only); returns their seats."""
        req = requests.AddBots(id=0, room=room, kind=kind, count=count)
        return (await self._typed(req, results.AddBotsResult)).seats

    async def legal(self, room: str, *, view: bool = True) -> results.LegalResult:
        """`view=False` needs the feature `legal_without_view` (then `view` is None)."""
        return await self._typed(requests.Legal(id=0, room=room, view=view), results.LegalResult)

    async def act(
        self, room: str, action: Mapping[str, Any] | Action, window: int | None = None
    ) -> results.ActResult:
        """Send a game action for this client's seat; pass the `window` it answers. The
        result's `owes` lists the kinds of action the seat still owes in that window (a
        Yamb turn is several actions)."""
        typed = action if isinstance(action, Action) else msgspec.convert(action, Action)
        return await self._typed(
            requests.Act(id=0, room=room, action=typed, window=window), results.ActResult
        )

    async def chat(self, room: str, text: str) -> int:
        """Say `text` in `room`; returns the seq of the resulting chat message."""
        return (
            await self._typed(requests.SendChat(id=0, room=room, text=text), results.ChatResult)
        ).seq

    async def ping(self) -> results.PingResult:
        return await self._typed(
            requests.Ping(id=0, time=int(time.time() * 1000)), results.PingResult
        )

    # --- one connection ---------------------------------------------------------------------

    async def _open(self, url: str) -> _Wire:
        """Open a socket to `url` and read its `welcome`; raises `ConnectError`."""
        wanted = subprotocol(self.encoding)
        try:
            ws = await ws_connect(
                url,
                subprotocols=[Subprotocol(wanted)],
                compression=None,
                open_timeout=self.open_timeout,
                close_timeout=self.open_timeout,
                max_size=self.limits.max_frame,
                user_agent_header=self.program,
            )
        except (OSError, WebSocketException, TimeoutError) as exc:
            raise ConnectError(_describe(exc)) from exc
        try:
            if ws.subprotocol != wanted:
                with contextlib.suppress(ConnectionClosed, TimeoutError):
                    async with asyncio.timeout(self.open_timeout):
                        await ws.recv()
                raise ConnectError(
                    f"the server did not accept {wanted}: closed {ws.close_code} "
                    f"{ws.close_reason or ''}".rstrip()
                )
            async with asyncio.timeout(self.open_timeout):
                frame = await ws.recv()
            conn = ClientConnection(
                self.encoding, self.limits, first_id=1, last_seqs=self._last_seqs
            )
            conn.receive(frame)
            if conn.welcome is None:
                raise ConnectError("the server's first message was not a welcome")
        except ConnectionClosed:
            await ws.close()
            raise ConnectError(
                f"closed during the handshake: {ws.close_code} {ws.close_reason or ''}".rstrip()
            ) from None
        except TimeoutError:
            await ws.close()
            raise ConnectError(f"no welcome within {self.open_timeout} s") from None
        except errors.ProtocolError as exc:
            await ws.close(_PROTOCOL_ERROR_CLOSE)
            raise ConnectError(f"bad welcome: {exc}") from None
        except BaseException:
            await ws.close()
            raise
        limits = conn.welcome.limits
        return _Wire(url, ws, conn, conn.welcome, Pacer(limits.rate, limits.burst))

    async def _attach(self, wire: _Wire, handover: _Wire | None = None) -> None:
        """Start reading, say `hello` with the seat tokens held, resume every room; only
        then do callers' requests go out on this wire. With `handover` (a move), the seats
        are taken over first and that wire is closed before the rooms resume here."""
        loop = asyncio.get_running_loop()
        wire.reader = loop.create_task(self._read(wire), name=f"dicehall-read {wire.url}")
        try:
            rooms = list(self._tokens)
            for room in rooms[:-MAX_TOKENS]:
                self._lose(room, "more seat tokens than one hello may carry")
            rooms = rooms[-MAX_TOKENS:]
            offered = wire.welcome.features
            identity = IDENTITY in offered  # (an older server refuses `key`)
            # (whenever offered: reconnects stay one player, and `rooms()` walks every page)
            always = (IDENTITY, LOBBY_PAGES)
            features = [f for f in self.features if f not in always]
            features += [f for f in always if f in offered]
            hello = requests.Hello(
                id=0,
                client=self.program,
                name=self.name,
                tokens=[self._tokens[r] for r in rooms],
                features=features,
                key=self.key if identity else None,
            )
            try:
                result = await self._call(wire, hello, self.open_timeout)
            except errors.BadKeyError:
                if self.hello is None:
                    raise  # (at `connect()`: the caller's key, the caller's to see)
                log.warning("%s does not know this player: going on as a new one", wire.url)
                hello = msgspec.structs.replace(hello, key=None)  # (hello may come again)
                result = await self._call(wire, hello, self.open_timeout)
            assert isinstance(result, results.HelloResult)
            self.hello = result
            if not isinstance(result.player, msgspec.UnsetType):
                self.key = result.player.key  # (reconnects are the same player)
            for index in result.rejected:
                self._lose(rooms[index], "the server refused the seat token")
            if handover is not None:
                await self._retire(handover)
                wire.conn.adopt(handover.conn.last_seqs)
            for held in result.seats:
                self._seats[held.room] = held.seat
                await self._resume(wire, held.room)
            for room in sorted(self._watching):
                try:
                    await self._call(wire, requests.Spectate(id=0, room=room), self.open_timeout)
                except errors.ProtocolError as exc:
                    self._lose(room, str(exc))
        except BaseException:
            await self._drop(wire)
            raise
        heartbeat = loop.create_task(self._heartbeat(wire), name="dicehall-heartbeat")
        wire.tasks.append(heartbeat)
        self._wire = wire
        self._ready.set()

    async def _resume(self, wire: _Wire, room: str) -> None:
        last = wire.conn.last_seq(room) or 0
        try:
            resume = requests.Resume(id=0, room=room, last_seq=last)
            result = await self._call(wire, resume, self.open_timeout)
        except errors.ProtocolError as exc:
            self._lose(room, str(exc))
            return
        assert isinstance(result, results.ResumeResult)
        self.resumes.append(Resumed(room, last, result.mode, result.seq))
        log.info("resumed %s after seq %d: %s up to %d", room, last, result.mode, result.seq)
        self._consider(room, result.url)

    # --- following rooms to their server ---------------------------------------------------

    def _consider(self, room: str, url: str | None) -> None:
        """A reply said where `room` is run: move there if every room this client is in
        is run there too."""
        self._owners[room] = url
        wire = self._wire
        if not self.follow or url is None or (wire is not None and wire.url == url):
            return
        rooms = set(self._tokens) | self._watching
        if any(self._owners.get(r) != url for r in rooms):
            return  # rooms elsewhere too: stay, the server forwards
        if self._moving is None or self._moving.done():
            self._moving = asyncio.get_running_loop().create_task(
                self._move(url), name=f"dicehall-move {url}"
            )

    async def _move(self, url: str) -> None:
        """Open a wire to `url`, take the seats over there, close the old wire, resume
        there. If `url` cannot be reached the client stays where it is."""
        await self._ready.wait()  # (after a reconnect's resumes, or a move, has finished)
        old = self._wire
        if old is None or old.closed or old.url == url or self._closing:
            return
        try:
            new = await self._open(url)
        except ConnectError as exc:
            log.warning("staying on %s: %s", old.url, exc)
            return
        self._ready.clear()  # new requests wait for the new wire
        if old.waiters:  # those already sent are answered on the old one
            await asyncio.wait(list(old.waiters.values()), timeout=self.open_timeout)
        successor: asyncio.Future[_Wire | None] = asyncio.get_running_loop().create_future()
        old.successor = successor
        try:
            await self._attach(new, handover=old)
        except (ClientError, errors.ProtocolError) as exc:
            log.warning("could not move to %s: %s", url, _describe(exc))
            if old.successor is successor and _retired(old):
                successor.set_result(None)  # half way: the supervisor reconnects
            else:
                old.successor = None
                self._ready.set()
            return
        self.moves += 1
        self._followed = url
        log.info("moved to %s, where the rooms are run", url)
        successor.set_result(new)

    async def _retire(self, wire: _Wire) -> None:
        """Close a wire that hands over to another: its reader ends by itself."""
        self._mark_closed(wire)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(self.open_timeout):
                await wire.ws.close()
        if wire.reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(wire.reader), self.open_timeout)

    async def _drop(self, wire: _Wire) -> None:
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

    def _mark_closed(self, wire: _Wire) -> None:
        """Nothing more goes out on `wire`; new requests wait for the reconnect."""
        wire.closed = True
        if self._wire is wire:
            self._ready.clear()

    def _fail_waiters(self, wire: _Wire) -> None:
        for rid, fut in list(wire.waiters.items()):
            if not fut.done():
                fut.set_exception(
                    ConnectionLost(f"the connection to {wire.url} dropped before reply {rid}")
                )
        wire.waiters.clear()

    async def _call(
        self, wire: _Wire, message: requests.Request, timeout: float | None
    ) -> results.Result:
        async with wire.send_lock:  # ids must reach the socket in the order they are given
            await wire.pacer.take()
            if wire.closed:
                raise _Unsent(f"the connection to {wire.url} dropped")
            numbered, frame = wire.conn.request(message)
            fut: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
            wire.waiters[numbered.id] = fut
            try:
                await wire.ws.send(frame)
            except ConnectionClosed:
                wire.waiters.pop(numbered.id, None)
                self._mark_closed(wire)
                raise _Unsent(f"the connection to {wire.url} dropped") from None
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

    async def _read(self, wire: _Wire) -> None:
        """Route every frame: replies to their waiters, room messages to the stream."""
        try:
            async for frame in wire.ws:
                try:
                    incoming = wire.conn.receive(frame)
                except errors.ProtocolError as exc:
                    wire.fatal = exc
                    break
                for item in incoming:
                    self._dispatch(wire, item)
                if wire.fatal is not None:
                    break
        except ConnectionClosed:
            pass
        if wire.fatal is not None:
            log.error("closing %s: %s", wire.url, wire.fatal)
            with contextlib.suppress(Exception):
                await wire.ws.close(_PROTOCOL_ERROR_CLOSE, "protocol error")
        self._mark_closed(wire)
        self._fail_waiters(wire)

    def _dispatch(self, wire: _Wire, item: object) -> None:
        if isinstance(item, Response):
            fut = wire.waiters.pop(item.request.id, None)
            if fut is not None and not fut.done():
                fut.set_result(item)
        elif isinstance(item, RoomMessage):
            self._track(item)
            self._queue.put_nowait(item)
        elif isinstance(item, Gap):
            log.warning("room %s: missed messages after %d; resuming", item.room, item.last_seq)
            task = asyncio.get_running_loop().create_task(self._resume(wire, item.room))
            wire.tasks.append(task)
        elif isinstance(item, Goodbye):
            wire.goodbye = self.goodbye = item
        elif isinstance(item, ErrorMessage):
            wire.fatal = errors.from_body(item.error)

    def _track(self, message: RoomMessage) -> None:
        room = message.room
        if isinstance(message, Window):
            self._turns[room] = TurnWindow(
                window=message.window, deadline=message.deadline, actors=message.actors
            )
        elif isinstance(message, WindowClosed):
            turn = self._turns.get(room)
            if turn is not None and turn.window == message.window:
                self._turns[room] = None
        elif isinstance(message, Snapshot):
            self._turns[room] = message.turn
            self._infos[room] = message.info
        elif isinstance(message, GameOver):
            self._turns[room] = None
        elif isinstance(message, RoomUpdate):
            self._infos[room] = message.info
        elif isinstance(message, Progress):
            turn = self._turns.get(room)
            if turn is not None and turn.window == message.window:
                actors = [a for a in turn.actors if a.seat not in message.answered]
                self._turns[room] = msgspec.structs.replace(turn, actors=actors)

    async def _heartbeat(self, wire: _Wire) -> None:
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

    # --- staying connected ----------------------------------------------------------------

    async def _supervise(self, wire: _Wire) -> None:
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

    def _after_drop(self, wire: _Wire) -> float | BaseException | None:
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

    async def _reconnect(self, delay: float) -> _Wire:
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
                failures.append(f"{url}: {_describe(exc)}")
                log.warning("reconnect to %s failed: %s", url, _describe(exc))
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

    async def _usable_wire(self) -> _Wire:
        while True:
            if self._finished:
                raise self._error or ClientClosed("the client is closed")
            if self._task is None:
                raise ClientError("not connected: call connect() first")
            wire = self._wire
            if wire is not None and self._ready.is_set() and not wire.closed:
                return wire
            self._ready.clear()  # no usable wire: wait for the supervisor to attach one
            await self._ready.wait()

    def _lose(self, room: str, reason: str) -> None:
        self._forget(room)
        self._queue.put_nowait(RoomLost(room, reason))
        log.warning("lost room %s: %s", room, reason)

    def _forget(self, room: str) -> None:
        self._owners.pop(room, None)
        self._tokens.pop(room, None)
        self._seats.pop(room, None)
        self._watching.discard(room)
        self._last_seqs.pop(room, None)
        self._turns.pop(room, None)
        self._infos.pop(room, None)
        if self._wire is not None:
            self._wire.conn.forget(room)

    def _finish(self, error: BaseException | None) -> None:
        """The end: the stream ends (or raises `error`), waiting requests fail."""
        if not self._finished:
            self._finished = True
            self._error = error
            self._queue.put_nowait(_End(error))
        self._wire = None
        self._ready.set()
