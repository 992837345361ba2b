"""Real Redis Sentinel for tests: a primary `redis-server`, replicas (`--replicaof`) and
`redis-sentinel` processes (Debian's package; `make redis` installs it), each on a free
loopback port with its own configuration in a temporary directory.

Failover is quick here (`down-after-milliseconds` 1000, `failover-timeout` 3000): a primary
killed with SIGKILL is replaced within a few seconds. Without the binaries every test that
asks for Sentinel fails, in CI and everywhere else, and says how to fix it.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import redis

from tests.support.redis import RedisServer, free_redis_port, redis_binary
from tests.support.tls import Certs

SERVICE = "dicehall"
"""The name the sentinels monitor the primary under."""
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 3000


@dataclass
class SentinelProcess:
    """One `redis-sentinel`, with its configuration file (which it rewrites as it learns)."""

    port: int
    workdir: Path
    proc: subprocess.Popen[bytes] | None = None
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.workdir / "sentinel.log"

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=5, decode_responses=True)

    def start(
        self,
        primary: RedisServer,
        quorum: int,
        down_after_ms: int = DOWN_AFTER_MS,
        failover_timeout_ms: int = FAILOVER_TIMEOUT_MS,
    ) -> None:
        lines = [
            f"port {self.port}",
            "bind 127.0.0.1",
            f"dir {self.workdir}",
            f"sentinel monitor {SERVICE} 127.0.0.1 {primary.port} {quorum}",
            f"sentinel down-after-milliseconds {SERVICE} {down_after_ms}",
            f"sentinel failover-timeout {SERVICE} {failover_timeout_ms}",
            f"sentinel parallel-syncs {SERVICE} 1",
        ]
        if primary.tls is not None:  # the sentinel reaches TLS data nodes over TLS
            certs = primary.tls
            lines += [
                f"tls-cert-file {certs.cert}",
                f"tls-key-file {certs.key}",
                f"tls-ca-cert-file {certs.ca}",
                "tls-replication yes",
            ]
        config = self.workdir / "sentinel.conf"
        config.write_text("\n".join(lines) + "\n")
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [redis_binary("redis-sentinel"), str(config)],
                cwd=self.workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait(10)

    def primary_port(self) -> int | None:
        """The port of the primary this sentinel names now (None: none yet)."""
        with self.client() as r:
            answer = r.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
        return int(answer[1]) if answer else None


@dataclass
class SentinelSet:
    """The data nodes (the first is the primary at the start) and their sentinels."""

    nodes: list[RedisServer]
    sentinels: list[SentinelProcess]

    def url(self, db: int = 0) -> str:
        """`redis+sentinel://` (`rediss+sentinel://` and the client's files with TLS)."""
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        tls = self.nodes[0].tls
        if tls is None:
            return f"redis+sentinel://{hosts}/{SERVICE}/{db}"
        return f"rediss+sentinel://{hosts}/{SERVICE}/{db}{tls.query()}"

    def primary(self) -> RedisServer:
        """The data node the first sentinel that answers names as the primary."""
        for sentinel in self.sentinels:
            with contextlib.suppress(redis.RedisError):
                port = sentinel.primary_port()
                return next(n for n in self.nodes if n.port == port)
        raise RuntimeError("no sentinel answers")

    def failed_over(self, old: RedisServer, timeout: float = 30.0) -> RedisServer:
        """Wait until every live sentinel names a primary other than `old`, and it says it
        is one; returns it."""
        deadline = time.monotonic() + timeout
        while True:
            ports = set()
            for sentinel in self.sentinels:
                if sentinel.proc is not None and sentinel.proc.poll() is None:
                    with contextlib.suppress(redis.RedisError):
                        ports.add(sentinel.primary_port())
            if len(ports) == 1 and old.port not in ports:
                node = next(n for n in self.nodes if n.port in ports)
                with contextlib.suppress(redis.RedisError), node.client() as r:
                    if r.execute_command("ROLE")[0] == b"master":
                        return node
            if time.monotonic() > deadline:
                raise RuntimeError(f"no failover from {old.port}: the sentinels say {ports}")
            time.sleep(0.05)  # (other processes' state: there is no event to await)


def _replicating(replica: RedisServer) -> bool:
    with replica.client() as r:
        info = r.info("replication")
    return bool(info.get("master_link_status") == "up")


def _ready(sentinel: SentinelProcess, replicas: int, sentinels: int) -> bool:
    """The sentinel knows every replica and every other sentinel, and could fail over."""
    assert sentinel.proc is not None
    if sentinel.proc.poll() is not None:
        raise RuntimeError(f"redis-sentinel exited: {sentinel.log.read_text()[-2000:]}")
    with contextlib.suppress(redis.RedisError), sentinel.client() as r:
        state = r.sentinel_master(SERVICE)
        return (
            int(state["num-slaves"]) >= replicas
            and int(state["num-other-sentinels"]) >= sentinels - 1
            and str(r.execute_command("SENTINEL", "CKQUORUM", SERVICE)).startswith("OK")
        )
    return False


@contextlib.contextmanager
def running_sentinels(
    replicas: int = 1,
    sentinels: int = 3,
    tls: Certs | None = None,
    down_after_ms: int = DOWN_AFTER_MS,
    failover_timeout_ms: int = FAILOVER_TIMEOUT_MS,
) -> Iterator[SentinelSet]:
    """A primary, `replicas` replicas of it and `sentinels` sentinels (quorum: a majority),
    once every sentinel knows them all and could fail over; with `tls`, every data node
    speaks TLS only (the sentinels reach them over TLS, clients reach the sentinels in
    plain TCP)."""
    with tempfile.TemporaryDirectory(prefix="dicehall-sentinel-") as tmp:
        nodes: list[RedisServer] = []
        watchers: list[SentinelProcess] = []
        try:
            for i in range(1 + replicas):
                workdir = Path(tmp) / f"node{i}"
                workdir.mkdir()
                extra: tuple[str, ...] = ("--repl-diskless-sync-delay", "0")  # (default 5 s)
                if i > 0:
                    extra += ("--replicaof", "127.0.0.1", str(nodes[0].port))
                    if tls is not None:
                        extra += ("--tls-replication", "yes")
                node = RedisServer(free_redis_port(), workdir, extra, tls=tls)
                nodes.append(node)
                node.start()
            _wait(lambda: all(_replicating(n) for n in nodes[1:]), "the replicas to sync")
            for i in range(sentinels):
                workdir = Path(tmp) / f"sentinel{i}"
                workdir.mkdir()
                sentinel = SentinelProcess(free_redis_port(), workdir)
                watchers.append(sentinel)
                sentinel.start(nodes[0], sentinels // 2 + 1, down_after_ms, failover_timeout_ms)
            _wait(
                lambda: all(_ready(s, replicas, sentinels) for s in watchers),
                "the sentinels to know each other and the replicas",
            )
            yield SentinelSet(nodes, watchers)
        finally:
            for sentinel in watchers:
                sentinel.stop()
            for node in nodes:
                node.stop()


def _wait(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)  # (other processes' state: there is no event to await)
