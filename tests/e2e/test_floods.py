"""Control-frame floods against a real `dicehall serve`, from raw sockets (issue 39).

A ping takes a token of the connection's rate limit like any frame: a client that pings
far over the rate is cut with 4002 (a `goodbye`, then the close), on the fast path and
with per-message deflate alike; pongs wait behind nothing and at most one is owed, so a
client that pings and never reads pins no memory.
"""

from __future__ import annotations

import contextlib
import os
import socket

import pytest

from dicehall.protocol.wsframes import parse_header
from tests.support.frames import StreamClient, client_frame
from tests.support.servers import ServerProcess, running_server

PING, PONG, CLOSE = 0x9, 0xA, 0x8
RATE_LIMIT = 4002


@pytest.fixture(scope="module", params=["fast", "deflate"])
def server(request: pytest.FixtureRequest) -> object:
    with running_server(*(["--deflate"] if request.param == "deflate" else [])) as server:
        server.deflate = request.param == "deflate"  # type: ignore[attr-defined]
        yield server


def handshake(port: int, deflate: bool) -> socket.socket:
    """A plain blocking socket past the opening handshake. (Not asyncio's streams: their
    reader raises a reset before handing over the bytes that came ahead of it.)"""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    offer = b"Sec-WebSocket-Extensions: permessage-deflate\r\n" if deflate else b""
    sock.sendall(
        b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        b"Sec-WebSocket-Protocol: dicehall.v1.json\r\n" + offer + b"\r\n"
    )
    return sock


def flood(sock: socket.socket, opcode: int, frames: int, burst: int = 200) -> int:
    """Send up to `frames` control frames in writes of `burst`, reading nothing; the number
    sent before the server cut the connection."""
    sent = 0
    with contextlib.suppress(OSError):
        while sent < frames:
            sock.sendall(b"".join(client_frame(opcode, os.urandom(125)) for _ in range(burst)))
            sent += burst
    return sent


def server_frames(sock: socket.socket) -> list[tuple[int, bytes]]:
    """Everything the server sent, read to the end of the connection, as frames."""
    data = bytearray()
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            data += chunk
    data = data[data.index(b"\r\n\r\n") + 4 :]
    frames = []
    while header := parse_header(data, 0, len(data)):
        first, _, start, end = header
        frames.append((first & 0x0F, bytes(data[start:end])))
        del data[:end]
    return frames


@pytest.mark.parametrize("opcode", [PING, PONG])
def test_a_control_frame_flood_is_cut_with_4002(server: ServerProcess, opcode: int) -> None:
    with handshake(server.port, server.deflate) as sock:  # type: ignore[attr-defined]
        # 20,000 frames: at 20 a second with a burst of 40, the flood is far past its floor
        # after 82; the server's old code answered every ping and never cut the client.
        sent = flood(sock, opcode, 20_000)
        frames = server_frames(sock)
    assert sent < 20_000, "the server stopped reading"
    closes = [data for opcode, data in frames if opcode == CLOSE]
    assert closes and int.from_bytes(closes[0][:2], "big") == RATE_LIMIT, frames
    assert sum(opcode == PONG for opcode, _ in frames) <= 40, "only pings within the rate"
    assert server.get("/healthz")[0] == 200


async def test_pings_within_the_rate_are_answered_the_latest_one_at_least(
    server: ServerProcess,
) -> None:
    client = await StreamClient.open(server.port, deflate=server.deflate)  # type: ignore[attr-defined]
    try:
        for round_ in range(3):  # 15 pings: within the burst of 40
            pings = [f"{round_}-{i}".encode() for i in range(5)]
            client.writer.write(b"".join(client_frame(PING, p) for p in pings))
            while True:  # one pong may answer all five: RFC 6455, 5.5.3
                opcode, data = await client.frame()
                assert opcode == PONG, (opcode, data)
                assert data in pings
                if data == pings[-1]:
                    break
    finally:
        client.writer.transport.abort()
