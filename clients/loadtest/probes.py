"""The server's CPU seconds and memory, sampled from outside it while the load runs.

A server on this machine is read from /proc (its processes found by the port it listens
on, or given as `server_pids`), which also tells how long it waited for a CPU; a remote
one from the standard process gauges of its /metrics; one that offers neither gives no
figures (`Probe`) rather than failing the run. `server_gauges` reads dicehall's own
gauges (rooms held...) once at the end. No psutil: /proc and urllib are enough.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import urllib.request
from collections.abc import Iterable
from urllib.parse import urlsplit

from .config import LoadConfig


class Probe:
    """Samples the server's CPU seconds and RSS bytes (summed over its processes)."""

    source = "none"

    def sample(self) -> tuple[float, float] | None:
        return None

    def waited(self) -> float | None:
        """Seconds the server was ready to run but waited for a CPU (a shared machine)."""
        return None


class ProcProbe(Probe):
    source = "proc"

    def __init__(self, pids: Iterable[int]) -> None:
        self.pids = sorted(set(pids))
        self._tick = os.sysconf("SC_CLK_TCK")

    def sample(self) -> tuple[float, float] | None:
        cpu = rss = 0.0
        for pid in self.pids:
            try:
                with open(f"/proc/{pid}/stat", encoding="ascii") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{pid}/status", encoding="ascii") as f:
                    status = f.read()
            except OSError:
                return None
            cpu += (int(fields[11]) + int(fields[12])) / self._tick
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    rss += int(line.split()[1]) * 1024
        return cpu, rss

    def waited(self) -> float | None:
        total = 0
        for pid in self.pids:
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/schedstat", encoding="ascii") as f:
                        total += int(f.read().split()[1])
            except (OSError, IndexError, ValueError):
                return None
        return total / 1e9


class MetricsProbe(Probe):
    """A remote server: the standard process gauges of its /metrics."""

    source = "metrics"

    def __init__(self, urls: Iterable[str]) -> None:
        self.urls = sorted(set(urls))

    def sample(self) -> tuple[float, float] | None:
        cpu = rss = 0.0
        for url in self.urls:
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    text = r.read().decode()
            except OSError:
                return None
            values = dict(
                line.split()[:2] for line in text.splitlines() if line.startswith("process_")
            )
            if "process_cpu_seconds_total" not in values:
                return None
            cpu += float(values["process_cpu_seconds_total"])
            rss += float(values.get("process_resident_memory_bytes", 0.0))
        return cpu, rss


def listening_pids(port: int) -> list[int]:
    """Processes listening on a local TCP port, from /proc (no psutil)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table, encoding="ascii") as f:
            for line in f.read().splitlines()[1:]:
                parts = line.split()
                if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{parts[9]}]")
    pids: list[int] = []
    if not inodes:
        return pids
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            fds = f"/proc/{entry}/fd"
            if any(os.readlink(f"{fds}/{fd}") in inodes for fd in os.listdir(fds)):
                pids.append(int(entry))
    return pids


def server_gauges(urls: Iterable[str]) -> dict[str, float]:
    """dicehall's own gauges (rooms held, connections...) summed over the servers; empty
    when a server has no /metrics (the baseline)."""
    out: dict[str, float] = {}
    for url in urls:
        parts = urlsplit(url)
        scheme = "https" if parts.scheme == "wss" else "http"
        try:
            with urllib.request.urlopen(f"{scheme}://{parts.netloc}/metrics", timeout=2) as r:
                text = r.read().decode()
        except (OSError, ValueError):
            return {}
        for line in text.splitlines():
            name, _, value = line.partition(" ")
            if name.startswith("dicehall_") and "{" not in name:
                with contextlib.suppress(ValueError):
                    out[name] = out.get(name, 0.0) + float(value)
    return out


def _is_local(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def find_probe(cfg: LoadConfig) -> Probe:
    if cfg.server_pids:
        return ProcProbe(cfg.server_pids)
    pids: list[int] = []
    remote: list[str] = []
    for url in cfg.urls:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "wss" else 80)
        host = parts.hostname or ""
        found = listening_pids(port) if _is_local(host) else []
        if found:
            pids += found
        else:
            scheme = "https" if parts.scheme == "wss" else "http"
            remote.append(f"{scheme}://{parts.netloc}/metrics")
    if pids and not remote:
        return ProcProbe(pids)
    if remote and not pids:
        probe = MetricsProbe(remote)
        return probe if probe.sample() is not None else Probe()
    return Probe()
