"""Replays of stored games for the HTTP API (`/api/games/{id}/replay?step=N`), computed in a
process of their own and kept.

Why not on the event loop: replaying a record to a step is CPU only, about 25 ms for a
2-seat Yamb game, and while it runs no room of the process moves: four clients asking for
replays back to back held a seated player's round trip at p50 8-14 ms (0.9 ms idle), and
0.8-2.4 ms once a worker computed them (docs/benchmarks.md, "Replays off the loop"). Why
a process and not a thread: a thread holds the GIL as the loop would, handing it back
only every switch interval (5 ms). So one worker process (started at the first replay)
computes them, one at a time; the loop only hands it the record and takes back the
answer.

Why a cache: a stored game never changes, so a step once computed is the same for every
later request, and a replay page asks for the same steps again (back, forth, a reload).
The last `CACHE` answers are kept, and a step being computed is computed once however many
requests ask for it at the same time. `WAITING` bounds the steps computed or queued at
once: past it a request gets a 503 at once (try again), so a flood of distinct steps costs
the worker process, never the loop or memory.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import multiprocessing
import signal
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import msgspec

from dicehall.rules.errors import RulesError
from dicehall.rules.records import replay

from ..jsonvalue import JsonObject

CACHE = 256
"""Replay steps kept (a 2-seat Yamb step is about 10 KB: a few megabytes at most)."""
WAITING = 8
"""Distinct steps being computed or queued at once; past it, `ReplaysBusy`."""


class ReplayStep(msgspec.Struct, frozen=True):
    """A stored game after its first `step` log entries: what each seat's sheet shows."""

    game_id: str
    step: int
    steps: int
    """The length of the record's log: `step` runs from 0 (the start) to it (the end)."""
    entry: dict[str, Any] | None  # (Any, not object: the API's schema says "an object")
    """The log entry that led here (docs/records.md, "--json"), None at step 0."""
    over: bool
    names: list[str]
    scores: list[int]
    sheets: list[str]
    """Every seat's canonical sheet (docs/rules.md), in seat order."""
    views: list[dict[str, Any]]
    """Every seat's view as the protocol's `view` (the web client draws it)."""


class ReplaysBusy(Exception):
    """More distinct steps are waiting than `WAITING` (or the worker process stopped)."""


class NoReplay(Exception):
    """The stored record does not replay (one stored by another version): why."""


def compute(game_id: str, record: JsonObject, at: int) -> ReplayStep | str:
    """The game after its first `at` entries; a string says why the record does not replay
    (a string, because the rules' exceptions do not all survive the trip between
    processes). Runs in the worker process."""
    log = record.get("log", [])
    if not isinstance(log, list):
        return "its log is not a list"
    partial = {k: v for k, v in record.items() if k != "result"}
    partial["log"] = log[:at]
    try:
        done = replay(partial)
    except RulesError as exc:  # (a record stored by another version: RecordError)
        return str(exc)
    state, names = done.state, done.names
    return ReplayStep(
        game_id=game_id,
        step=at,
        steps=len(log),
        entry=done.steps[-1].to_json(names) if done.steps else None,
        over=state.is_over(),
        names=names,
        scores=list(state.scores()),
        sheets=[state.render(i, n) for i, n in enumerate(names)],
        views=[dict(state.view(i)) for i in range(len(names))],
    )


Key = tuple[str, int]


class Replays:
    """The replay worker process and the answers kept (see the module's docstring)."""

    def __init__(self, cache: int = CACHE, waiting: int = WAITING) -> None:
        self.cache = cache
        self.waiting = waiting
        self._kept: collections.OrderedDict[Key, ReplayStep] = collections.OrderedDict()
        self._steps: dict[str, int] = {}
        """The length of the log of each game with a step kept (what a step past the end
        stands for, without reading the game again)."""
        self._held: collections.Counter[str] = collections.Counter()
        """How many steps of each game are kept."""
        self._running: dict[Key, asyncio.Future[ReplayStep | str]] = {}
        self._pool: ProcessPoolExecutor | None = None
        self.answers: collections.Counter[str] = collections.Counter()
        """Requests by how they were answered: `kept`, `computed`, `busy`
        (/metrics: dicehall_history_replays_total)."""

    @property
    def running(self) -> int:
        """Distinct steps being computed or queued (at most `waiting`)."""
        return len(self._running)

    def kept(self, game_id: str, step: int) -> ReplayStep | None:
        """Step `step` of game `game_id` (its end when past it) if it is kept."""
        steps = self._steps.get(game_id)
        if steps is None:
            return None
        key = (game_id, min(step, steps))
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
            self.answers["kept"] += 1
        return kept

    async def step(self, game_id: str, record: JsonObject, at: int) -> ReplayStep:
        """Game `game_id` (its `record`) after `at` entries; raises `ReplaysBusy` and
        `NoReplay`."""
        key = (game_id, at)
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
            self.answers["kept"] += 1
            return kept
        running = self._running.get(key)
        if running is None:
            if len(self._running) >= self.waiting:
                self.answers["busy"] += 1
                raise ReplaysBusy("too many replays are being computed")
            try:
                work = self._worker().submit(compute, game_id, record, at)
            except BrokenProcessPool:
                self._pool = None  # (a worker killed: the next replay starts another)
                self.answers["busy"] += 1
                raise ReplaysBusy("the replay worker stopped") from None
            running = asyncio.wrap_future(work)
            self._running[key] = running
            running.add_done_callback(functools.partial(self._done, key))
        try:
            # (shielded: a request that goes away leaves the step to be kept for the next)
            answer = await asyncio.shield(running)
        except BrokenProcessPool:
            self._pool = None
            self.answers["busy"] += 1
            raise ReplaysBusy("the replay worker stopped") from None
        self.answers["computed"] += 1
        if isinstance(answer, str):
            raise NoReplay(answer)
        return answer

    def _done(self, key: Key, running: asyncio.Future[ReplayStep | str]) -> None:
        del self._running[key]
        if running.cancelled() or running.exception() is not None:
            return
        answer = running.result()
        if isinstance(answer, ReplayStep):
            self._kept[key] = answer
            self._steps[answer.game_id] = answer.steps
            self._held[answer.game_id] += 1
            while len(self._kept) > self.cache:
                (game_id, _), _ = self._kept.popitem(last=False)
                self._held[game_id] -= 1
                if not self._held[game_id]:
                    del self._held[game_id], self._steps[game_id]

    def _worker(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                1,
                # (spawn: a fork of a process with threads and an event loop may deadlock)
                mp_context=multiprocessing.get_context("spawn"),
                # (a Ctrl-C at the terminal reaches the whole process group: the server
                # stops its worker itself, without a traceback from it)
                initializer=signal.signal,
                initargs=(signal.SIGINT, signal.SIG_IGN),
            )
        return self._pool

    async def close(self) -> None:
        """Stop the worker process (a step it is computing finishes first)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, True, cancel_futures=True)
