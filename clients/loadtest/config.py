"""What a load test is asked to do, and the one exception it raises.

`LoadConfig` is the run's whole input: the coordinator copies it to every worker process
(it is pickled with the worker's arguments) and writes it back in the report, so it holds
plain values only. `LoadTestError` is the root of the package's errors: a run that cannot
go on (a worker that does not connect or finish, a room the server refuses), which
`dicehall loadtest` prints and exits 1 on.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LoadConfig:
    urls: list[str]
    rooms: int
    seats: int
    game: str
    duration: float
    turn_window: int = 10
    procs: int = 1
    think: float = 0.75
    """Each answer is sent a uniform [0, think] seconds after its window opened."""
    policy: str = "window"
    """One of POLICIES (the package's docstring says what each does)."""
    encoding: str = "msgpack"
    warmup: float = 3.0
    interval: float = 1.0
    server_pids: list[int] = field(default_factory=list)
    clock_offset_ms: float | None = None
    """None: measure with `ping` (and use 0 when within its error); else this offset."""
    connect_concurrency: int = 64
    seed: int = 0
    follow: bool = True
    """Seats move to the process that runs their room (docs/protocol.md, "Following a room
    to its server") before they join it; False keeps each on its URL (forwarding)."""


POLICIES = ("window", "legal", "legal-view", "pass")


class LoadTestError(Exception):
    pass
