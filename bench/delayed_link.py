"""redis-server across a real network link with a delay, as between two machines of one
data centre (issue 35): what loopback hides. Shared by bench.redis_delayed and
tests/e2e/test_redis_latency.py.

The link: a network namespace of its own holding redis-server, joined to this one by a veth
pair with a /30 of 10.0.0.0/8 that no address or route of this machine overlaps; both ends
are named after this process (`dhnl-PID-N`), and everything is torn down on the way out,
even after Ctrl-C or SIGTERM (`exit_on_sigterm`). A run that finds the namespaces or veth
ends of a process that is gone (one killed with -9) ends the processes left in them and
removes them first.

The delay, `delay_ms` each way, comes from `tc qdisc ... netem` on both veth ends when the
kernel has netem (probed by adding it). A kernel without qdiscs (no modules, as on this
machine) gets a relay instead: a TCP proxy that runs inside the namespace next to
redis-server (`python -m bench.delayed_link relay`) and forwards each chunk no earlier
than `delay_ms` after it read it, in each direction, in order. One thread reads every
socket and stamps each chunk with its due time; one sender thread takes them in that
order, sleeps until each is due and sends it (asyncio's timers are about 1 ms coarse: the
sender's timer slack is 1 ns, its sleeps end early by what they overshoot on average and
the last µs are spun). It runs in the real-time class (SCHED_FIFO 1; else at nice -10):
a wire is not slowed by the machine's load, and at 300 rooms on a busy 2-core VM the
relay sent 1 % of its chunks over 2 ms late at nice -10, over 0.1 ms late in SCHED_FIFO.
Which of the two is in use, and the PING round trip measured across the link with and
without it, are in `DelayedRedis`; so is how late the relay sent chunks under load.
"""

from __future__ import annotations

import contextlib
import ctypes
import ipaddress
import itertools
import os
import queue
import random
import re
import select
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from types import FrameType

from bench.processes import ROOT, _wait, stop

PREFIX = "dhnl"
NAMES = re.compile(rf"^{PREFIX}-?(\d+)-(\d+)[hp]?$")
"""A namespace `dhnl-PID-N` or a veth end `dhnlPID-Nh` / `dhnlPID-Np` (15 characters at
most: an interface name's limit)."""
_runs = itertools.count()


class LinkUnavailable(RuntimeError):
    """This machine cannot make the link (not root, no `ip`, no namespaces)."""


@dataclass(frozen=True)
class Link:
    namespace: str
    host_veth: str
    peer_veth: str
    host_ip: str
    """This namespace's end."""
    peer_ip: str
    """The far end, in `namespace`, where redis-server listens."""


@dataclass(frozen=True)
class DelayedRedis:
    link: Link
    port: int
    """Where Redis answers across the delayed link (on `link.peer_ip`)."""
    pid: int
    """redis-server's (for its CPU time)."""
    delay_ms: float
    method: str
    """"netem" or "relay"."""
    bare_rtt_ms: list[float]
    """PING round trips across the veth pair before the delay was added."""
    rtt_ms: list[float]
    """PING round trips across the delayed link."""
    relay: subprocess.Popen[bytes] | None = None

    def relay_lateness(self) -> dict[str, float] | None:
        """How late the relay sent chunks (µs after their due time: n, p50, p99, max)
        since the last call; None with netem. The relay's own queueing under load, which
        the idle PING round trip does not show."""
        if self.relay is None or self.relay.stdout is None:
            return None
        self.relay.send_signal(signal.SIGUSR1)
        ready, _, _ = select.select([self.relay.stdout], [], [], 10)
        line = self.relay.stdout.readline().decode() if ready else ""
        if not line.startswith("lateness "):
            raise RuntimeError(f"the relay did not report ({line!r})")
        return {k: float(v) for k, v in (f.split("=") for f in line.split()[1:])}

    @property
    def url(self) -> str:
        return f"redis://{self.link.peer_ip}:{self.port}/0"

    def url_db(self, db: int) -> str:
        return f"redis://{self.link.peer_ip}:{self.port}/{db}"

    @property
    def added_rtt_ms(self) -> float:
        """The round trip the delay added (medians, delayed minus bare)."""
        return median(self.rtt_ms) - median(self.bare_rtt_ms)

    def summary(self) -> str:
        bare, rtt = sorted(self.bare_rtt_ms), sorted(self.rtt_ms)
        return (
            f"link: {self.method} ({self.delay_ms:g} ms each way configured); PING round "
            f"trip p50 {median(rtt):.3f} ms, p99 {rtt[int(0.99 * len(rtt))]:.3f} ms across "
            f"it, {median(bare):.3f} ms on the bare veth pair: added {self.added_rtt_ms:.3f} "
            f"ms, {self.added_rtt_ms / 2:.3f} ms one way"
        )


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except OSError as exc:  # (no `ip` or `tc` at all)
        raise LinkUnavailable(f"`{' '.join(cmd)}`: {exc}") from exc


def _must(*cmd: str) -> None:
    done = _run(*cmd)
    if done.returncode != 0:
        raise LinkUnavailable(f"`{' '.join(cmd)}` failed: {done.stderr.strip()}")


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def _namespaces() -> list[str]:
    return [line.split()[0] for line in _run("ip", "netns", "list").stdout.splitlines() if line]


def _kill_inside(namespace: str) -> None:
    """SIGKILL every process left in `namespace` (this bench's redis-server and relay)."""
    for pid in _run("ip", "netns", "pids", namespace).stdout.split():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


def sweep_leftovers() -> list[str]:
    """Remove the namespaces and veth ends of runs whose process is gone; their names."""
    gone: list[str] = []
    for ns in _namespaces():
        if (m := NAMES.match(ns)) and not _alive(int(m[1])):
            _kill_inside(ns)
            _run("ip", "netns", "delete", ns)
            gone.append(ns)
    for line in _run("ip", "-o", "link", "show").stdout.splitlines():
        name = line.split(":")[1].strip().split("@")[0] if line.count(":") > 1 else ""
        if (m := NAMES.match(name)) and not _alive(int(m[1])):
            _run("ip", "link", "delete", name)
            gone.append(name)
    return gone


def _free_subnet() -> ipaddress.IPv4Network:
    """A /30 of 10.0.0.0/8 that overlaps no address or route of this namespace."""
    used = []
    for line in _run("ip", "-4", "-o", "addr", "show").stdout.splitlines():
        used.append(ipaddress.ip_network(line.split()[3], strict=False))
    for line in _run("ip", "-4", "route", "show", "table", "all").stdout.splitlines():
        dest = line.split()[0]
        if dest[0].isdigit():
            used.append(ipaddress.ip_network(dest, strict=False))
    for _ in range(1000):
        a, b, c = (random.randrange(n) for n in (256, 256, 64))
        net = ipaddress.IPv4Network(f"10.{a}.{b}.{4 * c}/30")
        if not any(net.overlaps(u) for u in used):
            return net
    raise LinkUnavailable("no free /30 in 10.0.0.0/8")


@contextlib.contextmanager
def namespaced_link() -> Iterator[Link]:
    """A new network namespace joined to this one by a veth pair; removed on the way out."""
    if os.geteuid() != 0:
        raise LinkUnavailable("network namespaces need root")
    sweep_leftovers()
    n = next(_runs)
    pid = os.getpid()
    hosts = list(_free_subnet().hosts())
    link = Link(
        f"{PREFIX}-{pid}-{n}", f"{PREFIX}{pid}-{n}h", f"{PREFIX}{pid}-{n}p", *map(str, hosts)
    )
    try:
        _must("ip", "netns", "add", link.namespace)
        _must("ip", "link", "add", link.host_veth, "type", "veth", "peer", "name", link.peer_veth)
        _must("ip", "link", "set", link.peer_veth, "netns", link.namespace)
        _must("ip", "addr", "add", f"{link.host_ip}/30", "dev", link.host_veth)
        _must("ip", "link", "set", link.host_veth, "up")
        inside = ("ip", "-n", link.namespace)
        _must(*inside, "addr", "add", f"{link.peer_ip}/30", "dev", link.peer_veth)
        _must(*inside, "link", "set", link.peer_veth, "up")
        _must(*inside, "link", "set", "lo", "up")
        yield link
    finally:
        _kill_inside(link.namespace)
        _run("ip", "netns", "delete", link.namespace)
        _run("ip", "link", "delete", link.host_veth)  # (gone with its peer, normally)


def add_netem(link: Link, delay_ms: float) -> bool:
    """`tc netem` delay on both ends of the link; False (nothing added) if the kernel has
    no netem."""
    delay = ("root", "netem", "delay", f"{delay_ms * 1000:.0f}us")
    if _run("tc", "qdisc", "add", "dev", link.host_veth, *delay).returncode != 0:
        return False
    if _run("tc", "-n", link.namespace, "qdisc", "add", "dev", link.peer_veth, *delay).returncode:
        _run("tc", "qdisc", "del", "dev", link.host_veth, "root")
        return False
    return True


def ping_rtts(host: str, port: int, count: int = 200) -> list[float]:
    """Round trips (ms) of `count` Redis PINGs, one at a time over one connection."""
    rtts = []
    with socket.create_connection((host, port), timeout=5) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(count):
            t0 = time.perf_counter()
            s.sendall(b"PING\r\n")
            reply = b""
            while not reply.endswith(b"\r\n"):
                chunk = s.recv(64)
                if not chunk:
                    raise ConnectionError(f"{host}:{port} closed the connection")
                reply += chunk
            if reply != b"+PONG\r\n":
                raise ConnectionError(f"{host}:{port} answered {reply!r}")
            rtts.append((time.perf_counter() - t0) * 1000)
    return rtts


@contextlib.contextmanager
def _relay(link: Link, target: int, delay_ms: float) -> Iterator[subprocess.Popen[bytes]]:
    """The delaying relay in the link's namespace, listening on the far end's address
    (RELAY_PORT), once it listens."""
    cmd = [sys.executable, "-m", "bench.delayed_link", "relay", link.peer_ip, str(target)]
    proc = subprocess.Popen(
        ["ip", "netns", "exec", link.namespace, *cmd, str(delay_ms)],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        line = proc.stdout.readline() if ready else b""
        if line != f"listening {RELAY_PORT}\n".encode():
            raise RuntimeError(f"the relay did not start (status {proc.poll()})")
        yield proc
    finally:
        stop(proc, 5)
        if proc.stdout is not None:
            proc.stdout.close()


@contextlib.contextmanager
def redis_behind_delay(
    workdir: Path, delay_ms: float = 0.5, *redis_args: str
) -> Iterator[DelayedRedis]:
    """redis-server in a namespace of its own, `delay_ms` away each way (netem, or the
    relay without it). `redis_args` are added to `--save ''` (e.g. an append-only file)."""
    with contextlib.ExitStack() as stack:
        link = stack.enter_context(namespaced_link())
        port = 6379  # (the namespace is ours alone)
        bind = f"127.0.0.1 {link.peer_ip}"
        cmd = ["redis-server", "--port", str(port), "--bind", bind, "--protected-mode", "no"]
        cmd += ["--save", ""]
        proc = subprocess.Popen(
            ["ip", "netns", "exec", link.namespace, *cmd, "--dir", str(workdir), *redis_args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        stack.callback(stop, proc, 10)
        # (a -LOADING answer is a ConnectionError: an OSError, which `_wait` waits out)
        _wait(lambda: bool(ping_rtts(link.peer_ip, port, 1)), "redis-server", proc)
        ping_rtts(link.peer_ip, port, 50)  # (warm: the first round trips are slower)
        bare = ping_rtts(link.peer_ip, port)
        relay = None
        if add_netem(link, delay_ms):
            method = "netem"
        else:
            method = "relay"
            relay = stack.enter_context(_relay(link, port, delay_ms))
            port = RELAY_PORT
        ping_rtts(link.peer_ip, port, 50)
        rtts = ping_rtts(link.peer_ip, port)
        yield DelayedRedis(link, port, proc.pid, delay_ms, method, bare, rtts, relay)


def exit_on_sigterm() -> None:
    """SIGTERM raises SystemExit, so that the `finally` clauses tear the link down (as
    Ctrl-C's KeyboardInterrupt does)."""

    def leave(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, leave)


# --- the relay, run inside the namespace ---------------------------------------------------

RELAY_PORT = 6380
PR_SET_PDEATHSIG = 1
PR_SET_TIMERSLACK = 29
MAX_SPIN = 150e-6
"""Seconds the sender spins at most before a chunk's due time (a sleep ends later than
asked by about 70 µs on this VM)."""

LATENESS: list[float] = []
"""How late each chunk left (s), since the last report (SIGUSR1)."""

Chunk = tuple[float, socket.socket, socket.socket, bytes]
"""When it may leave, where from, where to, what (b"": the end of that direction, passed on
as a FIN)."""


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(option, value, 0, 0, 0)


def _read(server: socket.socket, target: int, delay: float, out: queue.SimpleQueue[Chunk]) -> None:
    """Accept connections (each paired with one to 127.0.0.1:`target`) and read every
    socket as bytes come, each chunk stamped with the time it may leave. One thread for
    all: a few hundred connections (redis-py's pools) as threads of their own cost the
    relay a core and stalled it."""
    peers: dict[socket.socket, socket.socket] = {}
    with selectors.DefaultSelector() as sel:
        sel.register(server, selectors.EVENT_READ)
        while True:
            for key, _ in sel.select():
                src = key.fileobj
                assert isinstance(src, socket.socket)
                if src is server:
                    client, _ = server.accept()
                    upstream = socket.create_connection(("127.0.0.1", target))
                    for one, other in ((client, upstream), (upstream, client)):
                        one.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                        peers[one] = other
                        sel.register(one, selectors.EVENT_READ)
                    continue
                try:
                    data = src.recv(65536)
                except OSError:
                    data = b""
                out.put((time.perf_counter() + delay, src, peers[src], data))
                if not data:
                    sel.unregister(src)
                    del peers[src]


def _send(chunks: queue.SimpleQueue[Chunk]) -> None:
    """Each chunk no earlier than its due time, in the order read (which is the order of
    their due times): one queue for the whole link, as a wire is. A socket is closed once
    it has been read to its end and shut for writing."""
    _prctl(PR_SET_TIMERSLACK, 1)  # (this thread's sleeps end on time, not 50 µs later)
    late = 0.0
    """How much later than asked a sleep ends here (a moving average, s, at most
    MAX_SPIN): sleeps are cut short by it, and the last µs before the due time spun. (The
    cap: on a starved machine sleeps end late by milliseconds, and spinning for as long
    would starve it further.)"""
    ended: dict[socket.socket, int] = {}
    """Sockets with one of their two sides (reading, writing) done."""
    while True:
        due, src, dst, data = chunks.get()
        if (asked := due - time.perf_counter() - late) > 0:
            slept = time.perf_counter()
            time.sleep(asked)
            late += (time.perf_counter() - slept - asked - late) / 8
            late = min(max(late, 0.0), MAX_SPIN)
        while (now := time.perf_counter()) < due:
            pass
        LATENESS.append(now - due)
        with contextlib.suppress(OSError):  # (a reset: its reader learns it too)
            if data:
                dst.sendall(data)
                continue
            dst.shutdown(socket.SHUT_WR)
        for sock in (src, dst):  # (src read to its end, dst shut for writing)
            if ended.pop(sock, None):
                sock.close()
            else:
                ended[sock] = 1


def _report(signum: int, frame: FrameType | None) -> None:
    """One line on stdout: how late chunks left since the last report, in µs."""
    taken = sorted(LATENESS)
    LATENESS.clear()
    n = len(taken)
    at = [taken[min(n - 1, int(q * n))] * 1e6 if n else 0.0 for q in (0.5, 0.99, 1.0)]
    print(f"lateness n={n} p50={at[0]:.0f} p99={at[1]:.0f} max={at[2]:.0f}", flush=True)


def relay(host: str, target: int, delay_ms: float) -> None:
    """Forward `host`:RELAY_PORT to 127.0.0.1:`target`, `delay_ms` later each way."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # (gone with the bench, even after kill -9)
    signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(0))
    signal.signal(signal.SIGUSR1, _report)
    sys.setswitchinterval(5e-5)  # (the woken sender waits for the GIL at most this long)
    try:  # a wire is not slowed by the machine's load (the threads inherit this)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except OSError:
        with contextlib.suppress(OSError):
            os.nice(-10)
    chunks: queue.SimpleQueue[Chunk] = queue.SimpleQueue()
    threading.Thread(target=_send, args=(chunks,), daemon=True).start()
    with socket.create_server((host, RELAY_PORT), backlog=1024) as server:
        print(f"listening {RELAY_PORT}", flush=True)
        _read(server, target, delay_ms / 1000, chunks)


if __name__ == "__main__":
    if sys.argv[1:2] != ["relay"] or len(sys.argv) != 5:
        raise SystemExit("usage: python -m bench.delayed_link relay HOST TARGET_PORT DELAY_MS")
    relay(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
