"""A real PostgreSQL for the tests: Debian's server binaries, a new cluster in a temporary
directory, on a free loopback port, gone when the tests end.

Never a fake and never the machine's own cluster: the history store is proven against
the server it will meet, and a test may stop or cut its database without touching anyone
else's. `make postgres` installs the package when missing. PostgreSQL refuses to run as
root, and CI runs as root: then the cluster belongs to the `postgres` system user the
package creates, and its processes run as that user.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

USER = "dicehall"
"""The cluster's superuser (trust authentication on loopback: a throwaway cluster)."""


def postgres_bin() -> Path:
    """The newest installed server's binaries (Debian keeps them out of PATH)."""
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/postgres"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if versions:
        return versions[-1].parent
    found = shutil.which("postgres")
    if found is None:
        raise RuntimeError("PostgreSQL is not installed; `make postgres` installs it (apt-get)")
    return Path(found).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _run_as() -> tuple[int, int] | None:
    """The user and group to run the server as: the `postgres` user's when we are root."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("postgres")
    except KeyError as exc:
        raise RuntimeError("running as root needs the `postgres` user (make postgres)") from exc
    return entry.pw_uid, entry.pw_gid


@dataclass
class PostgresServer:
    """One `postgres` process; `stop()` then `start()` brings the same cluster back."""

    workdir: Path
    port: int = field(default_factory=_free_port)
    proc: subprocess.Popen[bytes] | None = None
    _names: Iterator[int] = field(default_factory=lambda: count(1))

    @property
    def data(self) -> Path:
        return self.workdir / "data"

    @property
    def log(self) -> Path:
        return self.workdir / "postgres.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def init(self) -> None:
        owner = _run_as()
        self.workdir.mkdir(parents=True, exist_ok=True)
        if owner is not None:
            os.chown(self.workdir, *owner)
        done = subprocess.run(
            [
                str(postgres_bin() / "initdb"),
                *("-D", str(self.data), "-U", USER, "-A", "trust", "-E", "UTF8"),
                "--no-sync",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.workdir,
            user=owner[0] if owner else None,
            group=owner[1] if owner else None,
        )
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {done.stderr[-2000:]}")

    def start(self) -> None:
        owner = _run_as()
        with self.log.open("ab") as log:
            if owner is not None:
                os.chown(self.log, *owner)
            self.proc = subprocess.Popen(
                [
                    str(postgres_bin() / "postgres"),
                    *("-D", str(self.data), "-p", str(self.port), "-k", str(self.workdir)),
                    *("-c", "listen_addresses=127.0.0.1"),
                    # A test cluster: durability against a power cut is not what is tested
                    # (a killed *server process* still loses nothing it committed).
                    *("-c", "fsync=off", "-c", "synchronous_commit=off"),
                    *("-c", "full_page_writes=off", "-c", "max_connections=200"),
                ],
                cwd=self.workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
                user=owner[0] if owner else None,
                group=owner[1] if owner else None,
            )
        deadline = time.monotonic() + 60
        while not self._accepts():
            if self.proc.poll() is not None:
                raise RuntimeError(f"postgres exited: {self.log.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError("postgres did not accept connections in 60 s")
            time.sleep(0.05)

    def _accepts(self) -> bool:
        done = subprocess.run(
            [str(postgres_bin() / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
            capture_output=True,
            timeout=10,
        )
        return done.returncode == 0

    def fresh_database(self) -> str:
        """The URL of a new, empty database: a test of its own."""
        name = f"t{next(self._names)}"
        self.psql(f"CREATE DATABASE {name}")
        return self.url(name)

    def psql(self, sql: str, database: str = "postgres") -> str:
        done = subprocess.run(
            [
                str(postgres_bin() / "psql"),
                *("-h", "127.0.0.1", "-p", str(self.port), "-U", USER, "-d", database),
                *("-v", "ON_ERROR_STOP=1", "-At", "-c", sql),
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return done.stdout

    def stop(self) -> None:
        """Immediate shutdown (SIGQUIT): the server is gone at once, as a crash would be."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(3)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    with tempfile.TemporaryDirectory(prefix="dicehall-pg-") as tmp:
        os.chmod(tmp, 0o755)  # (the `postgres` user must reach the cluster inside)
        server = PostgresServer(Path(tmp) / "cluster")
        server.init()
        try:
            server.start()
            yield server
        finally:
            server.stop()
