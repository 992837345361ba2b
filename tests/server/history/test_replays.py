"""Replays for the HTTP API, computed by a worker process and kept (server/history/replays.py):
what they answer, what they keep, and what a request meets when they cannot answer."""

from __future__ import annotations

import asyncio
import os
import random
import signal
from pathlib import Path
from typing import Any

import pytest

from dicehall.rules import get_game
from dicehall.rules.play import play_out, random_chooser
from dicehall.rules.records import new_record
from dicehall.server.history.replays import NoReplay, Replays, ReplaysBusy, ReplayStep, compute
from tests.support.wait import eventually


def a_record(seed: int = 1) -> dict[str, Any]:
    rng = random.Random(seed)
    qwixx = get_game("qwixx")
    state = qwixx.new_state(2, seed=rng.randbytes(16))
    record = new_record("qwixx", qwixx.resolve_options(), ["Ada", "Bo"], state)
    play_out(state, random_chooser(rng), record["log"])
    return record


def test_a_step_is_the_game_after_that_many_entries() -> None:
    record = a_record()
    steps = len(record["log"])
    start, end = compute("g", record, 0), compute("g", record, steps)
    assert isinstance(start, ReplayStep) and isinstance(end, ReplayStep)
    assert (start.step, start.steps, start.entry, start.over) == (0, steps, None, False)
    assert (end.step, end.over, end.names) == (steps, True, ["Ada", "Bo"])
    assert len(end.sheets) == len(end.views) == 2 and end.entry is not None
    assert "no game 'chess'" in str(compute("g", {**record, "game": "chess"}, 3))


def workers() -> list[int]:
    """This process's replay workers (spawned: `spawn_main` on their command line)."""
    out = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for child in (task / "children").read_text().split():
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                out.append(int(child))
    return out


@pytest.fixture
async def replays() -> Any:
    kept = Replays(cache=2, waiting=2)
    try:
        yield kept
    finally:
        await kept.close()


async def test_a_step_is_computed_once_and_kept(replays: Replays) -> None:
    record = a_record()
    together = await asyncio.gather(*(replays.step("g", record, 5) for _ in range(3)))
    assert together[0] == together[1] == together[2] == compute("g", record, 5)
    assert replays.answers == {"computed": 3}  # (three answers, one computation)
    assert replays.kept("g", 5) == together[0] and replays.answers["kept"] == 1
    ending = await replays.step("g", record, len(record["log"]))
    assert replays.kept("g", 10**9) == ending  # (past the end: the end, without the record)
    await replays.step("g", record, 6)  # (a third step: the oldest kept makes way)
    assert replays.kept("g", 5) is None and replays.kept("g", 6) is not None
    assert replays.kept("other", 5) is None


async def test_past_its_bound_or_without_its_worker_a_request_is_refused(
    replays: Replays,
) -> None:
    record = a_record()
    await replays.step("g", record, 1)  # (the worker started)
    (worker,) = workers()
    os.kill(worker, signal.SIGSTOP)
    try:
        asked = [asyncio.ensure_future(replays.step("g", record, n)) for n in (2, 3)]
        await eventually(lambda: replays.running == 2, "both asked of the stopped worker")
        with pytest.raises(ReplaysBusy, match="too many"):
            await replays.step("g", record, 4)
        assert replays.answers["busy"] == 1
    finally:
        os.kill(worker, signal.SIGCONT)
    assert [s.step for s in await asyncio.gather(*asked)] == [2, 3]

    os.kill(worker, signal.SIGKILL)  # (the worker gone: refused, then a new one)
    with pytest.raises(ReplaysBusy, match="stopped"):
        await replays.step("g", record, 7)
    assert (await replays.step("g", record, 7)).step == 7


async def test_a_record_that_does_not_replay_says_why(replays: Replays) -> None:
    with pytest.raises(NoReplay, match="chess"):
        await replays.step("g", {**a_record(), "game": "chess"}, 1)
    assert replays.kept("g", 1) is None
