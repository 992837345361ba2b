"""`dicehall serve --workers N`: a supervisor that keeps N worker processes serving.

Why processes: one process runs on one core (asyncio), and processes already share rooms
through Redis (scale-out), so N processes on one machine are N cores of one deployment.
The supervisor, the process the operator starts, serves nothing and owns no room: it
starts the workers, passes SIGTERM and SIGINT on, starts again a worker that died (with a
back-off), and says what happens on its stdout, whatever the log level.

Sockets: for each start of a worker the supervisor binds two, `--port` with SO_REUSEPORT
(every worker has a socket of its own on that port, and the kernel spreads new
connections over them) and the worker's own port (which it advertises, so that seats
follow their rooms there), and hands them over (`pass_fds`) to `python -m
dicehall.server.edge.workers`, which gives them to uvicorn (`Server.run(sockets=...)`). Binding
them here says a port in use once, before any worker starts. The supervisor closes its copies at
once: a worker's sockets close with it, so while it is down or draining the kernel sends new
connections to the others instead of queueing them where nobody accepts.

The settings travel on the worker's stdin, one JSON line (the secret never shows in a
command line or an environment). The supervisor keeps that pipe open: its end closes
when the supervisor dies, however it dies (SIGKILL too), and a worker that reads EOF there
drains and exits as on SIGTERM, instead of serving on without anyone to restart it.

Each worker runs in a session of its own, as the history writer does: a Ctrl-C reaches the
supervisor alone, which passes one SIGTERM on (uvicorn takes a second SIGINT to mean
"quit without draining").
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import socket
import sys
import threading
import time

import msgspec

from .serving import run
from .settings import Config

BACKOFF = (0.5, 30.0)
"""Seconds before a worker that died is started again: the first, doubled each time it
dies again within STABLE_SECONDS of its start, up to the second. A worker that cannot
start (a port taken meanwhile, a database that refuses it) then costs a start every 30 s,
not a busy loop, and one that crashed once is back at once."""
STABLE_SECONDS = 30.0
"""A worker that ran this long before it died is started again after the first pause."""
STOP_SECONDS = 30.0
"""After SIGTERM, how long the workers may take (goodbyes, rooms handed over, the history
writer's last saves) before the supervisor kills what is left: Kubernetes' default grace
period, past which everything would be killed anyway."""


class WorkerStart(msgspec.Struct, frozen=True):
    """What the supervisor writes on a new worker's stdin, as one line of JSON."""

    worker: int
    """1 to N: names the worker in reports and log lines; its own port and address."""
    config: Config
    """The supervisor's settings, with the worker's own `public_url`, `workers` 1, and
    `demo_rooms` for worker 1 alone."""
    fds: tuple[int, ...]
    """The sockets it inherited (bound; uvicorn listens): the shared port's, then its own."""


@dataclasses.dataclass
class Listeners:
    """One start's worth of a worker's sockets: `--port` (shared) and its own port."""

    shared: socket.socket
    own: socket.socket

    @property
    def own_port(self) -> int:
        port: int = self.own.getsockname()[1]
        return port

    def close(self) -> None:
        self.shared.close()
        self.own.close()


def bound(host: str, port: int, shared: bool) -> socket.socket:
    """A TCP socket bound to host:port (the first address `host` names); `shared`: with
    SO_REUSEPORT, so that each worker's socket on `--port` gets its share of the new
    connections. Not listening yet: uvicorn listens once the worker's app has started,
    and only then does the kernel count the socket in (a worker still starting is given
    no connection to keep waiting)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if shared:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
    except BaseException:
        sock.close()
        raise
    return sock


def describe(code: int) -> str:
    """A worker's exit as a person reads it: `exit status 1`, `killed by SIGKILL`."""
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit status {code}"


def report(text: str) -> None:
    """One line about the workers on the supervisor's stdout (not a log: the few lines
    a supervisor has to say are wanted at every log level)."""
    print(f"dicehall serve: {text}", flush=True)


class Supervisor:
    """Keeps `config.workers` workers running until SIGTERM or SIGINT."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.port = config.port
        """The shared port (`--port 0`: the one the first bind got)."""
        self.procs: dict[int, asyncio.subprocess.Process] = {}
        """The running workers, by number."""
        self.stopped = asyncio.Event()
        """Set by SIGTERM or SIGINT: workers are stopped, none is started again."""
        self._deadline: asyncio.TimerHandle | None = None
        """When the workers still running after a signal are killed."""

    def bind(self, worker: int) -> Listeners:
        """Worker `worker`'s sockets; OSError (port in use, ...) names the address."""
        host = self.config.host
        address = f"{host}:{self.port}"
        try:
            shared = bound(host, self.port, shared=True)
            self.port = shared.getsockname()[1]
            address = f"{host}:{self.config.worker_port(worker)}"
            try:
                own = bound(host, self.config.worker_port(worker), shared=False)
            except BaseException:
                shared.close()
                raise
        except OSError as exc:
            raise OSError(exc.errno, f"worker {worker} cannot listen on {address}: {exc}") from exc
        return Listeners(shared, own)

    async def run(self) -> int:
        """0 once every worker has stopped as asked; 1 if one could not be started at
        all, or stopped otherwise."""
        n = self.config.workers
        first: list[Listeners] = []
        try:
            for worker in range(1, n + 1):
                first.append(self.bind(worker))
        except OSError as exc:
            for listeners in first:
                listeners.close()
            print(f"dicehall serve: {exc.strerror}", file=sys.stderr)
            return 1
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop, sig)
        own = ", ".join(str(listeners.own_port) for listeners in first)
        report(
            f"supervisor (pid {os.getpid()}) starting {n} workers on"
            f" {self.config.host}:{self.port}, and each on its own port: {own}"
        )
        clean = await asyncio.gather(*(self.keep(i + 1, first[i]) for i in range(n)))
        if self._deadline is not None:
            self._deadline.cancel()
        report("every worker has stopped")
        return 0 if all(clean) else 1

    def stop(self, sig: int) -> None:
        """SIGTERM or SIGINT: every worker gets SIGTERM (and drains); none is started
        again. A second signal sends SIGTERM again, which changes nothing."""
        if not self.stopped.is_set():
            self.stopped.set()
            report(f"{signal.Signals(sig).name}: stopping the workers (they drain first)")
            self._deadline = asyncio.get_running_loop().call_later(
                STOP_SECONDS, self._kill_the_rest
            )
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)

    def _kill_the_rest(self) -> None:
        for worker, proc in self.procs.items():
            report(f"worker {worker} (pid {proc.pid}) still running after {STOP_SECONDS:g} s")
            with contextlib.suppress(ProcessLookupError):
                proc.kill()

    async def _stopped_within(self, seconds: float) -> bool:
        """Wait `seconds` unless the supervisor is stopped first; whether it was."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stopped.wait(), seconds)
        return self.stopped.is_set()

    async def keep(self, worker: int, listeners: Listeners | None) -> bool:
        """Keep worker `worker` running until the supervisor stops; whether it stopped
        cleanly then (exit status 0, or the SIGTERM it was sent before it could drain)."""
        pause = BACKOFF[0]
        while not self.stopped.is_set():
            started = time.monotonic()
            proc: asyncio.subprocess.Process | None = None
            try:
                listeners = listeners or self.bind(worker)
                proc = await self.start(worker, listeners)
            except OSError as exc:
                report(f"{exc.strerror or exc}; trying again in {pause:g} s")
            finally:
                if listeners is not None:
                    listeners.close()  # (the worker has its own copies)
                listeners = None
            if proc is not None:
                code = await proc.wait()
                del self.procs[worker]
                assert proc.stdin is not None
                proc.stdin.close()
                if self.stopped.is_set():
                    report(f"worker {worker} (pid {proc.pid}) stopped ({describe(code)})")
                    return code in (0, -signal.SIGTERM)
                ran = time.monotonic() - started
                if ran >= STABLE_SECONDS:
                    pause = BACKOFF[0]
                report(
                    f"worker {worker} (pid {proc.pid}) died after {ran:.1f} s"
                    f" ({describe(code)}); starting it again in {pause:g} s"
                )
            if await self._stopped_within(pause):
                break
            pause = min(pause * 2, BACKOFF[1])
        if listeners is not None:  # (stopped before its first start)
            listeners.close()
        return True

    async def start(self, worker: int, listeners: Listeners) -> asyncio.subprocess.Process:
        """A new worker on `listeners`, told its settings."""
        url = self.config.worker_url(worker, listeners.own_port)
        # (demo rooms: worker 1's job alone, or each worker would open one per game)
        demo_rooms = self.config.demo_rooms and worker == 1
        config = dataclasses.replace(self.config, workers=1, public_url=url, demo_rooms=demo_rooms)
        fds = (listeners.shared.fileno(), listeners.own.fileno())
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                *(
                    "-m",
                    "dicehall.server.edge.workers",
                    "worker",
                    str(worker),
                ),  # (the arguments: for `ps`)
                stdin=asyncio.subprocess.PIPE,
                pass_fds=fds,
                start_new_session=True,
            )
        except OSError as exc:
            raise OSError(exc.errno, f"worker {worker} cannot start: {exc}") from exc
        self.procs[worker] = proc
        assert proc.stdin is not None
        proc.stdin.write(msgspec.json.encode(WorkerStart(worker, config, fds)) + b"\n")
        with contextlib.suppress(ConnectionError):  # (it died at once: `wait` will say)
            await proc.stdin.drain()
        report(
            f"worker {worker} started (pid {proc.pid}) on {self.config.host}:{self.port}"
            f" and :{listeners.own_port}, advertising {url or 'no address'}"
        )
        if self.stopped.is_set():  # (the signal came while it was being started)
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        return proc


def supervise(config: Config) -> int:
    """`dicehall serve --workers N` (settings already checked): the exit status."""
    if not config.public_url and config.worker_url(1, 1) is None:
        print(
            f"dicehall serve: --host {config.host} names no address to advertise: seats stay"
            " on the worker the kernel gave them, forwarded to their rooms' workers over"
            " Redis; --public-url 'ws://HOST:{port}/ws' lets them follow their rooms",
            file=sys.stderr,
        )
    return asyncio.run(Supervisor(config).run())


# --- the worker's side -------------------------------------------------------------------


def _read_line(fd: int) -> bytes:
    """The start message, read from the file descriptor itself: `sys.stdin`'s buffer
    must stay untouched, since a thread keeps reading the descriptor (below) and the
    interpreter takes that buffer's lock when it exits."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    return data


def _drain_when_orphaned(fd: int) -> None:
    """SIGTERM to this process once the supervisor's end of `fd` closes (it exited or
    was killed): the worker drains and exits, as when the supervisor passes SIGTERM on."""

    def watch() -> None:
        while os.read(fd, 4096):  # (nothing more is ever sent: this waits for EOF)
            pass
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="dicehall-supervisor-watch", daemon=True).start()


def worker_main() -> int:
    """`python -m dicehall.server.edge.workers`, as the supervisor starts it: serve on the inherited
    sockets with the settings read from stdin."""
    line = _read_line(0)
    if not line:
        print(
            "server.workers: no start message on stdin (`dicehall serve --workers N` starts"
            " workers)",
            file=sys.stderr,
        )
        return 2
    start = msgspec.json.decode(line, type=WorkerStart)
    _drain_when_orphaned(0)
    sockets = [socket.socket(fileno=fd) for fd in start.fds]
    return run(start.config, sockets, f"worker {start.worker}")


if __name__ == "__main__":
    sys.exit(worker_main())
