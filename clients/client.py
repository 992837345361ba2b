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
  `Snapshot` where the server says the missed messages are gone). With the feature
  `epochs` (asked for whenever offered) a `resume` says the room's epoch too.

A `Snapshot` may also come unasked, with a seq at or below the last one delivered: a
failover took the room back to an earlier point (docs/protocol.md, "Epochs"). It replaces
everything the client knew of the room (its last seq included) and the messages delivered
after its seq never happened: a consumer redraws from it as from any snapshot, and the
messages that follow continue from its seq.

A request that was in flight when the socket dropped fails with `ConnectionLost`: it may or
may not have been applied, so it is never resent behind the caller's back (an `act` is not
idempotent). Errors the server answers with are raised as the catalogue's exception
(`dicehall.protocol.errors`, e.g. `NoSuchRoomError`).

This module is the public face (requests, the stream, what the client knows); the
machinery beneath is layered one module per job, each class built on the one before:
`client_state` (what the client holds), `client_calls` (requests on one wire),
`client_link` (a wire made the client's: hello, resumes, moves), `client_keeper`
(connecting and reconnecting). Import everything from here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from types import EllipsisType
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import msgspec

from dicehall.protocol import errors
from dicehall.protocol.features import LOBBY_PAGES
from dicehall.protocol.limits import Limits
from dicehall.protocol.messages import client as requests
from dicehall.protocol.messages import results
from dicehall.protocol.messages.common import Action, GameInfo, RoomInfo
from dicehall.protocol.messages.server import TurnWindow, Welcome

from .client_errors import (
    ClientClosed,
    ClientError,
    ConnectError,
    ConnectionLost,
    RequestTimeout,
    Unsent,
)
from .client_keeper import FATAL_CLOSE_CODES, Keeper
from .client_pacer import Pacer
from .client_state import PROGRAM
from .client_stream import Delivery, End, Resumed, RoomLost

__all__ = [
    "FATAL_CLOSE_CODES",
    "PROGRAM",
    "Client",
    "ClientClosed",
    "ClientError",
    "ConnectError",
    "ConnectionLost",
    "Delivery",
    "Pacer",
    "RequestTimeout",
    "Resumed",
    "RoomLost",
    "http_url",
]

_RATE_LIMIT_RETRIES = 3

ResultT = TypeVar("ResultT", bound=results.Result)


def http_url(url: str, path: str = "") -> str:
    """The HTTP(S) address of the server behind WebSocket `url`, plus `path`.

    `ws://host:8000/ws` -> `http://host:8000` + path; a prefix before `/ws` is kept, so a
    server mounted at `wss://example.org/dice/ws` serves `https://example.org/dice/...`.
    """
    parts = urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    base = parts.path[: -len("/ws")] if parts.path.endswith("/ws") else parts.path.rstrip("/")
    return urlunsplit((scheme, parts.netloc, base + path, "", ""))


class Client(Keeper):
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

    def epoch(self, room: str) -> int | None:
        """The epoch of `room` as of the latest message received (its latest `snapshot` or
        `resume` reply said it; docs/protocol.md, "Epochs"): it goes up when a failover took
        the room back, and a `Snapshot` then replaces what came after its seq."""
        return self._epochs.get(room)

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
        if isinstance(item, End):
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
            if isinstance(item, End):
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
            except Unsent:
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
        self, room: str, action: Mapping[str, Any] | msgspec.Struct, window: int | None = None
    ) -> results.ActResult:
        """Send a game action for this client's seat (a map, or its game's Struct: the
        game's `actions`); pass the `window` it answers. The result's `owes` lists the kinds
        of action the seat still owes in that window (a Yamb turn is several actions)."""
        plain = msgspec.to_builtins(action) if isinstance(action, msgspec.Struct) else action
        typed = msgspec.convert(plain, Action)
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
