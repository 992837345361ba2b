"""`dicehall loadtest`: N rooms of M bot seats over real WebSockets, measured.

Shape of a run:

1. The coordinator (the calling process, no event loop) starts P worker processes. Each
   worker owns every P-th table (a room's M seats, all in that worker so it can time a
   whole turn window), opens one socket per seat, says `hello` with the `timestamps`
   feature, and reports back. The coordinator samples the server's RSS before and after:
   the cost of an idle connection.
2. On `play`, every table's host creates a private room with `autostart`, every seat
   joins, and the bots answer each turn window after a think time drawn uniformly from
   [0, --think] seconds (policy `window`, the default: pick at random among the legal
   actions the window brings, with the `legal_in_window` feature, and those an `act`
   reply brings while the seat owes more; without the feature, as `legal`; policy
   `legal`: ask `legal` for the actions alone, with the `legal_without_view` feature when
   the server offers it, and pick one at random; policy
   `legal-view`: the same with the seat's view in every reply, as a bot that reads it
   asks; policy `pass`: answer `pass` without asking when the window allows it). When a
   game ends, the seats leave and the next seat of the table hosts a new room: the tables
   play until the end.
3. Every second each worker sends what it saw in that second (latency histograms,
   counts, errors); the coordinator merges them, samples the server's CPU and RSS
   (/proc for a local server, /metrics otherwise), and prints a progress line.
4. At the end: a table, a JSON report, and a plot. Statistics cover the measured span,
   after `--warmup` seconds of play; the timeline covers the whole run.

Fan-out latency is the client's receive time minus the message's `sent_us` (the server's
clock when it fanned the message out: docs/protocol.md, feature `timestamps`), corrected
by the clock offset measured with `ping` when that offset is larger than its own error.

The modules, from the input to the output (each imports only modules above it):

- `config`: `LoadConfig`, the run's whole input, and `LoadTestError`, the package's errors.
- `stats`: `Hist` and `Interval`, what a worker counts each second and the coordinator
  merges.
- `client`: the lean WebSocket client the seats talk through (thousands of sockets in one
  process), framing with protocol/wsframes.py.
- `messages`: the few fields of a server message the load test reads, and its codec.
- `probes`: the server's CPU and memory, from /proc or its /metrics.
- `context`: what a worker's tables and seats share with it (its config, codec, random
  source, current `Interval`, tasks and open sockets).
- `seat`: a bot `Seat`: its socket, its requests, its answers to turn windows (step 2).
- `table`: a `Table` of seats: each game's setup and the turn windows it times (step 2).
- `worker`: a worker process (`worker_main`): its tables, its event loop, its intervals
  (steps 1 to 3, one process's share).
- `plot`: the plot (matplotlib, imported only when a plot is asked for).
- `report`: the JSON report assembled, read as a table, written with its plot (step 4).
- `coordinator`: `run_loadtest`, the whole run (steps 1 to 4).

What the rest of the repository uses (`dicehall loadtest` in clients/cli.py, bench/) is
re-exported here.
"""

from __future__ import annotations

from .config import LoadConfig, LoadTestError
from .coordinator import run_loadtest
from .report import format_table, progress_printer, write_outputs

__all__ = [
    "LoadConfig",
    "LoadTestError",
    "format_table",
    "progress_printer",
    "run_loadtest",
    "write_outputs",
]
