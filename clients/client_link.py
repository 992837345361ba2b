"""Opening a wire and making it the client's: the handshake (`welcome`, `hello` with the
seat tokens), resuming every room, routing what arrives, and moving to the server
process that runs the client's rooms."""

from __future__ import annotations

import asyncio
import contextlib

import msgspec
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, WebSocketException
from websockets.typing import Subprotocol

from dicehall.protocol import errors
from dicehall.protocol.client_connection import ClientConnection, Gap, Response
from dicehall.protocol.features import EPOCHS, IDENTITY, LOBBY_PAGES
from dicehall.protocol.limits import MAX_TOKENS
from dicehall.protocol.messages import client as requests
from dicehall.protocol.messages import results
from dicehall.protocol.messages.server import ErrorMessage, Goodbye, RoomMessage
from dicehall.protocol.subprotocols import subprotocol

from .client_calls import WireCalls
from .client_errors import ClientError, ConnectError, describe
from .client_pacer import Pacer
from .client_state import log
from .client_stream import Resumed
from .client_wire import Wire, retired

PROTOCOL_ERROR_CLOSE = 1002
"""RFC 6455: the client closes with this when the server broke the protocol."""


class Link(WireCalls):
    """Wires made the client's: opened, attached (hello, resumes), read, and replaced by
    one to the rooms' own server when a reply names it."""

    async def _open(self, url: str) -> Wire:
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
            raise ConnectError(describe(exc)) from exc
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
            await ws.close(PROTOCOL_ERROR_CLOSE)
            raise ConnectError(f"bad welcome: {exc}") from None
        except BaseException:
            await ws.close()
            raise
        limits = conn.welcome.limits
        return Wire(url, ws, conn, conn.welcome, Pacer(limits.rate, limits.burst))

    async def _attach(self, wire: Wire, handover: Wire | None = None) -> None:
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
            # (whenever offered: reconnects stay one player, `rooms()` walks every page, and
            # a resume says its epoch, so that a room a failover took back resumes exactly)
            always = (IDENTITY, LOBBY_PAGES, EPOCHS)
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

    async def _resume(self, wire: Wire, room: str) -> None:
        last = wire.conn.last_seq(room) or 0
        # the epoch as of `last` (the feature `epochs`: an older server refuses the field)
        epoch = self._epochs.get(room) if self.epochs else None
        try:
            resume = requests.Resume(id=0, room=room, last_seq=last, epoch=epoch)
            result = await self._call(wire, resume, self.open_timeout)
        except errors.ProtocolError as exc:
            self._lose(room, str(exc))
            return
        assert isinstance(result, results.ResumeResult)
        self.resumes.append(Resumed(room, last, result.mode, result.seq, result.epoch))
        log.info(
            "resumed %s after seq %d: %s up to %d (epoch %d)",
            room,
            last,
            result.mode,
            result.seq,
            result.epoch,
        )
        self._consider(room, result.url)

    async def _read(self, wire: Wire) -> None:
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
                await wire.ws.close(PROTOCOL_ERROR_CLOSE, "protocol error")
        self._mark_closed(wire)
        self._fail_waiters(wire)

    def _dispatch(self, wire: Wire, item: object) -> None:
        if isinstance(item, Response):
            if isinstance(item.request, requests.Resume) and isinstance(
                item.result, results.ResumeResult
            ):  # (here, in the order of the room's messages)
                self._epochs[item.request.room] = item.result.epoch
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
        successor: asyncio.Future[Wire | None] = asyncio.get_running_loop().create_future()
        old.successor = successor
        try:
            await self._attach(new, handover=old)
        except (ClientError, errors.ProtocolError) as exc:
            log.warning("could not move to %s: %s", url, describe(exc))
            if old.successor is successor and retired(old):
                successor.set_result(None)  # half way: the supervisor reconnects
            else:
                old.successor = None
                self._ready.set()
            return
        self.moves += 1
        self._followed = url
        log.info("moved to %s, where the rooms are run", url)
        successor.set_result(new)
