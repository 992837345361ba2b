"""A new game touches only the places docs/contributing.md names ("Adding a game"), and
the suite's conformance and checklist pass for it (issue 34).

In a copy of the tree, a throwaway game, Pig (tests/newgame/files/: two dice, and an action
field, `count`, that no other game has), is added exactly as contributing.md says: its
folder, its bots, its web view, its pages, its tests and the one registry line. git in the
copy then shows that nothing else changed, every changed path is one the table names, and
the copy's own suite passes for it: every test run over all games (conformance, the
checklist, records, the terminal's scores, snapshots and the journal), the checks a game
could break without being named (layers, the clients naming no game, the published
schemas, the compiled build's list), the linters on its files, and a real server on which
bots play it to the end over both encodings, refusing an action off its schema.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.servers import ROOT

NAME = "pig"
GAME = Path(__file__).parent / "newgame"
REGISTRY_LINE = ("clients/web/js/games/index.js", f"export * as {NAME} from './{NAME}.js';\n")
SKIPPED = {".git", ".venv", ".venv-oldest", "node_modules", "build", "htmlcov", "__pycache__"}
"""What a copy of a tree without git leaves out (the compiled build's copy, for one)."""

PER_GAME = [
    "tests/rules/test_conformance.py",
    "tests/test_game_checklist.py",
    "tests/rules/test_records.py",
    "tests/rules/test_text.py",
    "tests/clients/test_terminal_scores.py",
    "tests/server/rooms/test_snapshot.py",
    "tests/server/hosting/test_journal.py",
    f"tests/rules/test_{NAME}.py",
]
"""The tests run over every registered game (by `all_games()` or `game_names()`)."""
ANY_GAME = [
    "tests/test_layers.py",
    "tests/clients/test_no_game_named.py",
    "tests/protocol/test_docs.py",
    "tests/rules/test_base.py",
    "tests/server/test_compiled.py",
]
"""Checks of the whole tree that a new game could break without being named in them."""

PLAY = """
import asyncio, subprocess, sys
from dicehall.clients.client import Client
from dicehall.protocol import errors
from tests.support.servers import running_server

async def refused(url: str) -> str:
    async with Client(url, name="Ada") as client:
        room = (await client.create("pig", seats=2)).room
        await client.join(room)
        await client.add_bots(room, kind="strong")
        await client.start(room)
        legal = await client.legal(room)
        assert {"type": "roll", "count": 2} in legal.actions, legal.actions
        try:
            await client.act(room, {"type": "roll", "count": 3}, legal.window)
        except errors.InvalidMessageError as exc:
            await client.act(room, {"type": "roll", "count": 2}, legal.window)
            return exc.message
        raise AssertionError("three dice were accepted")

with running_server() as server:
    for encoding in ("json", "msgpack"):
        bots = [sys.executable, "-m", "dicehall.clients.cli", "bot", "--url", server.ws,
                "--game", "pig", "--seats", "2", "--bot", "strong", "--encoding", encoding]
        print(subprocess.run(bots, check=True, capture_output=True, text=True).stdout)
    print(asyncio.run(refused(server.ws)))
"""
"""On a real server of the copy: `dicehall bot` plays a whole game of Pig over each encoding,
then a client's `roll` of three dice is refused by the game's schema."""


def copy_tree(target: Path) -> None:
    """The tracked files of this tree (all of it but build products when there is no git,
    as in the compiled build's copy, whose extension modules are left out too: the copy is
    the source, which a compiled build of its own would compile with the new game's marked
    modules; contributing.md, "Adding a game"), symlinks kept; node_modules linked."""
    if (ROOT / ".git").exists():
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout.decode()
        paths = [Path(p) for p in listed.split("\0") if p]
    else:
        paths = [
            path.relative_to(ROOT)
            for path in ROOT.rglob("*")
            if not SKIPPED & set(path.relative_to(ROOT).parts)
            and (path.is_symlink() or path.is_file())
            and path.suffix != ".so"
        ]
    for path in paths:
        source, copy = ROOT / path, target / path
        if not (source.is_symlink() or source.exists()):  # (deleted, not yet committed)
            continue
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            copy.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, copy)
    if (ROOT / "node_modules").is_dir():
        (target / "node_modules").symlink_to(ROOT / "node_modules")


def git(tree: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    done = subprocess.run(["git", *args], cwd=tree, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def add_the_game(tree: Path) -> None:
    """What docs/contributing.md asks of a new game, and nothing more."""
    for source in sorted((GAME / "files").rglob("*")):
        if source.is_file():
            target = tree / source.relative_to(GAME / "files")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    index, line = REGISTRY_LINE
    with (tree / index).open("a", encoding="utf-8") as out:
        out.write(line)
    with (tree / "docs" / "rules.md").open("a", encoding="utf-8") as out:
        out.write((GAME / "rules_section.md").read_text(encoding="utf-8"))


def named_places() -> list[str]:
    """The paths docs/contributing.md's table under "Adding a game" names, for NAME."""
    text = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    section = text.split("## Adding a game", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert rows, "contributing.md has no table of the places a game touches"
    return [p.replace("NAME", NAME) for row in rows for p in re.findall(r"`([^` ]+)`", row)]


def in_places(path: str, places: list[str]) -> bool:
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in places)


def run(tree: Path, *command: str) -> str:
    """`command` in the copy, importing the copy's dicehall (and measured by no coverage;
    the copy is source, whichever build runs this test)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("COVERAGE") and k != "DICEHALL_EXPECT_COMPILED"
    }
    env |= {"PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=240)
    said = f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    assert done.returncode == 0, f"{' '.join(command)}:\n{said}"
    return done.stdout


def test_a_new_game_touches_only_the_named_places_and_passes_the_suite(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    copy_tree(tree)
    git(tree, "init", "-q")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "the tree as it is")
    add_the_game(tree)

    changed = sorted(line[3:] for line in git(tree, "status", "--porcelain", "-uall").splitlines())
    added = sorted(p.relative_to(GAME / "files").as_posix() for p in (GAME / "files").rglob("*.*"))
    assert changed == sorted([*added, REGISTRY_LINE[0], "docs/rules.md"])
    places = named_places()
    assert [p for p in changed if not in_places(p, places)] == [], places
    assert git(tree, "diff", "--numstat", REGISTRY_LINE[0]).split()[:2] == ["1", "0"]

    pytest_ = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    ran = run(tree, *pytest_, "-k", NAME, *PER_GAME)
    assert re.search(r"\b(\d{2,}) passed\b", ran) and " skipped" not in ran, ran
    run(tree, *pytest_, *ANY_GAME)
    run(tree, sys.executable, "-m", "ruff", "check", "--quiet", *(p for p in added if ".py" in p))
    view = f"clients/web/js/games/{NAME}.js"
    if (tree / "node_modules").is_dir() or os.environ.get("CI") == "true":  # (`make js`)
        run(tree, "node_modules/.bin/eslint", view)
        run(tree, "node_modules/.bin/prettier", "--check", "--log-level", "warn", view)
    played = run(tree, sys.executable, "-c", PLAY)
    assert played.count('"game": "pig"') == 2, played
    assert "act: Expected `int` <= 2 - at `$.action.count`" in played, played


@pytest.mark.parametrize("path", ["rules/__init__.py", "rules/bots/__init__.py"])
def test_games_and_their_bots_are_found_not_listed(path: str) -> None:
    """The one registry line is the web page's: the rules and the bots find a game's
    package and module themselves."""
    text = (ROOT / path).read_text(encoding="utf-8")
    assert NAME not in text and "qwixx" not in text, path
