"""One client's session: requests in, exactly one reply each, room messages out.

The session knows nothing of sockets. Its output goes to a `Sink`: the WebSocket sink
encodes frames into a bounded queue (server/connections/peer.py); a house bot's sink hands it
the message objects. So people, remote bots and house bots all pass through this code.

Each request type has one handler, declared with `@handles` (`HANDLERS`, checked against
the protocol's list of requests); its membership of rooms and catch-ups are
server/connections/catchup.py's, and which session holds a seat is server/connections/holders.py's.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import msgspec
from prometheus_client import Counter

from dicehall.protocol import errors
from dicehall.protocol.features import (
    EPOCHS,
    IDENTITY,
    LEGAL_IN_WINDOW,
    LEGAL_WITHOUT_VIEW,
    LOBBY_PAGES,
    PROGRESS,
    TIMESTAMPS,
    accept,
)
from dicehall.protocol.limits import MAX_ROOMS_PAGE
from dicehall.protocol.messages import client as requests
from dicehall.protocol.messages import results
from dicehall.protocol.messages.common import GameInfo, HeldSeat, OptionInfo
from dicehall.protocol.messages.server import ServerMessage
from dicehall.rules import RulesError, all_games, get_game
from dicehall.rules.bots import bot_names

from ..backends import Rooms, RoomSpec
from ..rooms.commands import (
    ActCmd,
    AddBotsCmd,
    ChatCmd,
    JoinCmd,
    LeaveCmd,
    LegalCmd,
    PresenceCmd,
    ResignCmd,
    StartCmd,
    Sync,
    SyncCmd,
    TokenCmd,
    WatchCmd,
)
from .bounds import RoomBounds
from .catchup import Membership
from .holders import SeatHolders
from .hub import Hub, RoomSink, RoomStream
from .identity import Player, PlayerKeys
from .tokens import TokenSigner

log = logging.getLogger("dicehall.session")


class Sink(RoomSink, Protocol):
    """Where a session's output goes, in order."""

    def reply(self, request_id: int, result: msgspec.Struct) -> None: ...

    def fail(self, request_id: int, error: errors.ProtocolError) -> None: ...

    def message(self, message: ServerMessage) -> None: ...

    def replaced(self, room: str) -> None:
        """Another connection took this session's seat in `room` with its token."""


@dataclass
class Settings:
    """What sessions need from the server's configuration."""

    default_turn_window: int = 30
    max_rooms_per_session: int = 16
    """Rooms one connection may host at once (created, game not over): a cap on abuse."""
    server_name: str = "dicehall"


@dataclass
class Services:
    """The process-wide parts every session shares."""

    rooms: Rooms
    hub: Hub
    signer: TokenSigner
    players: PlayerKeys | None
    """Signs and checks player keys (the `identity` feature); None while the history
    database that holds their secret is out of reach (the feature is off meanwhile)."""
    bounds: RoomBounds
    """How many rooms may be created, here and per client address."""
    settings: Settings = field(default_factory=Settings)
    errors: Counter | None = None
    holders: SeatHolders = field(default_factory=SeatHolders)
    """Which local session holds each seat: a token taking a seat replaces its holder."""


Handled = tuple[msgspec.Struct, Callable[[], None] | None]
"""A request's result, and what to send once it is (a catch-up), if anything."""
Req = TypeVar("Req", bound=requests.Request)
Handler = Callable[["Session", Req], Awaitable[Handled]]

HANDLERS: dict[type[requests.Request], Callable[..., Awaitable[Handled]]] = {}
"""Each request type's handler (`@handles`): one for every request of the protocol."""


def handles(kind: type[Req]) -> Callable[[Handler[Req]], Handler[Req]]:
    def register(handler: Handler[Req]) -> Handler[Req]:
        HANDLERS[kind] = handler
        return handler

    return register


class Session:
    def __init__(self, services: Services, sink: Sink) -> None:
        self.services = services
        self.sink = sink
        self.name: str | None = None
        self.address: str | None = None
        """The client's network address (its IP, as the ASGI scope says), when it has one:
        the key of per-address bounds."""
        self.player: str | None = None
        """The player id this connection plays as (the `identity` feature): the seats it
        takes are that player's."""
        self.stream = RoomStream(sink)
        """Its member of the hub: the room messages it is sent (server/connections/hub.py,
        `RoomStream`)."""
        self.seats = self.stream.seats
        self.watching: set[str] = set()
        self.hosting = self.stream.hosting
        self.claimed: set[str] = set()
        """Rooms whose seat `hello` took back (held already, in `seats`), waiting for their
        `resume` to start the stream; the seat cannot act before it."""
        self.members = Membership(self.stream, sink, services.hub, services.rooms)
        self.stream.on_rewound = lambda room: self.members.rewound(room, self.seats.get(room))
        self.closed = False
        self.timestamps = False
        """The `timestamps` feature is on: live room messages carry `sent_us`."""
        self.legal_without_view = False
        """The `legal_without_view` feature is on: `legal` may say `view: false`."""
        self.legal_in_window = False
        """The `legal_in_window` feature is on: the seats it takes get their legal actions
        with each window (the room keeps that per seat: `Seat.legal`)."""
        self.lobby_pages = False
        """The `lobby_pages` feature is on: `rooms` may name a `limit` and a `cursor`."""
        self.epochs = False
        """The `epochs` feature is on: `resume` may name the client's `epoch`."""

    # --- requests ------------------------------------------------------------------------

    async def handle(self, request: requests.Request) -> None:
        """Answer one request: exactly one reply, then any messages it releases."""
        rid = request.id
        try:
            after = await self._dispatch(request)
        except errors.ProtocolError as exc:
            if self.services.errors is not None:
                self.services.errors.labels(exc.name).inc()
            self.sink.fail(rid, exc)
            return
        except RulesError as exc:
            self.sink.fail(rid, errors.BadOptionsError(exc.message, rule=exc.rule))
            return
        except Exception:
            log.exception("request %r failed", request)
            self.sink.fail(rid, errors.InternalError("the server failed to handle this request"))
            return
        result, release = after
        self.sink.reply(rid, result)
        if release is not None:
            release()

    async def _dispatch(self, req: requests.Request) -> Handled:
        handler = HANDLERS.get(type(req))
        if handler is None:
            raise errors.InvalidMessageError(f"unhandled request {type(req).__name__}")
        return await handler(self, req)

    # --- in the room ---------------------------------------------------------------------

    @handles(requests.Act)
    async def _act(self, req: requests.Act) -> Handled:
        seat = self._seat(req.room)
        act = ActCmd(seat=seat, action=req.action, window=req.window)
        window, owes = await self.services.rooms.call(req.room, act)
        result = results.ActResult(window=window, owes=owes)
        if owes and self.legal_in_window:  # (its part goes on: what may it do next?)
            now, actions, _ = await self.services.rooms.call(
                req.room, LegalCmd(seat=seat, view=False)
            )
            if now == window:  # (else the window moved on: a `window` will tell)
                result.legal = actions
        return result, None

    @handles(requests.Legal)
    async def _legal(self, req: requests.Legal) -> Handled:
        if not req.view and not self.legal_without_view:
            raise errors.InvalidMessageError(
                f"`view` in `legal` needs the feature `{LEGAL_WITHOUT_VIEW}`"
            )
        viewer = None if req.room in self.watching else self._seat(req.room)
        window, actions, view = await self.services.rooms.call(
            req.room, LegalCmd(seat=viewer, view=req.view)
        )
        return results.LegalResult(window=window, actions=actions, view=view), None

    @handles(requests.Start)
    async def _start(self, req: requests.Start) -> Handled:
        start = StartCmd(host_key=self.hosting.get(req.room), seat=self.seats.get(req.room))
        commitment = await self.services.rooms.call(req.room, start)
        return results.StartResult(commitment=commitment), None

    @handles(requests.AddBots)
    async def _add_bots(self, req: requests.AddBots) -> Handled:
        add = AddBotsCmd(
            kind=req.kind or "random",
            count=req.count,
            host_key=self.hosting.get(req.room),
            seat=self.seats.get(req.room),
        )
        seats = await self.services.rooms.call(req.room, add)
        return results.AddBotsResult(seats=seats), None

    @handles(requests.SendChat)
    async def _chat(self, req: requests.SendChat) -> Handled:
        if req.room not in self.seats and req.room not in self.watching:
            raise errors.NotInRoomError("join or spectate the room first")
        chat_seat = self.seats.get(req.room)
        sender = self.name or ("spectator" if chat_seat is None else f"seat {chat_seat}")
        chat = ChatCmd(seat=chat_seat, sender=sender, text=req.text)
        seq = await self.services.rooms.call(req.room, chat)
        return results.ChatResult(seq=seq), None

    # --- the connection and the lobby ----------------------------------------------------

    @handles(requests.Ping)
    async def _ping(self, req: requests.Ping) -> Handled:
        return results.PingResult(time=int(time.time() * 1000), echo=req.time), None

    @handles(requests.Games)
    async def _games(self, req: requests.Games) -> Handled:
        return results.GamesResult(games=games_info()), None

    @handles(requests.Hello)
    async def _hello(self, req: requests.Hello) -> Handled:
        features = accept(req.features)
        if self.services.players is None and IDENTITY in features:
            features.remove(IDENTITY)  # (no player keys yet: play goes on without)
        player = self._identify(req.key, IDENTITY in req.features)  # (before any change)
        self.name = req.name
        if player is not None:
            self.player = player.id
        held: list[HeldSeat] = []
        rejected: list[int] = []
        for i, token in enumerate(req.tokens):
            claim = self.services.signer.verify(token)
            ok = False
            if claim is not None:
                try:
                    ok = await self.services.rooms.call(
                        claim.room,
                        TokenCmd(
                            seat=claim.seat,
                            nonce=claim.nonce,
                            player=self.player,
                            legal=LEGAL_IN_WINDOW in features,
                        ),
                    )
                except errors.ProtocolError:
                    ok = False
            if ok and claim is not None and claim.room not in self.seats:
                # Taken here, at `hello` (docs/protocol.md): the connection that held it is
                # replaced (4006) now, not at `resume`, which only starts the stream.
                self.claimed.add(claim.room)
                held.append(HeldSeat(room=claim.room, seat=claim.seat))
                if not self._take(claim.room, claim.seat):
                    await self.services.rooms.call(
                        claim.room, PresenceCmd(seat=claim.seat, delta=1)
                    )
            else:  # (a second token for a room: one seat per room and connection)
                rejected.append(i)
        self.timestamps = TIMESTAMPS in features
        self.legal_without_view = LEGAL_WITHOUT_VIEW in features
        self.stream.progress = PROGRESS in features
        self.legal_in_window = LEGAL_IN_WINDOW in features
        self.lobby_pages = LOBBY_PAGES in features
        self.epochs = EPOCHS in features
        result = results.HelloResult(
            name=self.name, seats=held, rejected=rejected, features=features
        )
        if player is not None:
            result.player = results.PlayerIdentity(id=player.id, key=player.key)
        return result, None

    def _identify(self, key: str | None, identity: bool) -> Player | None:
        """Who `hello` says it is: the player `key` stands for, or a new one; None without
        the feature. A key this deployment did not sign fails the `hello`, which changes
        nothing (the connection may say `hello` again)."""
        if not identity:
            if key is not None:
                raise errors.InvalidMessageError(f"`key` in `hello` needs the feature `{IDENTITY}`")
            return None
        keys = self.services.players
        if keys is None:
            return None  # (asked for, but off for now: the reply's features say so)
        if key is None:
            return keys.issue()
        player = keys.verify(key)
        if player is None:
            raise errors.BadKeyError(
                "this server did not issue that player key: say hello without a key to get"
                " a new identity"
            )
        return player

    @handles(requests.Rooms)
    async def _rooms(self, req: requests.Rooms) -> Handled:
        """One page of the lobby, however many rooms there are: a reply of every room
        outgrew clients' frame limits (issue 39)."""
        if (req.limit is not None or req.cursor is not None) and not self.lobby_pages:
            raise errors.InvalidMessageError(
                f"`limit` and `cursor` in `rooms` need the feature `{LOBBY_PAGES}`"
            )
        limit = req.limit or MAX_ROOMS_PAGE
        return await self.services.rooms.lobby(req.game, limit, req.cursor), None

    @handles(requests.Create)
    async def _create(self, req: requests.Create) -> Handled:
        try:
            game = get_game(req.game)
        except RulesError:
            raise errors.NoSuchGameError(f"no game {req.game!r}") from None
        try:
            seats = game.check_seats(req.seats)
            options = game.resolve_options(req.options, req.preset)
        except RulesError as exc:
            raise errors.BadOptionsError(exc.message) from None
        if len(self.hosting) >= self.services.settings.max_rooms_per_session:
            raise errors.TooManyRoomsError("too many rooms created by this connection")
        host_key = TokenSigner.new_nonce()
        spec = RoomSpec(
            game=game.name,
            options=options,
            seats=seats,
            turn_window=req.turn_window or self.services.settings.default_turn_window,
            public=req.public,
            name=req.name,
            autostart=req.autostart,
            host_key=host_key,
        )
        info = await self.services.bounds.create(
            self.address, lambda: self.services.rooms.create(spec)
        )
        self.hosting[info.room] = host_key
        return results.CreateResult(room=info), None

    # --- taking a seat, watching, catching up --------------------------------------------

    @handles(requests.Join)
    async def _join(self, req: requests.Join) -> Handled:
        room = req.room
        if room in self.seats:
            raise errors.AlreadyInRoomError("this connection already holds a seat here")
        watching = room in self.watching
        await self.members.hold(room)
        name = req.name or self.name or "player"
        nonce = self.services.signer.new_nonce()
        try:
            seat = await self.services.rooms.call(
                room,
                JoinCmd(
                    name=name,
                    seat=req.seat,
                    nonce=nonce,
                    host_key=self.hosting.get(room),
                    player=self.player,
                    legal=self.legal_in_window,
                ),
            )
        except BaseException:
            if watching:  # still a spectator: it keeps its stream, held messages included
                self.members.resume_held(room)
            else:
                self.members.unhold(room)
            raise
        if watching:  # a spectator that sits down is a spectator no more
            self.watching.discard(room)
            await self.services.rooms.call(room, WatchCmd(delta=-1))
        self._take(room, seat)
        token = self.services.signer.issue(room, seat, nonce)
        sync = await self.services.rooms.call(room, SyncCmd(seat=seat))
        url = await self.services.rooms.owner_url(room)
        result = results.JoinResult(room=room, seat=seat, token=token, url=url)
        return result, lambda: self.members.release(room, sync)

    @handles(requests.Spectate)
    async def _spectate(self, req: requests.Spectate) -> Handled:
        room = req.room
        if room in self.seats or room in self.watching:
            raise errors.AlreadyInRoomError("this connection is already in this room")
        await self.members.hold(room)
        try:
            sync = await self.services.rooms.call(room, SyncCmd(seat=None, watch=1))
        except BaseException:
            self.members.unhold(room)
            raise
        self.watching.add(room)
        url = await self.services.rooms.owner_url(room)
        return results.SpectateResult(url=url), lambda: self.members.release(room, sync)

    @handles(requests.Resume)
    async def _resume(self, req: requests.Resume) -> Handled:
        room = req.room
        if req.epoch is not None and not self.epochs:
            raise errors.InvalidMessageError(f"`epoch` in `resume` needs the feature `{EPOCHS}`")
        seat: int | None
        if room in self.seats:
            seat = self.seats[room]
        elif room in self.watching:
            seat = None
        else:
            raise errors.NotInRoomError(
                "take the seat back with hello's tokens, or spectate, first"
            )
        fresh = room not in self.members.members
        if fresh:
            await self.members.hold(room)
        else:
            self.members.hold_again(room)
        try:
            sync: Sync = await self.services.rooms.call(
                room, SyncCmd(seat=seat, last_seq=req.last_seq, epoch=req.epoch)
            )
        except BaseException:
            if fresh:
                self.members.unhold(room)
            raise
        self.claimed.discard(room)
        result = results.ResumeResult(
            mode="events" if sync.messages is not None else "snapshot",
            seq=sync.seq,
            url=await self.services.rooms.owner_url(room),
            epoch=sync.epoch,
        )
        return result, lambda: self.members.release(room, sync)

    @handles(requests.Leave)
    async def _leave(self, req: requests.Leave) -> Handled:
        room = req.room
        if room in self.seats:
            self.claimed.discard(room)
            seat = self._let_go(room)
            self.members.unhold(room)
            await self.services.rooms.call(room, LeaveCmd(seat=seat))
        elif room in self.watching:
            self.watching.discard(room)
            self.members.unhold(room)
            await self.services.rooms.call(room, WatchCmd(delta=-1))
        else:
            raise errors.NotInRoomError("this connection is not in this room")
        return results.Empty(), None

    def _take(self, room: str, seat: int) -> bool:
        """Hold `seat`; True when it was taken from another local connection (closed 4006)."""
        self.seats[room] = seat
        return self.services.holders.take(room, seat, self)

    def _let_go(self, room: str) -> int:
        seat = self.seats.pop(room)
        self.services.holders.let_go(room, seat, self)
        return seat

    def replaced(self, room: str) -> None:
        """Another connection took this session's seat in `room` with its token."""
        self.seats.pop(room, None)
        self.members.unhold(room)
        self.sink.replaced(room)

    async def disconnected(self) -> None:
        """The connection is gone: seats stay taken (their tokens bring them back).

        May run twice, even at once: a connection cut off for reading too slowly leaves
        at once, then again when its socket closes (catching what a request still in
        flight took meanwhile). Each run lets go of what is still held, exactly once."""
        self.closed = True
        for room in list(self.members.members):
            self.members.unhold(room)
        for room, key in list(self.hosting.items()):  # (a seated creator: its seat hosts)
            if self.hosting.pop(room, None) is not None and room not in self.seats:
                with contextlib.suppress(errors.ProtocolError):
                    await self.services.rooms.call(room, ResignCmd(host_key=key))
        for room in list(self.seats):
            if room not in self.seats:  # let go by the other run
                continue
            seat = self._let_go(room)
            with contextlib.suppress(errors.ProtocolError):
                await self.services.rooms.call(room, PresenceCmd(seat=seat, delta=-1))
        for room in list(self.watching):
            if room not in self.watching:
                continue
            self.watching.discard(room)
            with contextlib.suppress(errors.ProtocolError):
                await self.services.rooms.call(room, WatchCmd(delta=-1))

    # --- in-process members -------------------------------------------------------------

    def attach(self, room: str, seat: int) -> None:
        """An in-process member (a house bot) that holds `seat` and listens from now on."""
        self.seats[room] = seat
        self.members.attach(room)

    def detach(self, room: str) -> None:
        self.seats.pop(room, None)
        self.members.unhold(room)

    def _seat(self, room: str) -> int:
        if room in self.claimed:
            raise errors.NotSeatedError("resume the room before acting")
        seat = self.seats.get(room)
        if seat is None:
            if room in self.watching:
                raise errors.NotSeatedError("spectators cannot act; join a seat to play")
            raise errors.NotInRoomError("this connection neither sits in nor watches this room")
        return seat


def games_info() -> list[GameInfo]:
    return [
        GameInfo(
            name=g.name,
            title=g.title,
            min_seats=g.min_seats,
            max_seats=g.max_seats,
            options=[msgspec.convert(o.describe(), OptionInfo) for o in g.options],
            presets={k: dict(v) for k, v in g.presets.items()},
            bots=bot_names(g.name),
        )
        for g in all_games()
    ]
