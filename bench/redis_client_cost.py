"""What one Redis command costs the process that sends it: the floor under the Redis hop.

    python -m bench.redis_client_cost [--commands 5000]

Against a fresh redis-server on loopback, one command at a time (send, await the reply),
on uvloop as `dicehall serve` runs: CPU time (utime + stime of this process) and wall time
per command for

- redis-py's asyncio client with its pure-Python parser and with hiredis (what the Redis
  backend uses), for PUBLISH and SET of 200 bytes;
- the same PUBLISH written by hand on a bare asyncio stream: the event loop and the
  system calls alone, no client library;
- the backend's own connection (server/backends/redis/resp.py) for PUBLISH and SET, one at a
  time, and ten PUBLISHes sent in the same turn of the event loop (as a busy process sends
  them: they leave in one write), against ten at once through redis-py (`gather`).

The Redis backend needs about one such round trip per commit and two per command forwarded
between processes (docs/benchmarks/journal.md, "Redis hop").
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import redis.asyncio as aioredis
import uvloop

from bench.processes import redis_server
from dicehall.server.backends.redis.resp import RespClient

PAYLOAD = b"y" * 200


async def timed(n: int, op: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    """(CPU µs, wall µs) per call of `op`, after a short warm-up."""
    for _ in range(200):
        await op()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        await op()
    return (
        (time.process_time() - cpu) / n * 1e6,
        (time.perf_counter() - wall) / n * 1e6,
    )


async def measure(url: str, port: int, n: int) -> list[tuple[str, float, float]]:
    rows = []
    # (redis-py picks its hiredis parser when hiredis is installed; its pure-Python parser
    # can only be chosen through private classes, so it is no longer measured here.)
    for label in ("redis-py (hiredis)",):
        client = aioredis.Redis.from_url(url)
        await client.ping()

        def publish_one(c: aioredis.Redis = client) -> Awaitable[object]:
            return c.publish("b", PAYLOAD)

        def set_one(c: aioredis.Redis = client) -> Awaitable[object]:
            return c.set("b", PAYLOAD)

        rows.append((f"{label}: PUBLISH", *await timed(n, publish_one)))
        rows.append((f"{label}: SET", *await timed(n, set_one)))
        await client.aclose()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    command = b"*3\r\n$7\r\nPUBLISH\r\n$1\r\nb\r\n$200\r\n" + PAYLOAD + b"\r\n"

    async def raw() -> None:
        writer.write(command)
        await reader.readline()

    rows.append(("bare asyncio stream: PUBLISH", *await timed(n, raw)))
    writer.close()

    resp = RespClient(url)
    client = aioredis.Redis.from_url(url)

    def resp_publish() -> Awaitable[object]:
        return resp.execute("PUBLISH", "b", PAYLOAD)

    rows.append(("resp.py: PUBLISH", *await timed(n, resp_publish)))
    rows.append(("resp.py: SET", *await timed(n, lambda: resp.execute("SET", "b", PAYLOAD))))
    for label, publish in (
        ("resp.py", resp_publish),
        ("redis-py, hiredis", lambda: client.publish("b", PAYLOAD)),
    ):
        ten = lambda p=publish: asyncio.gather(*(p() for _ in range(10)))  # noqa: E731
        cpu, wall = await timed(n // 10, ten)
        rows.append((f"{label}: 10 PUBLISH at once, per command", cpu / 10, wall / 10))
    await resp.close()
    await client.aclose()
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--commands", type=int, default=5000)
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, redis_server(Path(tmp)) as (url, _):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        rows = uvloop.run(measure(url, port, a.commands))
    print("| client | CPU per command (µs) | wall per command (µs) |")
    print("|---|---:|---:|")
    for label, cpu, wall in rows:
        print(f"| {label} | {cpu:.1f} | {wall:.1f} |")


if __name__ == "__main__":
    main()
