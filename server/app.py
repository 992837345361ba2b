"""The Starlette edge: a lifespan that builds the backends, and thin endpoints.

Endpoints only move bytes between a socket and a `Peer`, or render what the backend
already knows; every decision lives in the session, the room and the rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketClose, WebSocketDisconnect

from protocol.close import CloseCode
from protocol.server_connection import farewell
from protocol.subprotocols import SUBPROTOCOLS, refusal_reason, select

from . import __version__
from .backends import Backend, MemoryBackend, RoomSpec
from .commands import AddBotsCmd
from .housebots import HouseBot
from .hub import Hub
from .metrics import ServerMetrics
from .peer import Peer
from .session import Services, Settings, games_info
from .settings import Config
from .tokens import TokenSigner
from .ws import FrameSocket, socket_of

log = logging.getLogger("dicehall.server")

DRAINING = "server shutting down; reconnect"
RETRY_MS = 1000
"""What a draining server tells its clients: reconnect (to another process) after this."""


class Server:
    """The process: backend, hub, sessions, bots and metrics, built by the lifespan."""

    def __init__(self, config: Config, backend: Backend | None = None) -> None:
        self.config = config
        self.limits = config.limits
        self.hub = Hub()
        self.metrics = ServerMetrics(
            connections=lambda: len(self.peers),
            house_bots=lambda: len(self.bots),
            stats=lambda: self.backend.stats(),
        )
        self.backend = backend or self._backend()
        self.services = Services(
            backend=self.backend,
            hub=self.hub,
            signer=TokenSigner(config.secret or secrets.token_bytes(32)),
            settings=Settings(default_turn_window=config.turn_window),
            errors=self.metrics.errors,
        )
        self.peers: set[Peer] = set()
        self.bots: dict[tuple[str, int], HouseBot] = {}
        self.draining = False
        self._tasks: list[asyncio.Task[None]] = []
        self._host_key = secrets.token_urlsafe(16)
        self.fanout_latency = self.metrics.fanout_latency
        self.slow_dropped = self.metrics.slow_dropped
        self.transports = self.metrics.transports

    def _backend(self) -> Backend:
        backend = self._new_backend()
        backend.public_url = self.config.public_url
        return backend

    def _new_backend(self) -> Backend:
        config = self.config
        if config.redis is None:
            return MemoryBackend(
                self.hub,
                spawn_bot=self.spawn_bot,
                drop_bots=self.drop_bots,
                idle_seconds=config.idle_seconds,
            )
        from .backends.redis import RedisBackend

        return RedisBackend(
            self.hub,
            config.redis,
            spawn_bot=self.spawn_bot,
            drop_bots=self.drop_bots,
            cluster=config.redis_cluster,
            lease_ms=config.lease_ms,
            idle_seconds=config.idle_seconds,
            reply_timeout=config.redis_timeout,
        )

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        await self.backend.start()
        if self.config.secret is None:
            shared = await self.backend.shared_secret()
            if shared is not None:
                self.services.signer = TokenSigner(shared)
        if self.config.demo_rooms:
            self._tasks.append(asyncio.get_running_loop().create_task(self._keep_demo_rooms()))

    async def stop(self) -> None:
        await self.drain()
        for task in self._tasks:
            task.cancel()
        for bot in list(self.bots.values()):
            await bot.stop()
        await self.backend.stop()

    def say_goodbye(self, peer: Peer) -> None:
        """The server is going: no new work, and this client is told to go (1001)."""
        self.draining = True
        peer.close(CloseCode.GOING_AWAY, DRAINING, retry_ms=RETRY_MS)

    async def drain(self) -> None:
        """Tell every client to go and let the goodbyes out (under `dicehall serve`,
        uvicorn has done this through each socket's `on_shutdown` by now)."""
        for peer in list(self.peers):
            self.say_goodbye(peer)
        self.draining = True
        deadline = time.monotonic() + self.config.drain_seconds
        while self.peers and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    # --- house bots ------------------------------------------------------------------------

    def spawn_bot(self, room: str, seat: int, kind: str) -> None:
        """Seat a house bot where the room runs (the owner, in scale-out mode)."""
        previous = self.bots.pop((room, seat), None)
        if previous is not None:
            asyncio.get_running_loop().create_task(previous.stop())
        bot = HouseBot(self.services, room, seat, kind, self.backend.game_of(room))
        self.bots[(room, seat)] = bot
        bot.start()

    def drop_bots(self, room: str) -> None:
        """The room left this process (handed over or lost): its bots go with it."""
        for key in [k for k in self.bots if k[0] == room]:
            asyncio.get_running_loop().create_task(self.bots.pop(key).stop())

    async def _keep_demo_rooms(self) -> None:
        """One open room per game, every other seat the strongest house bot the game has: a
        newcomer plays at once, against the default opponent of the web client's lobby."""
        from rules import all_games
        from rules.bots import bot_names

        while True:
            rooms = await self.backend.rooms()
            open_games = {r.game for r in rooms if r.status == "open"}
            for game in all_games():
                if game.name in open_games:
                    continue
                seats = min(2, game.max_seats)
                info = await self.backend.create(
                    RoomSpec(
                        game=game.name,
                        options=game.resolve_options(),
                        seats=seats,
                        turn_window=self.config.turn_window,
                        public=True,
                        name=f"{game.title}: play the strong house bot",
                        autostart=True,
                        host_key=self._host_key,
                    )
                )
                kinds = bot_names(game.name)
                kind = "strong" if "strong" in kinds else kinds[0]
                await self.backend.call(
                    info.room, AddBotsCmd(kind=kind, count=seats - 1, host_key=self._host_key)
                )
            await asyncio.sleep(1.0)


# --- endpoints ------------------------------------------------------------------------------


def _server(request: Request | WebSocket) -> Server:
    server: Server = request.app.state.server
    return server


async def healthz(request: Request) -> Response:
    return PlainTextResponse("ok\n")


async def readyz(request: Request) -> Response:
    server = _server(request)
    if server.draining or not server.backend.ready():
        return PlainTextResponse("not ready\n", status_code=503)
    return PlainTextResponse("ready\n")


async def metrics(request: Request) -> Response:
    registry = _server(request).metrics.registry
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


async def api_games(request: Request) -> Response:
    return Response(msgspec.json.encode(games_info()), media_type="application/json")


async def api_rooms(request: Request) -> Response:
    game = request.query_params.get("game")
    rooms = await _server(request).backend.rooms(game)
    return Response(msgspec.json.encode(rooms), media_type="application/json")


async def api_record(request: Request) -> Response:
    record = await _server(request).backend.record(request.path_params["room"])
    if record is None:
        return JSONResponse({"error": "no finished game with that room id"}, status_code=404)
    return JSONResponse(record)


async def websocket(ws: WebSocket) -> None:
    server = _server(ws)
    chosen = select(ws.scope.get("subprotocols") or [])
    if chosen is None:  # no encoding agreed: the close frame's reason is all it gets
        await ws.accept()
        await ws.close(int(CloseCode.UNSUPPORTED_SUBPROTOCOL), refusal_reason())
        return
    if server.draining:
        await ws.accept(subprotocol=chosen)
        goodbye, then = farewell(
            CloseCode.GOING_AWAY, DRAINING, SUBPROTOCOLS[chosen], retry_ms=RETRY_MS
        )
        await _send_frame(ws, goodbye.frame)
        await ws.close(int(then.code), then.reason)
        return
    await ws.accept(subprotocol=chosen)
    socket = socket_of(ws.scope)
    peer = Peer(
        server.services,
        SUBPROTOCOLS[chosen],
        limits=server.limits,
        max_queue=server.config.max_queue,
        max_queue_bytes=server.config.max_queue_bytes,
        fanout_latency=server.fanout_latency,
        slow_dropped=server.slow_dropped,
        socket=socket,
    )
    server.peers.add(peer)
    server.transports.labels(_transport(socket)).inc()

    async def send(frame: bytes | str) -> None:
        await _send_frame(ws, frame)

    async def close(code: int, reason: str) -> None:
        if socket is not None:
            socket.close(code, reason)
        else:
            await ws.close(code, reason)

    peer.attach(send, close)
    peer.welcome(f"dicehall/{__version__}")
    peer.start_timeouts()
    try:
        if socket is not None:
            socket.on_shutdown = lambda: server.say_goodbye(peer)
            # A task of its own, for speed: each frame wakes this shallow coroutine instead
            # of the dozen frames of Starlette's middleware the endpoint runs under
            # (docs/benchmarks.md, "A faster machine, and the request path again").
            await asyncio.get_running_loop().create_task(_read_socket(socket, peer))
        else:
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                if not peer.closing:
                    data = message.get("bytes")
                    await peer.receive(data if data is not None else message.get("text", ""))
                    await asyncio.sleep(0)  # (a queued frame is received without suspending)
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        peer.detach()
        server.peers.discard(peer)
        await peer.session.disconnected()


async def _send_frame(ws: WebSocket, frame: bytes | str) -> None:
    if isinstance(frame, bytes):
        await ws.send_bytes(frame)
    else:
        await ws.send_text(frame)


def _transport(socket: FrameSocket | None) -> str:
    """How a connection's frames travel (the label of dicehall_websocket_connections_total)."""
    if socket is None:
        return "asgi"
    return "fast" if socket.fast else "extension"


async def _read_socket(socket: FrameSocket, peer: Peer) -> None:
    while (frame := await socket.receive()) is not None:
        if not peer.closing:
            await peer.receive(frame)
            if socket.waiting:
                await asyncio.sleep(0)  # a burst: let the other connections in between


WEB_CLIENT = Path(__file__).resolve().parents[1] / "clients" / "web"
JS_CLIENT = WEB_CLIENT.parent / "js" / "dicehall.js"
"""The browser client's static files: served, never imported (server/ never imports clients/)."""


def _web_client() -> list[BaseRoute]:
    if not (WEB_CLIENT / "index.html").is_file():
        return []
    files = StaticFiles(directory=WEB_CLIENT, html=True)

    async def js_client(request: Request) -> Response:
        """The JavaScript client module (clients/js), which the page imports as any app
        would; served alone: the rest of that folder is its Node package."""
        return FileResponse(JS_CLIENT, media_type="text/javascript")

    async def web(scope: Scope, receive: Receive, send: Send) -> None:
        """The files over HTTP; a WebSocket to any other path than /ws is refused (403),
        where the StaticFiles of older Starlette (0.40) fails with a 500."""
        if scope["type"] == "websocket":
            await WebSocketClose()(scope, receive, send)
        else:
            await files(scope, receive, send)

    return [Route("/js/dicehall.js", js_client), Mount("/", web, name="web")]


def create_app(config: Config | None = None, server: Server | None = None) -> Starlette:
    server = server or Server(config or Config.load())

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.server = server
        await server.start()
        try:
            yield
        finally:
            await server.stop()

    return Starlette(
        routes=[
            Route("/healthz", healthz),
            Route("/readyz", readyz),
            Route("/metrics", metrics),
            Route("/api/games", api_games),
            Route("/api/rooms", api_rooms),
            Route("/api/rooms/{room}/record", api_record),
            WebSocketRoute("/ws", websocket),
            WebSocketRoute("/", websocket),  # (a bot given ws://host:port, no path)
            *_web_client(),
        ],
        lifespan=lifespan,
    )
