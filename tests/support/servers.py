"""Real server processes for tests: `dicehall serve` on a free loopback port.

A server's output (stdout and stderr) goes to a file, not a pipe: a pipe nobody reads
blocks a chatty server once it is full, and one left open is a ResourceWarning. The file
outlives the process for the test to read (`ServerProcess.output()`), and an error that
leaves `running_server()` carries its end as a note."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def bindable(port: int) -> bool:
    """Nothing listens on (or holds) 127.0.0.1:`port` now."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


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


STOP_SECONDS = 15.0
"""How long a server the test is done with may take to stop on SIGTERM before it is killed."""
OUTPUT_TAIL = 4000
"""Characters of a server's output an error message quotes (its end)."""


@dataclass
class ServerProcess(Listener):
    proc: subprocess.Popen[bytes]
    log: Path
    """Where the server's stdout and stderr go (see `output()`)."""

    def terminate(self, timeout: float = 15.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def output(self) -> str:
        """Everything the server has printed so far (all of it once it has exited)."""
        return self.log.read_bytes().decode(errors="replace")

    def output_tail(self) -> str:
        return self.output()[-OUTPUT_TAIL:]


@contextlib.contextmanager
def running_server(
    *args: str,
    env: dict[str, str] | None = None,
    command: Sequence[str] = (sys.executable, "-m", "dicehall.clients.cli"),
    cwd: Path = ROOT,
    advertise: bool = False,
    port: int | None = None,
) -> Iterator[ServerProcess]:
    """`dicehall serve ARGS` on `port` (default: a free one; `command` is how to run
    `dicehall`); `advertise`: with `--public-url` its own WebSocket URL."""
    port = port or free_port()
    if advertise:
        args = (*args, "--public-url", Listener(port).ws)
    with tempfile.TemporaryDirectory(prefix="dicehall-serve-") as tmp:
        log = Path(tmp) / "output.log"
        with log.open("ab") as out:  # the child keeps its own copy of the descriptor
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
                env={**os.environ, "XDG_DATA_HOME": tmp, **(env or {})},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        server = ServerProcess(port, proc, log)
        try:
            deadline = time.monotonic() + 30
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"server exited with {proc.returncode}")
                with contextlib.suppress(OSError):
                    if server.get("/healthz")[0] == 200:
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError("server did not become healthy")
                time.sleep(0.05)
            yield server
        except Exception as exc:
            exc.add_note(f"output of `dicehall serve` on port {port}:\n{server.output_tail()}")
            raise
        finally:
            if proc.poll() is None:  # a clean stop, as an operator's: the history writer
                proc.send_signal(signal.SIGTERM)  # finishes, coverage keeps what it measured
                try:
                    proc.wait(STOP_SECONDS)
                except subprocess.TimeoutExpired:
                    proc.kill()
            proc.wait(10)


@contextlib.contextmanager
def dicehall_bot(*args: str) -> Iterator[subprocess.Popen[str]]:
    """`dicehall bot ARGS` as a user runs it, its output piped for the test to read
    (`communicate()`); killed if still running at the end, its pipes closed."""
    with subprocess.Popen(
        [sys.executable, "-m", "dicehall.clients.cli", "bot", *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)


async def run_async(
    args: Sequence[str], timeout: float, cwd: Path = ROOT, env: Mapping[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    """Run a program to its end without blocking the event loop: its exit status, stdout
    and stderr. Past `timeout` it is killed, reaped and its pipes read to their end (so
    nothing is left open), and TimeoutError is raised."""
    proc = await asyncio.create_subprocess_exec(
        *args,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(timeout):
            out, err = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out, err
