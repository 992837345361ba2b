"""The Starlette edge: a lifespan that holds the process's `Server` (server/edge/process.py), and
thin endpoints.

Endpoints only move bytes between a socket and a `Peer`, or render what the backend
already knows; every decision lives in the session, the room and the rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Protocol

import msgspec
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy.exc import DBAPIError
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketClose, WebSocketDisconnect

from dicehall.protocol.close import CloseCode
from dicehall.protocol.codec import Frame
from dicehall.protocol.server_connection import farewell
from dicehall.protocol.subprotocols import SUBPROTOCOLS, Encoding, refusal_reason, select
from dicehall.rules import all_games

from .. import __version__
from ..connections.outbox import Outbox, WireCache
from ..connections.peer import Peer
from ..connections.session import games_info
from ..connections.writer import asgi_outbox, socket_outbox
from ..history import api
from . import params
from .process import DRAINING, RETRY_MS, Server
from .settings import Config
from .ws import FrameSocket, socket_of

log = logging.getLogger("dicehall.server")

# --- endpoints ------------------------------------------------------------------------------


def _server(request: Request | WebSocket) -> Server:
    server: Server = request.app.state.server
    return server


async def healthz(request: Request) -> Response:
    return PlainTextResponse("ok\n")


async def readyz(request: Request) -> Response:
    server = _server(request)
    history = f"{server.history.status()}\n" if server.history is not None else ""
    if server.draining or not server.backend.ready():
        return PlainTextResponse("not ready\n" + history, status_code=503)
    return PlainTextResponse("ready\n" + history)


async def metrics(request: Request) -> Response:
    registry = _server(request).metrics.registry
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


async def api_games(request: Request) -> Response:
    return Response(msgspec.json.encode(games_info()), media_type="application/json")


def _refusing_bad_parameters(
    endpoint: Callable[[Request], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    """A parameter the endpoint cannot take is a 400 with the reason (server/edge/params.py)."""

    @functools.wraps(endpoint)
    async def refusing(request: Request) -> Response:
        try:
            return await endpoint(request)
        except params.BadParameter as exc:
            return JSONResponse({"error": exc.message}, status_code=400)

    return refusing


@_refusing_bad_parameters
async def api_rooms(request: Request) -> Response:
    names = frozenset(game.name for game in all_games())
    game = params.choice(request.query_params, "game", names, "/api/games")
    rooms = await _server(request).backend.rooms(game)
    return Response(msgspec.json.encode(rooms), media_type="application/json")


@_refusing_bad_parameters
async def api_record(request: Request) -> Response:
    room = params.identifier(request.path_params, "room", params.GAME_ID, api.A_GAME)
    record = await _server(request).backend.record(room)
    if record is None:
        return JSONResponse({"error": "no finished game with that room id"}, status_code=404)
    return JSONResponse(record)


# --- history (server/history/api.py builds every answer) -------------------------------------

HISTORY: dict[str, api.Answer[msgspec.Struct]] = {
    "/api/leaderboards/{ladder}": api.leaderboard,
    "/api/players/{player}": api.player,
    "/api/players/{player}/games": api.player_games,
    "/api/games/{game}": api.game,
    "/api/games/{game}/replay": api.replay_step,
}


def _history_endpoint(
    answer: api.Answer[msgspec.Struct],
) -> Callable[[Request], Awaitable[Response]]:
    @_refusing_bad_parameters
    async def endpoint(request: Request) -> Response:
        server = _server(request)
        history = server.history
        query = api.Query({**request.query_params, **request.path_params})
        try:
            if history is None:
                raise api.ApiError(404, "this server keeps no history (--db none)")
            query = api.Query(query.params, _player_of(request, server))
            try:
                result = await answer(history, query)
            except (DBAPIError, OSError) as exc:
                log.warning("history API: %s", exc)
                raise api.ApiError(503, "the history database is out of reach") from None
        except api.ApiError as exc:
            asks = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
            return JSONResponse({"error": exc.message}, status_code=exc.status, headers=asks)
        return Response(msgspec.json.encode(result), media_type="application/json")

    return endpoint


def _player_of(request: Request, server: Server) -> str | None:
    """The player whose key came with the request (`Authorization: Bearer KEY`): what
    lets a player see their own private-room games (docs/history.md, "What is public").
    A key this server did not sign is refused (401) rather than read as no key, so that a
    page with a stale key says so instead of showing less."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, key = header.partition(" ")
    players = server.services.players
    player = players.verify(key.strip()) if players is not None else None
    if scheme.lower() != "bearer" or (player is None and players is not None):
        raise api.ApiError(401, "Authorization must be `Bearer KEY`, a player key of this server")
    return None if player is None else player.id


async def api_ladders(request: Request) -> Response:
    return Response(msgspec.json.encode(api.ladders()), media_type="application/json")


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
    encoding = SUBPROTOCOLS[chosen]
    peer = Peer(
        server.services,
        encoding,
        _outbox(ws, socket, encoding, server),
        limits=server.limits,
        max_queue=server.config.max_queue,
        max_queue_bytes=server.config.max_queue_bytes,
        slow_dropped=server.slow_dropped,
    )
    client = ws.scope.get("client")
    peer.session.address = str(client[0]) if client else None
    server.peers.add(peer)
    server.transports.labels(_transport(socket)).inc()
    peer.welcome(f"dicehall/{__version__}")
    peer.start_timeouts()
    try:
        if socket is not None:
            socket.on_control = peer.control
            socket.on_shutdown = lambda: server.say_goodbye(peer)
        # In a task of its own: a frame then wakes the read loop alone, not every coroutine
        # of the ASGI app above it (a cancel of this endpoint cancels the task it awaits).
        reader = socket if socket is not None else AsgiReader(ws)
        await asyncio.get_running_loop().create_task(_read_socket(reader, peer))
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        peer.detach()
        server.peers.discard(peer)
        await peer.session.disconnected()


def _outbox(
    ws: WebSocket, socket: FrameSocket | None, encoding: Encoding, server: Server
) -> Outbox:
    """The connection's outbox, chosen once: frames straight to the socket when the server
    offers one (`dicehall serve`), ASGI messages otherwise."""
    latency = server.fanout_latency
    if socket is not None:
        wires: WireCache = ws.app.state.wires
        return socket_outbox(socket, encoding, server.flusher, wires, latency)

    async def send(frame: bytes | str) -> None:
        await _send_frame(ws, frame)

    async def close(code: int, reason: str) -> None:
        await ws.close(code, reason)

    return asgi_outbox(send, close, encoding, latency)


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


class Reader(Protocol):
    """What the read loop needs of a connection: a `FrameSocket` has it."""

    @property
    def waiting(self) -> bool:
        """More frames are waiting to be received (a burst)."""

    async def receive(self) -> bytes | str | None:
        """The next frame's payload; None once the connection is closing or closed."""


class AsgiReader:
    """A WebSocket read through plain ASGI messages, as a `Reader`."""

    waiting = True
    """(Unknown: a frame ASGI already holds is received without suspending, so the loop
    lets the other connections in after each one.)"""

    def __init__(self, ws: WebSocket) -> None:
        self._ws = ws

    async def receive(self) -> bytes | str | None:
        message = await self._ws.receive()
        if message["type"] == "websocket.disconnect":
            return None
        data: bytes | None = message.get("bytes")
        return data if data is not None else message.get("text", "")


async def _read_socket(socket: Reader, peer: Peer) -> None:
    """The one read loop, whatever the transport: each frame to the peer until the
    connection closes."""
    while (frame := await socket.receive()) is not None:
        if not peer.closing:
            await _receive(peer, frame)
            if socket.waiting:
                await asyncio.sleep(0)  # a burst: let the other connections in between


async def _receive(peer: Peer, frame: Frame) -> None:
    """One frame from the client: what the protocol answers itself is queued; a request
    is handled (one reply, then the messages it releases)."""
    request = peer.take(frame)
    if request is not None:
        await peer.session.handle(request)


WEB_CLIENT = Path(__file__).resolve().parents[2] / "clients" / "web"
JS_CLIENT = WEB_CLIENT.parent / "js" / "dicehall.js"
"""The browser client's static files: served, never imported (server/ never imports clients/)."""


CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        # (the page follows a room to the process that runs it, whose --public-url may be
        # on another port or host: no list of them exists before the page asks)
        "connect-src 'self' ws: wss:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
"""The web page's policy: its own scripts and styles only (it has no inline ones), and no
framing by other pages (clickjacking). docs/web.md, "Content Security Policy"."""
PAGE_HEADERS = {"Content-Security-Policy": CONTENT_SECURITY_POLICY}


def _web_client() -> list[BaseRoute]:
    if not (WEB_CLIENT / "index.html").is_file():
        return []
    files = StaticFiles(directory=WEB_CLIENT, html=True)

    async def js_client(request: Request) -> Response:
        """The JavaScript client module (clients/js), which the page imports as any app
        would; served alone: the rest of that folder is its Node package."""
        return FileResponse(JS_CLIENT, media_type="text/javascript", headers=PAGE_HEADERS)

    async def web(scope: Scope, receive: Receive, send: Send) -> None:
        """The files over HTTP, each with the page's policy; a WebSocket to any other path
        than /ws is refused (403), where the StaticFiles of older Starlette (0.40) fails
        with a 500."""
        if scope["type"] == "websocket":
            await WebSocketClose()(scope, receive, send)
            return

        async def with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).update(PAGE_HEADERS)
            await send(message)

        await files(scope, receive, with_policy)

    return [Route("/js/dicehall.js", js_client), Mount("/", web, name="web")]


WEBSOCKET_PATHS = frozenset({"/ws", "/"})
"""Where the protocol's WebSocket is served (`/`: a bot given ws://host:port, no path)."""


class WebSocketShortcut:
    """The protocol's WebSockets go to their endpoint from the top of the middleware stack,
    past the router and the exception middleware (which do nothing for them: the endpoint
    handles its own errors). Why: an endpoint stays suspended for its connection's
    lifetime, and under the router it holds their dozen coroutine frames, about 4 KiB per
    idle connection (docs/benchmarks/journal.md, "Memory per idle connection"), and each frame
    received would resume them all."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and _route_path(scope) in WEBSOCKET_PATHS:
            await websocket(WebSocket(scope, receive, send))
        else:
            await self.app(scope, receive, send)


def _route_path(scope: Scope) -> str:
    """The path within the app (an ASGI server mounted under `root_path` includes it)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def create_app(config: Config | None = None, server: Server | None = None) -> Starlette:
    server = server or Server(config or Config.load())

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.server = server
        app.state.wires = WireCache(server.flusher)  # (shared by the sockets' outboxes)
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
            Route("/api/leaderboards", api_ladders),
            *(Route(url, _history_endpoint(answer)) for url, answer in HISTORY.items()),
            *_web_client(),
        ],
        middleware=[Middleware(WebSocketShortcut)],
        lifespan=lifespan,
    )
