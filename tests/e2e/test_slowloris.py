"""Half-open connections against a real `dicehall serve` (issue 39): a request must arrive
whole within `--request-timeout`, and a process holds at most `--max-pending` connections
that are not yet past `hello` (server/edge/gate.py)."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Callable, Iterator

import pytest

from tests.support.frames import client_frame
from tests.support.servers import ServerProcess, running_server

from .helpers import metrics

HANDSHAKE = (
    b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    b"Sec-WebSocket-Protocol: dicehall.v1.json\r\n\r\n"
)


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with running_server("--request-timeout", "1", "--max-pending", "6") as server:
        yield server


@contextlib.contextmanager
def connection(server: ServerProcess, first: bytes = b"") -> Iterator[socket.socket]:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        if first:
            sock.sendall(first)
        yield sock
    finally:
        sock.close()


def answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (10 s at most)."""
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            data += chunk
    return data


def wait_for(condition: str, check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"not within {timeout} s: {condition}"
        time.sleep(0.05)


def pending(server: ServerProcess) -> float:
    """Connections waiting at the door, besides the scrape that asks."""
    return metrics(server)["dicehall_connections_pending"] - 1


@pytest.mark.parametrize(
    "partial",
    [b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n", HANDSHAKE[:-2], b"", b"G"],
    ids=["http", "websocket", "nothing", "one-byte"],
)
def test_a_request_that_does_not_arrive_whole_in_time_is_answered_408(
    server: ServerProcess, partial: bytes
) -> None:
    started = time.monotonic()
    with connection(server, partial) as sock:
        data = answer(sock)  # the old code kept the socket open for good: recv timed out
    assert data.startswith(b"HTTP/1.1 408 "), data
    assert time.monotonic() - started < 5


def test_a_slow_request_within_the_deadline_is_served(server: ServerProcess) -> None:
    with connection(server) as sock:
        for part in (b"GET /healthz HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n", b"\r\n"):
            sock.sendall(part)
            time.sleep(0.2)  # (a slow client's pace, within the 1 s deadline)
        head = sock.recv(65536)
    assert head.startswith(b"HTTP/1.1 200 "), head


def test_a_kept_alive_connection_that_starts_a_request_must_finish_it(
    server: ServerProcess,
) -> None:
    with connection(server, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") as sock:
        first = b""
        while not first.endswith(b"\r\n\r\nok\n"):
            first += sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 "), first
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")
        assert answer(sock) == b"", "closed without a second response"


HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def test_a_full_door_drops_its_oldest_waiting_connection_players_play_on(
    server: ServerProcess,
) -> None:
    with connection(server, HANDSHAKE) as player:
        assert player.recv(65536).startswith(b"HTTP/1.1 101 ")
        player.sendall(
            client_frame(1, json.dumps({"type": "hello", "id": 1, "client": "door-test"}).encode())
        )
        wait_for("the player past hello", lambda: pending(server) == 0)
        with contextlib.ExitStack() as stack:
            held = [
                stack.enter_context(connection(server, b"GET / HTTP/1.1\r\n")) for _ in range(5)
            ]
            wait_for("five waiting", lambda: pending(server) == 5)
            held.append(stack.enter_context(connection(server, b"GET / HTTP/1.1\r\n")))
            # The door is full (6): a new request is served, the oldest waiting one dropped.
            with connection(server, HEALTHZ) as late:
                assert answer(late).startswith(b"HTTP/1.1 200 ")
            dropped = answer(held[0])
            assert dropped.startswith(b"HTTP/1.1 503 ") and b"Retry-After: 5" in dropped
            # A player past hello is not at the door: it plays on.
            player.sendall(client_frame(1, json.dumps({"type": "ping", "id": 2}).encode()))
            seen = b""
            while b'"id":2,"ok":true' not in seen:  # (after the welcome and hello's reply)
                seen += player.recv(65536)
            for sock in held[1:]:  # the others' deadline passes
                assert answer(sock).startswith(b"HTTP/1.1 408 ")
        wait_for("nobody waiting", lambda: pending(server) == 0)
    figures = metrics(server)
    assert figures["dicehall_connections_dropped_total"] >= 1
    assert figures["dicehall_requests_timed_out_total"] >= 5


def test_a_door_full_of_websockets_awaiting_hello_refuses_new_connections(
    server: ServerProcess,
) -> None:
    with contextlib.ExitStack() as stack:
        for _ in range(6):  # past their request: dropping them would cut real clients
            sock = stack.enter_context(connection(server, HANDSHAKE))
            assert sock.recv(65536).startswith(b"HTTP/1.1 101 ")
        with connection(server, HEALTHZ) as late:
            refused = answer(late)
        assert refused.startswith(b"HTTP/1.1 503 ") and b"Retry-After: 5" in refused
    wait_for("nobody waiting", lambda: pending(server) == 0)
    assert metrics(server)["dicehall_connections_refused_total"] >= 1
