"""The door of `dicehall serve`: a deadline for every HTTP request, and a bound on the
connections not yet past `hello`.

A socket that sends part of a request and then nothing held a descriptor for good, and
20,000 of them left the process none for `/healthz` or a player (slowloris, issue 39);
nginx would hide it, but `--workers`' ports face players directly. So each request must
arrive whole within `--request-timeout` of its first byte (a WebSocket's opening handshake
is a request too), and a process holds at most `--max-pending` connections that are not
yet past `hello` (HTTP requests and their keep-alive included), at most
`--max-pending-per-address` of them from one address (server/connections/bounds.py's `address_key`).
A connection over its address's share is answered 503 and closed; at the process's bound
the oldest waiting HTTP connection is, for the new one (`Gate`); one past its deadline
gets 408.

`http_protocol(gate, timeout)` is uvicorn's `http=` class: uvicorn's own HTTP protocol
(httptools') behind these rules. httptools reads the same bytes
alongside it only to tell where each request begins and ends; uvicorn answers everything.
After an upgrade the connection's `WebSocketProtocol` holds its place in the count until
its `hello` is answered (server/edge/ws/protocol.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from collections.abc import Callable, Iterator
from typing import ClassVar, cast

import httptools
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from uvicorn import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from ..connections.bounds import address_key
from .ws.protocol import WebSocketProtocol


def _response(status: str, text: str, *headers: str) -> bytes:
    body = text.encode()
    head = [
        f"HTTP/1.1 {status}",
        "Content-Type: text/plain; charset=utf-8",
        f"Content-Length: {len(body)}",
        *headers,
        "Connection: close",
    ]
    return "\r\n".join(head).encode() + b"\r\n\r\n" + body


BUSY = _response(
    "503 Service Unavailable",
    "too many connections are waiting; try again soon\n",
    "Retry-After: 5",
)
TOO_SLOW = _response("408 Request Timeout", "the request took too long to arrive\n")


class Ticket:
    """One connection's place among the pending ones; `release` is idempotent."""

    __slots__ = ("_gate", "drop", "key")

    def __init__(self, gate: Gate, key: str | None) -> None:
        self._gate: Gate | None = gate
        self.key = key
        self.drop: Callable[[], None] | None = None
        """Closes the connection, for a newer one, when the door is full and this is the
        oldest that may be dropped (an HTTP request, not a WebSocket awaiting `hello`)."""

    def release(self) -> None:
        gate, self._gate = self._gate, None
        if gate is not None:
            gate.leave(self)


def proxies(spec: str) -> Callable[[str], bool]:
    """Whether an address is one of `spec`'s (uvicorn's `forwarded_allow_ips`: addresses
    and networks, comma-separated; `*`: any). Entries that are no IP (a Unix socket's
    path) name no TCP peer."""
    entries = [entry.strip() for entry in spec.split(",") if entry.strip()]
    if "*" in entries:
        return lambda address: True
    networks = []
    for entry in entries:
        with contextlib.suppress(ValueError):
            networks.append(ipaddress.ip_network(entry, strict=False))

    def trusted(address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in networks)

    return trusted


class Gate(Collector):
    """Counts the pending connections of one process, in all and per address key; its
    figures are on /metrics. A trusted proxy's connections (`--forwarded-allow-ips`) are
    not bounded per address: they carry many clients, whom the proxy names.

    A full door drops its oldest HTTP connection for a new one rather than refusing the
    new one: a real request arrives whole in milliseconds, so the oldest waiting is the
    likeliest to be one that never will, and half-open connections from many addresses
    cannot lock everyone out for as long as they are renewed. (Refusing at the bound
    would let them: a slowloris would only have to keep the door full.)"""

    def __init__(self, max_pending: int, per_address: int, trusted: str = "") -> None:
        self.max_pending = max_pending
        self.per_address = per_address
        """0: no bound per address."""
        self._trusted = proxies(trusted)
        self._waiting: dict[Ticket, None] = {}
        """Every place held, oldest first (a dict keeps its insertion order)."""
        self._by_key: dict[str, int] = {}
        self.refused = 0
        """Connections turned away (503) since the start: their address's share is full,
        or the door is full of WebSockets awaiting `hello`."""
        self.dropped = 0
        """Connections dropped for newer ones since the start."""
        self.timed_out = 0
        """Requests that did not arrive whole in time (408 or a close)."""

    @property
    def pending(self) -> int:
        return len(self._waiting)

    def enter(self, address: str | None) -> Ticket | None:
        """A place for a new connection from `address`, or None when a bound is reached."""
        key = address_key(address) if self.per_address else None
        if key is not None and address is not None and self._trusted(address):
            key = None
        if (key is not None and self._by_key.get(key, 0) >= self.per_address) or (
            len(self._waiting) >= self.max_pending and not self._drop_oldest()
        ):
            self.refused += 1
            return None
        ticket = Ticket(self, key)
        self._waiting[ticket] = None
        if key is not None:
            self._by_key[key] = self._by_key.get(key, 0) + 1
        return ticket

    def leave(self, ticket: Ticket) -> None:
        del self._waiting[ticket]
        key = ticket.key
        if key is not None:
            left = self._by_key[key] - 1
            if left:
                self._by_key[key] = left
            else:
                del self._by_key[key]

    def _drop_oldest(self) -> bool:
        oldest = next((ticket for ticket in self._waiting if ticket.drop is not None), None)
        if oldest is None or oldest.drop is None:
            return False
        drop = oldest.drop
        self.dropped += 1
        oldest.release()
        drop()
        return True

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "dicehall_connections_pending",
            "Connections not yet past `hello` (HTTP requests and their keep-alive included).",
            value=self.pending,
        )
        yield CounterMetricFamily(
            "dicehall_connections_refused_total",
            "Connections answered 503 at once: --max-pending-per-address reached, or"
            " --max-pending of WebSockets awaiting `hello`.",
            value=self.refused,
        )
        yield CounterMetricFamily(
            "dicehall_connections_dropped_total",
            "Waiting HTTP connections closed (503) for newer ones, the door being full"
            " (--max-pending): the oldest first.",
            value=self.dropped,
        )
        yield CounterMetricFamily(
            "dicehall_requests_timed_out_total",
            "HTTP requests (WebSocket handshakes included) not whole within --request-timeout.",
            value=self.timed_out,
        )


class GatedHttp(asyncio.Protocol):
    """uvicorn's HTTP protocol for one connection, behind the gate and the deadline."""

    gate: ClassVar[Gate]
    timeout: ClassVar[float]

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, object] | None = None,
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        # (uvicorn passes `_loop` to the protocol it builds: handed on as it came)
        self._inner = HttpToolsProtocol(config, server_state, app_state or {}, _loop)
        self._parser: httptools.HttpRequestParser | None = httptools.HttpRequestParser(self)
        self._transport: asyncio.Transport | None = None
        self._ticket: Ticket | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._answered = False
        """A request arrived whole on this connection (so uvicorn may be answering it)."""

    # --- asyncio.Protocol ----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # (uvloop's is no subclass)
        peer = transport.get_extra_info("peername")
        self._ticket = self.gate.enter(str(peer[0]) if isinstance(peer, tuple) else None)
        if self._ticket is None:
            self._transport.write(BUSY)
            transport.close()
            return
        self._ticket.drop = self._drop
        self._inner.connection_made(self._transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._ticket is None:
            return  # turned away: what it sends is not read
        parser = self._parser
        if parser is not None:
            try:
                parser.feed_data(data)
            except httptools.HttpParserUpgrade:
                self._parser = None  # the rest is the WebSocket's
            except httptools.HttpParserError:
                self._parser = None  # uvicorn answers 400 and closes
        self._inner.data_received(data)
        transport = self._transport
        if transport is not None and transport.get_protocol() is not self:
            self._upgraded(transport.get_protocol())

    def eof_received(self) -> None:
        if self._ticket is not None:
            self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._ticket is not None:
            self._ticket.release()
            self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    # --- httptools' callbacks: where requests begin and end ------------------------------

    def on_message_begin(self) -> None:
        self._arm()

    def on_message_complete(self) -> None:
        self._answered = True
        self._disarm()

    # --- internals -----------------------------------------------------------------------

    def _upgraded(self, protocol: asyncio.BaseProtocol) -> None:
        """uvicorn handed the transport to the WebSocket: it keeps this connection's place
        until its `hello` (or its end)."""
        self._disarm()
        ticket, self._ticket = self._ticket, None
        if ticket is not None:
            ticket.drop = None  # (a WebSocket is past its request: it has till `hello`)
            if isinstance(protocol, WebSocketProtocol):
                protocol.hold(ticket)
            else:
                ticket.release()

    def _arm(self) -> None:
        if self._timer is None and self._transport is not None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self.timeout, self._expire)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        self._timer = None
        if self._close(TOO_SLOW):
            self.gate.timed_out += 1

    def _drop(self) -> None:
        """The door is full and this is its oldest connection: closed for a newer one."""
        self._disarm()
        self._close(BUSY)

    def _close(self, answer: bytes) -> bool:
        """Close the connection, with `answer` if no request was answered on it yet."""
        transport = self._transport
        if transport is None or transport.is_closing() or transport.get_protocol() is not self:
            return False
        if not self._answered:  # (else uvicorn may be writing a response: just close)
            transport.write(answer)
        transport.close()
        return True


def http_protocol(gate: Gate, timeout: float) -> type[GatedHttp]:
    """The `http=` class of one uvicorn server: its connections share `gate`."""
    return type("GatedHttp", (GatedHttp,), {"gate": gate, "timeout": timeout})
