"""One process serving: uvicorn (uvloop, the gate's HTTP protocol, dicehall's own
WebSocket protocol) around the app, until SIGTERM.

On SIGTERM uvicorn stops accepting, calls `shutdown()` on every connection and waits for
them to go; dicehall's `WebSocketProtocol` hands that to the endpoint, which says
`goodbye` and closes with 1001 (uvicorn's own protocols would close with 1012 at once).
`dicehall serve` (server/edge/main.py) runs this, or a worker of `--workers` does
(server/edge/workers.py).
"""

from __future__ import annotations

import gc
import logging
import signal
import socket
from types import FrameType

import uvicorn

from dicehall.protocol.limits import Limits

from .app import create_app
from .gate import http_protocol
from .process import Server
from .settings import Config
from .ws.protocol import WebSocketProtocol

GC_THRESHOLDS = (20_000, 20, 50)
"""Collect the young generation every 20,000 net allocations (CPython's default is 700).

Under load the cyclic collector found almost nothing (everything is freed by reference
counting) yet took a third of the CPU and stalled the loop for up to 200 ms per full
collection of the thousands of connections' objects (docs/benchmarks/journal.md, "Load"). A
young collection now takes a few milliseconds, and full ones are rare."""


def tune_gc() -> None:
    """Freeze what the start-up made (modules, the app) out of the collector's sight, and
    collect less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def run(config: Config, sockets: list[socket.socket] | None = None, name: str = "") -> int:
    """Serve until SIGTERM: on `--host`/`--port`, or on `sockets` a supervisor bound for
    this worker (uvicorn listens on them once the app has started). `name` goes into
    dicehall's log lines (`worker 2`): workers share one output, and a reader must be
    able to tell their lines apart."""
    prefix = f"{name} " if name else ""
    logging.basicConfig(
        level=config.log_level.upper(), format=f"%(asctime)s {prefix}%(name)s %(message)s"
    )
    app_server = Server(config)
    app = create_app(server=app_server)
    uv_config = uvicorn.Config(
        app,
        host=config.host,
        port=config.port,
        loop="uvloop",
        http=http_protocol(app_server.gate, config.request_timeout),
        ws=WebSocketProtocol,
        ws_per_message_deflate=config.deflate,
        forwarded_allow_ips=config.forwarded_allow_ips,
        # Above max_frame, so the protocol sees an oversized frame and answers it as
        # documented (`too-large`, `goodbye`, close 1009); only frames beyond this cap are
        # cut off by the WebSocket layer itself (a bare 1009).
        ws_max_size=4 * Limits().max_frame,
        # Pings only draw pongs, which the idle time-out counts; silence is that time-out's
        # to judge (4004 with a goodbye), not a keepalive failure of its own.
        ws_ping_interval=config.limits.heartbeat_ms / 1000,
        ws_ping_timeout=None,
        log_level=config.log_level,
        timeout_graceful_shutdown=int(config.drain_seconds) + 5,
    )
    tune_gc()
    # uvicorn handles SIGTERM while it runs, then restores the handler it found and raises
    # the signal again: this one makes that a clean exit (status 0) after the drain.
    signal.signal(signal.SIGTERM, _exit_cleanly)
    uvicorn.Server(uv_config).run(sockets=sockets)
    return 0


def _exit_cleanly(sig: int, frame: FrameType | None) -> None:
    raise SystemExit(0)
