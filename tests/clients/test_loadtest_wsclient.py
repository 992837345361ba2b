"""clients/loadtest/client.py's `WsClient` without a socket: the server's bytes fed however
the reads cut them, the client's frames read back with protocol/wsframes.py."""

from __future__ import annotations

import base64
import hashlib

import pytest

from dicehall.clients.loadtest.client import HandshakeError, WsClient
from dicehall.protocol.wsframes import (
    BINARY,
    CLOSE,
    CONTINUATION,
    FIN,
    PING,
    PONG,
    TEXT,
    parse_header,
)

SUBPROTOCOL = "dicehall.v1.json"


def server_frame(first: int, payload: bytes) -> bytes:
    """Written by hand, as tests/support/frames.py does, not with the code under test."""
    size = len(payload)
    if size < 126:
        return bytes((first, size)) + payload
    if size < 65536:
        return bytes((first, 126)) + size.to_bytes(2, "big") + payload
    return bytes((first, 127)) + size.to_bytes(8, "big") + payload


class Transport:
    def __init__(self) -> None:
        self.written = bytearray()
        self.closing = False
        self.aborted = False

    def write(self, data: bytes) -> None:
        self.written += data

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.aborted = self.closing = True


class Sink:
    def __init__(self) -> None:
        self.messages: list[bytes] = []
        self.closed: list[int | None] = []

    def on_message(self, data: bytes, now_us: int) -> None:
        assert type(data) is bytes
        self.messages.append(data)

    def on_closed(self, code: int | None) -> None:
        self.closed.append(code)


def opened() -> tuple[WsClient, Sink, Transport, bytes]:
    """A client after `connection_made`, and the server's handshake answer for it."""
    sink, transport = Sink(), Transport()
    client = WsClient("127.0.0.1", "/ws", SUBPROTOCOL, sink)
    client.connection_made(transport)  # type: ignore[arg-type]
    key = transport.written.split(b"Sec-WebSocket-Key: ")[1].split(b"\r\n")[0]
    accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
    transport.written.clear()
    answer = (
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Accept: %s\r\nSec-WebSocket-Protocol: %s\r\n\r\n"
        % (accept, SUBPROTOCOL.encode())
    )
    return client, sink, transport, answer


def client_frames(written: bytes | bytearray) -> list[tuple[int, bytes]]:
    """The client's frames: (first byte, unmasked payload); each must be masked."""
    frames, pos = [], 0
    while (header := parse_header(written, pos, len(written))) is not None:
        first, second, start, end = header
        assert second & 0x80 and end <= len(written)
        key = written[start - 4 : start]
        frames.append((first, bytes(b ^ key[i % 4] for i, b in enumerate(written[start:end]))))
        pos = end
    assert pos == len(written)
    return frames


@pytest.mark.parametrize("step", [1, 2, 3, 5, 64, 1000, 100_000])
async def test_messages_arrive_whole_however_the_reads_cut_the_stream(step: int) -> None:
    client, sink, transport, answer = opened()
    big = bytes(range(256)) * 300  # a 64-bit length
    stream = answer + b"".join(
        [
            server_frame(FIN | TEXT, b'{"type": "welcome"}'),
            server_frame(FIN | BINARY, b"\x81" * 300),  # a 16-bit length
            server_frame(TEXT, b"frag"),
            server_frame(FIN | PING, b"ping?"),  # between two fragments
            server_frame(FIN | CONTINUATION, b"mented"),
            server_frame(FIN | BINARY, big),
            server_frame(FIN | TEXT, b""),
        ]
    )
    for i in range(0, len(stream), step):
        client.data_received(stream[i : i + step])
    assert client.opened.done() and client.opened.exception() is None
    assert sink.messages == [b'{"type": "welcome"}', b"\x81" * 300, b"fragmented", big, b""]
    assert client_frames(transport.written) == [(FIN | PONG, b"ping?")]
    assert not client._buf


async def test_a_close_frame_is_answered_and_ends_the_socket() -> None:
    client, sink, transport, answer = opened()
    client.data_received(answer + server_frame(FIN | CLOSE, b"\x03\xe8bye") + b"after")
    assert client_frames(transport.written) == [(FIN | CLOSE, b"\x03\xe8")]
    assert client.closed and transport.closing and sink.closed == [1000]


@pytest.mark.parametrize("with_the_answer", [False, True])
async def test_a_masked_server_frame_fails_the_socket_even_before_its_payload(
    with_the_answer: bool,
) -> None:
    client, sink, transport, answer = opened()
    masked = bytes((FIN | TEXT, 0x80 | 100)) + b"mask" + b"only part"
    if with_the_answer:  # (read from the bytes held, not straight from the read)
        client.data_received(answer + masked)
    else:
        client.data_received(answer)
        client.data_received(masked)
    assert transport.aborted and not sink.messages


async def test_a_refused_handshake_fails_the_opening() -> None:
    client, _, transport, _ = opened()
    client.data_received(b"HTTP/1.1 403 Forbidden\r\n\r\n")
    assert isinstance(client.opened.exception(), HandshakeError) and transport.aborted


async def test_sent_frames_are_masked_with_every_length_encoding() -> None:
    client, _, transport, answer = opened()
    client.data_received(answer)
    payloads = [b"", b"x" * 125, b"y" * 126, b"z" * 65536]
    for payload in payloads:
        client.send(payload, binary=True)
    client.send(b"text", binary=False)
    client.close(1001)
    assert client_frames(transport.written) == [
        *((FIN | BINARY, payload) for payload in payloads),
        (FIN | TEXT, b"text"),
        (FIN | CLOSE, b"\x03\xe9"),
    ]


async def test_each_frame_has_a_key_of_its_own() -> None:
    client, _, transport, answer = opened()
    client.data_received(answer)
    for _ in range(20):
        client.send(b"same payload", binary=True)
    keys, pos = set(), 0
    while (header := parse_header(transport.written, pos, len(transport.written))) is not None:
        keys.add(bytes(transport.written[header[2] - 4 : header[2]]))
        pos = header[3]
    assert len(keys) == 20  # (RFC 6455, 5.3: a fresh key per frame)
