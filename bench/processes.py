"""The processes a benchmark starts (redis-server, `dicehall serve`) and what it reads of
them: CPU time and sleeps from /proc, Redis's command counts. Shared by the benchmarks
that measure a server from outside (bench.redis_hop, bench.redis_load, ...)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def cpu_seconds(pid: int) -> float:
    """utime + stime of `pid` so far (fields 14 and 15 of /proc/<pid>/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def sleeps(pid: int) -> int:
    """Voluntary context switches of all of `pid`'s threads so far: each is the process
    going to sleep (an event loop waiting in epoll) and, later, being woken."""
    total = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            for line in status.read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    total += int(line.split()[1])
    return total


def _wait(ready: Any, what: str, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode}")
        with contextlib.suppress(OSError):
            if ready():
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not come up")
        time.sleep(0.05)  # a process starting up offers no event to wait on


def stop(proc: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM, then SIGKILL if `proc` has not ended within `grace` seconds (a drain that
    hangs must not hang the bench)."""
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def redis_calls(url: str) -> dict[str, int]:
    """Redis's count of every command it ran since it started, by command name."""
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"INFO commandstats\r\n")
        data = b""
        while not data.endswith(b"\r\n") or data.count(b"\r\n") < 2:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            header, _, body = data.partition(b"\r\n")
            if header.startswith(b"$") and len(body) >= int(header[1:]) + 2:
                break
    calls: dict[str, int] = {}
    for line in data.decode().splitlines():
        if line.startswith("cmdstat_"):
            name, _, fields = line[len("cmdstat_") :].partition(":")
            calls[name] = int(fields.split("calls=", 1)[1].split(",", 1)[0])
    return calls


@contextlib.contextmanager
def redis_server(workdir: Path) -> Iterator[tuple[str, int]]:
    exe = shutil.which("redis-server")
    if exe is None:
        raise SystemExit("redis-server is missing: `make redis` installs it")
    port = free_port()
    args = ["--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    args += ["--appendonly", "yes", "--appendfsync", "everysec", "--dir", str(workdir)]
    proc = subprocess.Popen([exe, *args], stdout=subprocess.DEVNULL)

    def pong() -> bool:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")

    try:
        _wait(pong, "redis-server", proc)
        yield f"redis://127.0.0.1:{port}/0", proc.pid
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def dicehall_server(*args: str, advertise: bool = False) -> Iterator[tuple[str, int]]:
    """`dicehall serve` on a free port; yields its WebSocket URL and pid. `advertise`: it
    says so with `--public-url` (clients that follow rooms move to it)."""
    port = free_port()
    cmd = [sys.executable, "-m", "dicehall.clients.cli", "serve", "--port", str(port)]
    if advertise:
        cmd += ["--public-url", f"ws://127.0.0.1:{port}/ws"]
    proc = subprocess.Popen([*cmd, "--log-level", "warning", *args], cwd=ROOT)

    def healthy() -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
            status: int = r.status
            return status == 200

    try:
        _wait(healthy, "dicehall serve", proc)
        yield f"ws://127.0.0.1:{port}/ws", proc.pid
    finally:
        stop(proc, 20)
