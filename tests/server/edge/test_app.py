"""The WebSocket endpoint's refusals, driven through Starlette's ASGI interface.

A refused socket is closed before any session exists; whenever an encoding was agreed the
close is still preceded by `goodbye`, as docs/protocol.md promises.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.websockets import WebSocket

from dicehall.server.edge.app import create_app, websocket
from dicehall.server.edge.process import Server
from dicehall.server.edge.settings import Config


async def _refused(server: Server, offer: list[str]) -> list[dict[str, Any]]:
    """What the endpoint sends a new socket offering `offer`, as ASGI messages."""
    app = create_app(server=server)
    app.state.server = server  # what the lifespan does
    scope = {"type": "websocket", "app": app, "subprotocols": offer, "headers": [], "path": "/ws"}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await websocket(WebSocket(scope, receive, send))
    return sent


async def test_a_draining_server_says_goodbye_before_it_closes() -> None:
    server = Server(Config())
    server.draining = True
    accept, goodbye, close = await _refused(server, ["dicehall.v1.json"])
    assert accept == {"type": "websocket.accept", "subprotocol": "dicehall.v1.json", "headers": []}
    assert json.loads(goodbye["text"]) == {
        "type": "goodbye",
        "code": 1001,
        "reason": close["reason"],
        "retry_ms": 1000,
    }
    assert close["type"] == "websocket.close" and close["code"] == 1001


async def test_no_subprotocol_agreed_gets_only_the_close_frame() -> None:
    accept, close = await _refused(Server(Config()), ["dicehall.v2.json"])
    assert accept["type"] == "websocket.accept" and accept.get("subprotocol") is None
    assert close["code"] == 4000 and "dicehall.v1.json" in close["reason"]


async def test_the_protocols_paths_reach_the_endpoint_under_any_root_path() -> None:
    """`/ws` and `/` go to the endpoint past the router (server/edge/app.py, WebSocketShortcut),
    also under an ASGI server's `root_path`; any other path is refused as before."""
    server = Server(Config())
    server.draining = True  # (the endpoint answers at once: accept, goodbye, close)
    app = create_app(server=server)
    app.state.server = server

    async def first(path: str, root_path: str = "") -> dict[str, Any]:
        scope = {"type": "websocket", "path": path, "root_path": root_path, "headers": []}
        scope["subprotocols"] = ["dicehall.v1.json"]
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "websocket.connect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await app(scope, receive, send)
        return sent[0]

    for path, root in [("/ws", ""), ("/", ""), ("/games/ws", "/games")]:
        assert (await first(path, root))["type"] == "websocket.accept", path
    assert (await first("/elsewhere"))["type"] == "websocket.close"
