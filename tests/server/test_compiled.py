"""server/compiled.py and the build around it: the modules under test are built as meant
(pure here; compiled under `make test-compiled`, which sets DICEHALL_EXPECT_COMPILED=1), so
neither a stray extension module in the work tree nor a compiled run that quietly fell
back to Python goes unseen."""

from __future__ import annotations

import gc
import itertools
import os
import re
import runpy
import sys
from collections.abc import Callable

from dicehall.protocol.wsframes import frame as ws_frame
from dicehall.rules import get_game
from dicehall.rules.fair import Draw
from dicehall.server.compiled import GAME_MARK, MODULES, compiled_modules
from dicehall.server.rooms.outgoing import LOG_BLOCK
from dicehall.server.rooms.room import RoomCore
from tests.support.servers import ROOT

EXPECT_COMPILED = os.environ.get("DICEHALL_EXPECT_COMPILED") == "1"


def test_the_modules_run_as_built() -> None:
    assert compiled_modules() == (list(MODULES) if EXPECT_COMPILED else [])


def test_a_compiled_build_compiles_modules_that_exist_and_no_coroutines() -> None:
    """Each named module is a source file of the tree, and none defines a coroutine (a
    cancelled compiled coroutine can crash the interpreter: python/mypy#12867)."""
    for name in MODULES:
        source = (ROOT / (name.replace(".", "/") + ".py")).read_text()
        assert not re.search(r"^\s*async def ", source, re.M), name


def test_a_games_hot_modules_are_found_by_their_mark() -> None:
    """A game's modules are not named in server/compiled.py (a new game touches nothing
    outside its folder): those marked `GAME_MARK` are found, these among them."""
    engines = {"qwinto.state", "qwirkle.state", "qwixx.sheet", "qwixx.state", "yamb.state"}
    games = [name for name in MODULES if name.startswith("dicehall.rules.")]
    found = {name.removeprefix("dicehall.rules.") for name in games if name.count(".") == 3}
    assert engines <= found
    for name in found:
        source = (ROOT / "rules" / (name.replace(".", "/") + ".py")).read_text()
        assert GAME_MARK in source.splitlines(), name


def test_the_build_backend_and_the_docker_image_build_with_the_locked_mypy() -> None:
    backend = runpy.run_path(str(ROOT / "build_backend" / "dicehall_build.py"))
    for lock in ("dev.txt", "build.txt"):  # (build.txt: the image's build stage)
        text = (ROOT / "requirements" / lock).read_text()
        (pin,) = re.findall(r"^(mypy==\S+)", text, re.M)
        assert backend["MYPYC"] == pin, lock


def leaked_blocks(work: Callable[[], object], times: int) -> int:
    """Memory blocks still allocated after `work` ran `times` times (after a warm-up run,
    so caches and interned values are in place): what it leaks."""
    for _ in range(times):
        work()
    gc.collect()
    before = sys.getallocatedblocks()
    for _ in range(times):
        work()
    gc.collect()
    return sys.getallocatedblocks() - before


def test_the_compiled_hot_paths_leak_nothing() -> None:
    """mypy 1.20's mypyc leaks the left operand of every `bytes + bytes` (mypyc#1192): a
    compiled build grew by ~1.5 MiB a second at 1,000 rooms (docs/benchmarks/journal.md,
    "The engines compiled, and a leak in the compiled build found and fixed"). Framing,
    the dice's byte stream and the room's log (chats, compressed by the block) must hold
    on to nothing once their results are dropped: pure here, compiled under `make
    test-compiled`."""
    payload = b"x" * 100
    assert leaked_blocks(lambda: ws_frame(payload, True), 20_000) < 100
    assert leaked_blocks(lambda: ws_frame("y" * 100, False), 20_000) < 100
    assert leaked_blocks(lambda: Draw(b"seed" * 8, 1).dice(6), 20_000) < 100
    core = RoomCore("r1", get_game("qwixx"), {}, 2, 30, history=LOG_BLOCK)
    chats = itertools.count()
    assert leaked_blocks(lambda: core.chat(0, "p0", f"line {next(chats)}"), 5_000) < 100
