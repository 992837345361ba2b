"""The modules an `act` crosses, traced, against docs/architecture.md's diagram of them.

A server runs in this process under uvicorn with dicehall's WebSocket protocol; two real
WebSocket clients sit at a Qwixx table. Every Python call made in the server's modules
from the moment one seat's `act` frame is sent until that seat has its reply and the other
seat the window's messages is recorded (`sys.setprofile`). The diagram must name exactly
those modules (compiled ones make no Python calls, so a compiled build is checked against
the diagram less its compiled modules), and no more than `MOST`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
import uvicorn
import websockets

from dicehall.server.compiled import compiled_modules
from dicehall.server.edge.app import create_app
from dicehall.server.edge.gate import http_protocol
from dicehall.server.edge.process import Server
from dicehall.server.edge.settings import Config
from dicehall.server.edge.ws.protocol import WebSocketProtocol
from dicehall.server.hosting.host import REAPER

ROOT = Path(__file__).resolve().parents[2]
MOST = 14
"""Issue 34: an act crossed 22 modules of the server and the protocol."""
LAYERS = ("dicehall.server.", "dicehall.protocol.")
"""What is counted: the server's layers. A game's own modules (rules/) run on the path
too, and are the game's business."""


def documented() -> set[str]:
    """The modules docs/architecture.md's act-path diagram names, as module names."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("### The act path", 1)[1].split("```", 2)[1]
    paths = re.findall(r"\b((?:server|protocol)/[\w/]+)\.py\b", section)
    return {"dicehall." + path.replace("/", ".") for path in paths}


def module_of(path: str) -> str:
    """`dicehall.server.rooms.room` for .../dicehall/server/rooms/room.py (the tree is
    imported through dicehall/'s links); "" for a file of no project module."""
    _, found, inside = path.rpartition("/dicehall/")
    if not found or not inside.endswith(".py"):
        return ""
    return "dicehall." + inside.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


class Client:
    def __init__(self, ws: websockets.ClientConnection) -> None:
        self.ws = ws
        self.next_id = 0

    async def send(self, kind: str, **fields: Any) -> int:
        self.next_id += 1
        await self.ws.send(json.dumps({"type": kind, "id": self.next_id, **fields}))
        return self.next_id

    async def until(self, wanted: Any) -> dict[str, Any]:
        while True:
            message: dict[str, Any] = json.loads(await self.ws.recv())
            if wanted(message):
                return message

    async def ask(self, kind: str, **fields: Any) -> dict[str, Any]:
        rid = await self.send(kind, **fields)
        reply = await self.until(lambda m: m.get("id") == rid)
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result


@pytest.fixture
async def port() -> AsyncIterator[int]:
    server = Server(Config(demo_rooms=False))
    config = uvicorn.Config(
        create_app(server=server),
        host="127.0.0.1",
        port=0,
        loop="none",
        http=http_protocol(server.gate, 10.0),
        ws=WebSocketProtocol,
        log_level="warning",
    )
    uv = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(uv.serve())
    while not uv.started:
        assert not task.done(), "the server did not start"
        await asyncio.sleep(0.01)
    yield uv.servers[0].sockets[0].getsockname()[1]
    uv.should_exit = True
    await task


async def test_an_act_crosses_the_modules_the_diagram_names(port: int) -> None:
    url = f"ws://127.0.0.1:{port}/ws"
    async with (
        websockets.connect(url, subprotocols=["dicehall.v1.json"]) as ws_a,
        websockets.connect(url, subprotocols=["dicehall.v1.json"]) as ws_b,
    ):
        a, b = Client(ws_a), Client(ws_b)
        for client, name in ((a, "Ada"), (b, "Bo")):
            await client.ask("hello", client="test", name=name)
        room = (await a.ask("create", game="qwixx", seats=2))["room"]["room"]
        for client in (a, b):
            await client.ask("join", room=room)
        await a.ask("start", room=room)
        first = await a.ask("legal", room=room)
        await a.ask("act", room=room, window=first["window"], action=first["actions"][0])
        last = await b.ask("legal", room=room)
        crossed: set[str] = set()

        def profile(frame: FrameType, event: str, arg: object) -> None:
            if event == "call":
                task = asyncio.current_task()  # (None in a protocol's callback)
                if task is None or task.get_name() != REAPER:
                    crossed.add(module_of(inspect.getfile(frame)))

        # The last answer of the shared window: its reply, then the window's events and
        # the next window fanned out to both seats.
        sys.setprofile(profile)
        try:
            rid = await b.send("act", room=room, window=last["window"], action=last["actions"][0])
            await asyncio.wait_for(b.until(lambda m: m.get("id") == rid), 10)
            await asyncio.wait_for(a.until(lambda m: m.get("type") == "window"), 10)
        finally:
            sys.setprofile(None)
    traced = {name for name in crossed if name.startswith(LAYERS)}
    named = documented()
    assert len(named) <= MOST, f"the act path crosses {len(named)} modules: {sorted(named)}"
    assert traced == named - set(compiled_modules()), (
        f"not in the diagram: {sorted(traced - named)}; "
        f"in the diagram, not crossed: {sorted(named - traced - set(compiled_modules()))}"
    )
