"""`dicehall serve`: uvicorn (uvloop, dicehall's own WebSocket protocol) around the app.

On SIGTERM uvicorn stops accepting, calls `shutdown()` on every connection and waits for
them to go; dicehall's `WebSocketProtocol` hands that to the endpoint, which says
`goodbye` and closes with 1001 (uvicorn's own protocols would close with 1012 at once).
"""

from __future__ import annotations

import argparse
import gc
import logging
import signal
from types import FrameType

import uvicorn

from protocol.limits import Limits

from .app import Config, Server, create_app
from .ws.protocol import WebSocketProtocol


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--turn-window", type=int, help="default seconds per turn window (30)")
    p.add_argument(
        "--demo-rooms",
        action="store_true",
        help="keep an open room per game with house bots in the other seats",
    )
    p.add_argument(
        "--max-queue",
        type=int,
        help="frames queued per connection before a slow reader is cut off (1024)",
    )
    p.add_argument("--redis", metavar="URL", help="share rooms through Redis (scale-out)")
    p.add_argument(
        "--redis-cluster", action="store_true", help="the Redis URL is a cluster: sharded pub/sub"
    )
    p.add_argument("--lease-ms", type=int, help="room ownership lease (2000 ms)")
    p.add_argument("--hello-timeout-ms", type=int, help="from open to hello (10000 ms)")
    p.add_argument("--idle-timeout-ms", type=int, help="client silence before a close (60000 ms)")
    p.add_argument("--deflate", action="store_true", help="enable per-message deflate")
    p.add_argument("--log-level", default="info")


GC_THRESHOLDS = (20_000, 20, 50)
"""Collect the young generation every 20,000 net allocations (CPython's default is 700).

Under load the cyclic collector found almost nothing (everything is freed by reference
counting) yet took a third of the CPU and stalled the loop for up to 200 ms per full
collection of the thousands of connections' objects (docs/benchmarks.md, "Load"). A
young collection now takes a few milliseconds, and full ones are rare."""


def tune_gc() -> None:
    """Freeze what the start-up made (modules, the app) out of the collector's sight, and
    collect less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def serve(args: argparse.Namespace) -> int:
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(message)s")
    config = Config.from_env(
        turn_window=args.turn_window,
        demo_rooms=args.demo_rooms or None,
        max_queue=args.max_queue,
        redis=args.redis,
        redis_cluster=args.redis_cluster or None,
        lease_ms=args.lease_ms,
        hello_timeout_ms=args.hello_timeout_ms,
        idle_timeout_ms=args.idle_timeout_ms,
    )
    app_server = Server(config)
    app = create_app(server=app_server)
    uv_config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        loop="uvloop",
        ws=WebSocketProtocol,
        ws_per_message_deflate=args.deflate,
        # Above max_frame, so the protocol sees an oversized frame and answers it as
        # documented (`too-large`, `goodbye`, close 1009); only frames beyond this cap are
        # cut off by the WebSocket layer itself (a bare 1009).
        ws_max_size=4 * Limits().max_frame,
        ws_ping_interval=Limits().heartbeat_ms / 1000,
        ws_ping_timeout=Limits().heartbeat_ms / 1000,
        log_level=args.log_level,
        timeout_graceful_shutdown=int(config.drain_seconds) + 5,
    )
    tune_gc()
    # uvicorn handles SIGTERM while it runs, then restores the handler it found and raises
    # the signal again: this one makes that a clean exit (status 0) after the drain.
    signal.signal(signal.SIGTERM, _exit_cleanly)
    uvicorn.Server(uv_config).run()
    return 0


def _exit_cleanly(sig: int, frame: FrameType | None) -> None:
    raise SystemExit(0)
