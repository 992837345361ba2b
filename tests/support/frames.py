"""WebSocket frames as a client sends them, written by hand (RFC 6455, 5.2): any opcode,
fragment, mask or reserved bit a test means, including the ones a library would refuse;
and `StreamClient`, a client on a bare TCP stream that answers nothing by itself (no pong)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import struct
from typing import Any


def client_frame(
    opcode: int, payload: bytes, fin: bool = True, masked: bool = True, rsv: int = 0
) -> bytes:
    first = (0x80 if fin else 0) | rsv << 4 | opcode
    size = len(payload)
    bit = 0x80 if masked else 0
    if size < 126:
        head = bytes((first, bit | size))
    elif size < 65536:
        head = bytes((first, bit | 126)) + struct.pack("!H", size)
    else:
        head = bytes((first, bit | 127)) + struct.pack("!Q", size)
    if not masked:
        return head + payload
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


class StreamClient:
    """A WebSocket client written by hand: frames exactly as the test means them."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.pongs: list[bytes] = []
        self.pings: list[bytes] = []

    @classmethod
    async def connect(cls, port: int, rcvbuf: int | None = None) -> StreamClient:
        """A TCP connection to the loopback `port`, nothing sent yet. `rcvbuf`: a small,
        fixed receive buffer (no autotuning), so that a client that stops reading backs the
        server up after a few kilobytes instead of megabytes of kernel buffers."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            if rcvbuf is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            sock.connect(("127.0.0.1", port))
            reader, writer = await asyncio.open_connection(sock=sock)
        except BaseException:
            sock.close()
            raise
        return cls(reader, writer)

    @classmethod
    async def open(
        cls, port: int, rcvbuf: int | None = None, deflate: bool = False
    ) -> StreamClient:
        """Handshake for dicehall.v1.json, then the welcome (`connect` for `rcvbuf`).
        `deflate`: offer per-message deflate, which the server must take (`--deflate`);
        its data frames are then compressed (the welcome is not read as JSON)."""
        client = await cls.connect(port, rcvbuf)
        reader, writer = client.reader, client.writer
        offer = b"Sec-WebSocket-Extensions: permessage-deflate\r\n" if deflate else b""
        try:
            writer.write(
                b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: dicehall.v1.json\r\n"
                + offer
                + b"\r\n"
            )
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            assert head.startswith(b"HTTP/1.1 101"), head
            assert (b"permessage-deflate" in head) == deflate, head
            opcode, welcome = await client.frame()
            assert opcode == 1 and (deflate or json.loads(welcome)["type"] == "welcome")
        except BaseException:
            writer.transport.abort()  # (a failed test leaves no socket for a later one)
            raise
        return client

    @staticmethod
    def request(kind: str, rid: int, **fields: Any) -> bytes:
        return client_frame(1, json.dumps({"type": kind, "id": rid, **fields}).encode())

    async def frame(self) -> tuple[int, bytes]:
        first, second = await asyncio.wait_for(self.reader.readexactly(2), 10)
        size = second & 0x7F
        if size == 126:
            size = int.from_bytes(await self.reader.readexactly(2), "big")
        elif size == 127:
            size = int.from_bytes(await self.reader.readexactly(8), "big")
        return first & 0x0F, await self.reader.readexactly(size)

    async def replies(self, count: int) -> list[int]:
        """The ids of the next `count` replies (other messages skipped); all must be ok."""
        ids: list[int] = []
        while len(ids) < count:
            opcode, data = await self.frame()
            if opcode == 10:
                self.pongs.append(data)
                continue
            if opcode == 9:  # the server's keepalive: this client answers nothing
                self.pings.append(data)
                continue
            assert opcode == 1, (opcode, data)
            message = json.loads(data)
            if message["type"] == "reply":
                assert message["ok"], message
                ids.append(message["id"])
        return ids

    async def closed_with(self) -> int:
        """Read until the server's close frame: its code."""
        while True:
            opcode, data = await self.frame()
            if opcode == 8:
                return int.from_bytes(data[:2], "big")

    def close(self) -> None:
        self.writer.close()

    async def aclose(self) -> None:
        """Close, and return once the socket is: a test that then blocks its loop (waiting
        for a server to stop) would otherwise hold the socket open meanwhile, and the
        server's goodbye would wait `CLOSE_TIMEOUT` for a close frame that never comes."""
        self.writer.close()
        await self.writer.wait_closed()
