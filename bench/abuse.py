"""What abusive sockets cost a real `dicehall serve` and the player seated on it (issue 39).

    python -m bench.abuse [--mode ping|ping-read|slowloris] [--abusers 1] [--seconds 10]
                          [--tree DIR]

A player sends a `ping` request ten times a second and times each reply, while `--abusers`
processes attack the same server:

- `ping`: each sends 125-byte WebSocket pings as fast as it can and never reads; when the
  server cuts it, it connects again (what the black-box probe saw grow the server by
  ~44 MiB/s);
- `ping-read`: the same, but reading what the server sends (the probe's four such
  connections cost 8.8 CPU-seconds in 10 s);
- `slowloris`: each opens connections that send half a request and then nothing, 2,000
  at a time, opening more as the server closes them (the probe's 20,000 took every
  descriptor the process had).

Printed: the server's resident memory at the start and at its peak, its CPU over the run,
the player's round trips (p50, p99, max) and how many of its pings went unanswered, the
connections the server cut (for `slowloris`, the longest any half-open one stayed open),
and how many of the `/healthz` asked twice a second during the attack answered 200.
`--tree DIR` serves from another checkout (an older build, for a before-and-after
comparison).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import socket
import time
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect
from websockets.typing import Subprotocol

from tests.support.frames import client_frame
from tests.support.servers import ROOT, running_server

from .history_load import cpu_seconds

HANDSHAKE = (
    b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    b"Sec-WebSocket-Protocol: dicehall.v1.json\r\n\r\n"
)
PING = 0x9


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def flood(port: int, seconds: float, read: bool, cuts: Any) -> None:
    """One abuser: pings as fast as the socket takes them, a new connection when cut."""
    frames = b"".join(client_frame(PING, os.urandom(125)) for _ in range(200))
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(HANDSHAKE)
            sock.settimeout(0.5)
            while time.monotonic() < end:
                sock.sendall(frames)
                if read:
                    with contextlib.suppress(TimeoutError, BlockingIOError):
                        sock.setblocking(False)
                        while sock.recv(1 << 20):
                            pass
                    sock.settimeout(0.5)
            continue
        with cuts.get_lock():
            cuts.value += 1


def slowloris(port: int, seconds: float, held: Any) -> None:
    """One abuser: half-open connections, up to 2,000 at once, opened again as they close;
    `held` ends as the longest any of them stayed open, in seconds (the run's length: the
    server never closed it)."""
    socks: list[tuple[socket.socket, float]] = []
    longest = 0.0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        alive = []
        for sock, opened in socks:
            try:
                sock.setblocking(False)
                if sock.recv(1024) == b"":
                    raise ConnectionError
            except BlockingIOError:
                alive.append((sock, opened))
                continue
            except OSError:
                pass
            longest = max(longest, time.monotonic() - opened)
            sock.close()
        socks = alive
        while len(socks) < 2000:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=1)
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            except OSError:
                break
            socks.append((sock, time.monotonic()))
        time.sleep(0.2)
    now = time.monotonic()
    for sock, opened in socks:
        longest = max(longest, now - opened)
        sock.close()
    with held.get_lock():
        held.value = max(held.value, longest)


def healthz(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            return sock.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


async def player(url: str, seconds: float) -> tuple[list[float], int]:
    """Round trips of `ping` requests, ten a second; and how many got no reply in 5 s."""
    times: list[float] = []
    lost = 0
    async with connect(url, subprotocols=[Subprotocol("dicehall.v1.json")]) as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "hello", "id": 1, "client": "bench-player"}))
        await ws.recv()
        end = time.monotonic() + seconds
        rid = 1
        while time.monotonic() < end:
            rid += 1
            sent = time.monotonic()
            await ws.send(json.dumps({"type": "ping", "id": rid}))
            try:
                async with asyncio.timeout(5):
                    while json.loads(await ws.recv()).get("id") != rid:
                        pass
                times.append(time.monotonic() - sent)
            except TimeoutError:
                lost += 1
            await asyncio.sleep(max(0.0, 0.1 - (time.monotonic() - sent)))
    return times, lost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=("ping", "ping-read", "slowloris"), default="ping")
    parser.add_argument("--abusers", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--tree", type=Path, default=ROOT)
    args = parser.parse_args()
    counter = multiprocessing.Value("d" if args.mode == "slowloris" else "i", 0)
    with running_server(cwd=args.tree) as server:
        pid = server.proc.pid
        start_rss, start_cpu = rss_mib(pid), cpu_seconds(pid)
        if args.mode == "slowloris":
            target: Any = slowloris
            extra: tuple[Any, ...] = (counter,)
        else:
            target, extra = flood, (args.mode == "ping-read", counter)
        abusers = [
            multiprocessing.Process(target=target, args=(server.port, args.seconds, *extra))
            for _ in range(args.abusers)
        ]
        for process in abusers:
            process.start()
        peak, healthy, probes = start_rss, 0, 0

        async def watch() -> tuple[list[float], int]:
            nonlocal peak, healthy, probes
            task = asyncio.create_task(player(server.ws, args.seconds))
            while not task.done():
                peak = max(peak, rss_mib(pid))
                probes += 1
                healthy += await asyncio.to_thread(healthz, server.port)
                await asyncio.sleep(0.5)
            return await task

        times, lost = asyncio.run(watch())
        cpu = cpu_seconds(pid) - start_cpu
        for process in abusers:
            process.join()
    times.sort()
    what = "longest a half-open one stayed, s" if args.mode == "slowloris" else "connections cut"
    print(
        f"{args.mode} x{args.abusers}, {args.seconds:.0f} s, tree {args.tree}:"
        f" RSS {start_rss:.0f} -> peak {peak:.0f} MiB; server CPU {cpu:.1f} s;"
        f" player p50 {times[len(times) // 2] * 1000:.1f} ms,"
        f" p99 {times[int(len(times) * 0.99)] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms,"
        f" {lost} unanswered of {len(times) + lost}; {what}: {counter.value:.0f};"
        f" /healthz {healthy}/{probes}"
    )


if __name__ == "__main__":
    main()
