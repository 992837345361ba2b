"""Every setting of `dicehall serve`, declared once: flag, environment variable, default, help.

`Config`'s fields are the table. `add_arguments` builds the command line from it (so
`dicehall serve --help` lists every flag with its variable and default), `Config.load`
reads the environment and the flags (a flag wins), and `markdown_table` writes the table
of docs/operations.md (a test keeps the two equal: `python -m dicehall.server.edge.settings` prints
it). Nothing here imports the server's dependencies, so the CLI can describe `serve` (and say
which extra is missing) on an install without them.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec

from dicehall.protocol.limits import Limits

T = TypeVar("T")


def setting(
    default: T,
    help: str,
    *,
    flag: str | None = None,
    env: str | None = None,
    metavar: str | None = None,
    choices: tuple[str, ...] | None = None,
) -> T:
    """A `Config` field with what the command line and the docs say of it. A field with
    neither flag nor variable is fixed in the code (listed in the docs all the same)."""
    return field(
        default=default,
        metadata={"help": help, "flag": flag, "env": env, "metavar": metavar, "choices": choices},
    )


_LIMITS = Limits()

WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::", "[::]"})
"""`--host` values that listen on every interface: they name no address to advertise."""


@dataclass
class Config:
    """Everything `dicehall serve` can set."""

    host: str = setting(
        "127.0.0.1",
        "Interface to listen on; `0.0.0.0` in a container.",
        flag="--host",
        env="DICEHALL_HOST",
    )
    port: int = setting(
        8000,
        "TCP port to listen on (with `--workers`, every worker listens on it).",
        flag="--port",
        env="DICEHALL_PORT",
    )
    workers: int = setting(
        1,
        "Worker processes, one per core to use. Above 1, the process started is a supervisor"
        " that serves nothing: the workers share `--port` (the kernel spreads new"
        " connections over them) and their rooms through Redis, so it needs `--redis` (see"
        ' "Several processes on one machine").',
        flag="--workers",
        env="DICEHALL_WORKERS",
        metavar="N",
    )
    worker_ports: int | None = setting(
        None,
        "With `--workers`: worker 1's own port; worker N listens on FIRST+N-1 as well, and"
        " advertises it (`--public-url`). Unset: `--port` + 1.",
        flag="--worker-ports",
        env="DICEHALL_WORKER_PORTS",
        metavar="FIRST",
    )
    public_url: str | None = setting(
        None,
        "This process's own WebSocket URL as clients reach it (`wss://play.example.org/p/a/ws`,"
        " a path the proxy routes to this process alone). Replies that seat a client in a"
        " room run here carry it, and clients that follow move there: no hop between"
        " processes. Unset: never advertised. With `--workers`, a template: `{port}` and"
        " `{worker}` become each worker's own port and number; unset, workers advertise"
        " `ws://HOST:PORT/ws` with `--host` and their own port (none on a wildcard host).",
        flag="--public-url",
        env="DICEHALL_PUBLIC_URL",
        metavar="URL",
    )
    redis: str | None = setting(
        None,
        "Redis URL: `redis://[[user]:password@]host:6379/0` (`rediss://` for TLS, set by"
        " `ssl_*` parameters), or `redis+sentinel://[[user]:password@]host:26379[,host:26379"
        '...]/SERVICE/0` for the primary Sentinel names (see "Redis URLs"). Set: scale-out,'
        " rooms shared with the other processes. Unset: embedded.",
        flag="--redis",
        env="DICEHALL_REDIS",
        metavar="URL",
    )
    redis_cluster: bool = setting(
        False,
        "The Redis URL names one node of a Redis Cluster (sharded pub/sub).",
        flag="--redis-cluster",
        env="DICEHALL_REDIS_CLUSTER",
    )
    redis_timeout: float = setting(
        1.0,
        "Seconds Redis may stay silent while a reply is awaited before the connection is"
        " given up and opened again (a black-holed network tells nobody); also the pace of"
        " the health ping that /readyz follows.",
        flag="--redis-timeout",
        env="DICEHALL_REDIS_TIMEOUT",
        metavar="SECONDS",
    )
    lease_ms: int = setting(
        2000,
        "Room ownership lease: a dead owner's rooms move after about this long.",
        flag="--lease-ms",
        env="DICEHALL_LEASE_MS",
    )
    durability: str = setting(
        "seen",
        "With --redis: `seen`, nothing is shown before it is written, and a room survives its"
        " process with every message anyone saw; `behind`, shown at once and written every"
        " --write-behind-ms, and a failover may take a room back to its last written point"
        " (docs/protocol.md, Epochs).",
        flag="--durability",
        env="DICEHALL_DURABILITY",
        choices=("seen", "behind"),
    )
    write_behind_ms: int = setting(
        50,
        "With --durability behind: how often a process sends its rooms' writes; a failover"
        " takes back what a room made after its last completed write.",
        flag="--write-behind-ms",
        env="DICEHALL_WRITE_BEHIND_MS",
    )
    secret: bytes | None = setting(
        None,
        "Key that signs seat tokens; every process of a deployment must share it. Unset or"
        " empty: the first process stores a random key in Redis (`dh:token-secret`) and all"
        " use it; embedded, a random key per start (tokens die with the process). No flag:"
        " a command line is visible to every user of the machine.",
        env="DICEHALL_SECRET",
    )
    db: str | None = setting(
        None,
        "History database (finished games, player identities, ratings): `sqlite:///path`"
        " or `postgresql://user:password@host/name`; `none`: keep no history. Unset,"
        " `dicehall serve` keeps it in `sqlite:///$XDG_DATA_HOME/dicehall/history.db`"
        " (`~/.local/share/dicehall/` by default); a server built in code keeps none.",
        flag="--db",
        env="DICEHALL_DB",
        metavar="URL",
    )
    turn_window: int = setting(
        30,
        "Seconds per turn window for rooms created without one.",
        flag="--turn-window",
        env="DICEHALL_TURN_WINDOW",
    )
    max_queue: int = setting(
        1024,
        "Frames queued for one connection before it is cut off as a slow consumer (4003).",
        flag="--max-queue",
        env="DICEHALL_MAX_QUEUE",
    )
    max_queue_bytes: int = setting(
        1 << 20,
        "Bytes (characters of JSON) queued for one connection, replies included, before it"
        " is cut off as a slow consumer (4003): what a client that never reads can pin.",
        flag="--max-queue-bytes",
        env="DICEHALL_MAX_QUEUE_BYTES",
    )
    hello_timeout_ms: int = setting(
        _LIMITS.hello_timeout_ms,
        "From a socket's opening to its `hello`; past it the server closes with 4005.",
        flag="--hello-timeout-ms",
        env="DICEHALL_HELLO_TIMEOUT_MS",
    )
    idle_timeout_ms: int = setting(
        _LIMITS.idle_timeout_ms,
        "Silence from a client (no message at all) before the server closes with 4004;"
        " clients ping to stay within it. Keep it above the load balancer's idle time-out"
        " minus the clients' ping interval. Both time-outs reach clients in `welcome.limits`.",
        flag="--idle-timeout-ms",
        env="DICEHALL_IDLE_TIMEOUT_MS",
    )
    forwarded_allow_ips: str = setting(
        "127.0.0.1,::1",
        "Proxies whose `X-Forwarded-For` names the client: addresses or networks,"
        " comma-separated; `*` for any (only where nothing but the proxy reaches the"
        " server: a client could name itself anyone). The client so named is the address"
        " the per-address bounds count; a proxy's own connections are not bounded per"
        " address at the door (`--max-pending-per-address`).",
        flag="--forwarded-allow-ips",
        env="DICEHALL_FORWARDED_ALLOW_IPS",
        metavar="ADDRESSES",
    )
    request_timeout: float = setting(
        5.0,
        "Seconds an HTTP request (a WebSocket's opening handshake too) may take to arrive"
        " whole, from its first byte; past it the connection is answered 408 and closed.",
        flag="--request-timeout",
        env="DICEHALL_REQUEST_TIMEOUT",
        metavar="SECONDS",
    )
    max_pending: int = setting(
        4096,
        "Connections one process holds that are not yet past `hello` (HTTP requests and"
        " their keep-alive included); past it the oldest waiting HTTP connection is"
        " answered 503 and closed for the new one.",
        flag="--max-pending",
        env="DICEHALL_MAX_PENDING",
        metavar="N",
    )
    max_pending_per_address: int = setting(
        256,
        "Of those, from one network address (an IPv6 address counts by its /64; loopback"
        " addresses are not bounded, as for rooms). 0: no bound.",
        flag="--max-pending-per-address",
        env="DICEHALL_MAX_PENDING_PER_ADDRESS",
        metavar="N",
    )
    demo_rooms: bool = setting(
        False,
        "Keep one open room per game with house bots in the other seats (`make serve`).",
        flag="--demo-rooms",
        env="DICEHALL_DEMO_ROOMS",
    )
    deflate: bool = setting(
        False,
        "Per-message deflate: off by default, it costs CPU for frames that are mostly small.",
        flag="--deflate",
        env="DICEHALL_DEFLATE",
    )
    log_level: str = setting(
        "info",
        "Log level; at `info` uvicorn logs every request, probes included (`warning` is quieter).",
        flag="--log-level",
        env="DICEHALL_LOG_LEVEL",
        choices=("critical", "error", "warning", "info", "debug"),
    )
    max_rooms: int = setting(
        10_000,
        "Rooms one process runs at most (any game, in play or not): past it `create` is"
        " refused with `overloaded` (4004) until some close.",
        flag="--max-rooms",
        env="DICEHALL_MAX_ROOMS",
        metavar="N",
    )
    max_rooms_per_address: int = setting(
        50,
        "Rooms whose game is not over that the connections from one network address may host"
        " in one process (an IPv6 address counts by its /64); past it `create` is refused"
        " with `too-many-rooms` (2013). 0: no bound. Loopback addresses are not bounded"
        ' (see "Bounds on rooms").',
        flag="--max-rooms-per-address",
        env="DICEHALL_MAX_ROOMS_PER_ADDRESS",
        metavar="N",
    )
    idle_seconds: float = setting(
        600.0, "Seconds before a room nobody is in and that saw no activity is closed."
    )
    empty_seconds: float = setting(
        60.0,
        "Seconds before a room whose game has not started, where no person is connected to"
        " a seat and nobody watches, is closed (from its creation, or from when the last"
        " person left or lost their connection).",
    )
    drain_seconds: float = setting(
        5.0, "Seconds the goodbyes may take on SIGTERM before the process stops."
    )

    @property
    def limits(self) -> Limits:
        """The limits announced in `welcome`. The server pings at least three times per
        idle time-out, so a client whose library answers pings is never idle."""
        return msgspec.structs.replace(
            _LIMITS,
            hello_timeout_ms=self.hello_timeout_ms,
            idle_timeout_ms=self.idle_timeout_ms,
            heartbeat_ms=max(1, min(_LIMITS.heartbeat_ms, self.idle_timeout_ms // 3)),
        )

    def worker_port(self, worker: int) -> int:
        """Worker `worker`'s own port (1-based): `--worker-ports` + worker - 1, else the
        ports right after `--port`. 0 (`--worker-ports 0`, or `--port 0` without it): any
        free port, a new one at each start of the worker."""
        if self.worker_ports is None:
            first = self.port + 1 if self.port else 0
        else:
            first = self.worker_ports
        return first + worker - 1 if first else 0

    def worker_url(self, worker: int, port: int) -> str | None:
        """What worker `worker`, listening on its own `port`, advertises: the `--public-url`
        template filled in, else that port on `--host`. None on a wildcard host: no
        address there says where clients reach the machine."""
        if self.public_url:
            url = self.public_url.replace("{port}", str(port))
            return url.replace("{worker}", str(worker))
        if self.host in WILDCARD_HOSTS:
            return None
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{port}/ws"

    def problem(self) -> str | None:
        """What makes these settings unusable together, in one line for the start-up
        error (None: nothing). Checked before anything starts, so a deployment that
        cannot work says so at once instead of running half of it."""
        if self.durability not in ("seen", "behind"):
            return f"--durability: expected seen or behind, got {self.durability!r}"
        if self.durability == "behind" and self.redis is None:
            return "--durability behind needs --redis: one process keeps its rooms in memory"
        if self.write_behind_ms < 1:
            return f"--write-behind-ms: expected at least 1, got {self.write_behind_ms}"
        n = self.workers
        if n < 1:
            return f"--workers: expected at least 1, got {n}"
        if n == 1:
            return None
        if self.redis is None:
            return (
                f"--workers {n} needs --redis: the workers share their rooms through Redis"
                ' (docs/operations.md, "Several processes on one machine")'
            )
        url = self.public_url
        if url and "{port}" not in url and "{worker}" not in url:
            return (
                f"--public-url: with --workers {n} it must hold {{port}} or {{worker}}, so that"
                " each worker advertises an address of its own"
            )
        first, last = self.worker_port(1), self.worker_port(n)
        if first == 0:
            return None
        ports = f"{first}-{last}"
        if not 0 < first <= last <= 65535:
            return f"--worker-ports: workers 1-{n} would listen on {ports}, not 1-65535"
        if first <= self.port <= last:
            return f"--worker-ports: the workers' own ports {ports} include --port {self.port}"
        return None

    @classmethod
    def load(
        cls, environ: Mapping[str, str] | None = None, args: argparse.Namespace | None = None
    ) -> Config:
        """Defaults, then DICEHALL_* variables, then the flags given on the command line.
        A variable whose flag is given is not read at all: an environment may hold a
        variable of the same name meant for something else (Kubernetes sets
        `DICEHALL_PORT=tcp://...` for a Service named `dicehall`)."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}  # (a value of each field's own type)
        for f, kind in _settings():
            env, flag = f.metadata["env"], f.metadata["flag"]
            if flag and args is not None and getattr(args, f.name, None) is not None:
                values[f.name] = getattr(args, f.name)
            elif env and environ.get(env):  # empty means unset
                values[f.name] = parse(kind, environ[env], env)
        return cls(**values)


def _settings() -> Iterator[tuple[dataclasses.Field[object], type]]:
    """Each field with its value type (`str | None` gives str)."""
    hints = typing.get_type_hints(Config)
    for f in dataclasses.fields(Config):
        kind = hints[f.name]
        if isinstance(kind, types.UnionType):
            kind = next(arg for arg in typing.get_args(kind) if arg is not type(None))
        yield f, kind


class SettingError(ValueError):
    """An environment variable with a value its setting cannot take."""


def parse(kind: type, text: str, name: str) -> object:
    if kind is bool:
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
        raise SettingError(f"{name}={text!r}: expected 1/true/yes/on or 0/false/no/off")
    if kind is bytes:
        return text.encode()
    try:
        return kind(text)
    except ValueError:
        raise SettingError(f"{name}={text!r}: expected {kind.__name__}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One flag per setting that has one; every default is None, so that a flag given
    wins over the environment and an absent one leaves it be."""
    for f, kind in _settings():
        meta = f.metadata
        if not meta["flag"]:
            continue
        source = f"env {meta['env']}; " if meta["env"] else ""
        help = f"{meta['help']} [{source}default {_shown(f.default)}]".replace("%", "%%")
        if kind is bool:
            parser.add_argument(
                meta["flag"], dest=f.name, action="store_const", const=True, help=help
            )
        else:
            parser.add_argument(
                meta["flag"],
                dest=f.name,
                type=kind,
                metavar=meta["metavar"],
                choices=meta["choices"],
                help=help,
            )


def _shown(default: object) -> str:
    if default is None:
        return "unset"
    return str(default).lower() if isinstance(default, bool) else str(default)


def markdown_table() -> str:
    """The settings table of docs/operations.md."""
    rows = ["| variable | flag | default | meaning |", "|---|---|---|---|"]
    for f, _ in _settings():
        meta = f.metadata
        fixed = "fixed" if not (meta["env"] or meta["flag"]) else "none"
        env = f"`{meta['env']}`" if meta["env"] else fixed
        flag = f"`{meta['flag']}`" if meta["flag"] else fixed
        if meta["metavar"] and meta["flag"]:
            flag = f"`{meta['flag']} {meta['metavar']}`"
        rows.append(f"| {env} | {flag} | {_shown(f.default)} | {meta['help']} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
