"""Real server processes for tests: `dicehall serve` on a free loopback port."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Listener:
    """Something listening on a loopback port: its URLs, and a GET that reads errors too."""

    port: int

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(self.http + path, timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()


@dataclass
class ServerProcess(Listener):
    proc: subprocess.Popen[str]

    def terminate(self, timeout: float = 15.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)


@contextlib.contextmanager
def running_server(
    *args: str,
    env: dict[str, str] | None = None,
    command: Sequence[str] = (sys.executable, "-m", "clients.cli"),
    cwd: Path = ROOT,
    advertise: bool = False,
    port: int | None = None,
) -> Iterator[ServerProcess]:
    """`dicehall serve ARGS` on `port` (default: a free one; `command` is how to run
    `dicehall`); `advertise`: with `--public-url` its own WebSocket URL."""
    port = port or free_port()
    if advertise:
        args = (*args, "--public-url", Listener(port).ws)
    proc = subprocess.Popen(
        [
            *command,
            "serve",
            "--port",
            str(port),
            "--log-level",
            "warning",
            *args,
        ],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    server = ServerProcess(port, proc)
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited: {proc.stdout.read() if proc.stdout else ''}")
            with contextlib.suppress(OSError):
                if server.get("/healthz")[0] == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("server did not become healthy")
            time.sleep(0.05)
        yield server
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def dicehall_bot(*args: str) -> subprocess.Popen[str]:
    """`dicehall bot ARGS` as a user runs it, its output piped for the test to read."""
    return subprocess.Popen(
        [sys.executable, "-m", "clients.cli", "bot", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
