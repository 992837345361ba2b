"""The clients name no game: what differs per game is the game's own (issue 34).

Adding a game touches its folder, its bots, its web view, its docs page and one registry
line (docs/contributing.md, "Adding a game"). So the terminal reaches every game through
the registry and each game's presentation (rules/NAME/text.py), and the web page through
the game's view (clients/web/js/games/NAME.js, listed once in games/index.js): a client
module that names a game (a string equal to its name, an import of its rules, a branch
on it) is a place a new game would have to be added by hand.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from dicehall.rules import game_names

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"
WEB = CLIENTS / "web" / "js"

MAY_NAME = {
    "clients/cli.py": "the load test's default game (a benchmark setting, not a branch)",
    "clients/loadtest/seat.py": "the load tester's fast path for games answered once a "
    "window; any other game takes the general path",
}
"""Modules allowed a game's name, and why a new game need not touch them."""


def python_names(path: Path, games: set[str]) -> list[str]:
    """Where `path` names a game: a string equal to its name, or an import of its rules."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Constant) and node.value in games:
            found.append(f"line {node.lineno}: {node.value!r}")
        modules = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
        for module in modules:
            parts = module.split(".")
            if len(parts) > 2 and parts[:2] == ["dicehall", "rules"] and parts[2] in games:
                found.append(f"line {node.lineno}: imports {module}")
    return found


def js_names(path: Path, games: set[str]) -> list[str]:
    """Where a web module names a game: as a word (a string, a key, an import of its view)."""
    words = re.compile(r"\b(" + "|".join(sorted(games)) + r")\b")
    return [
        f"line {n}: {line.strip()}"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if words.search(line)
    ]


def test_no_python_client_names_a_game() -> None:
    games = set(game_names())
    wrong = [
        f"{path.relative_to(ROOT)} {where}"
        for path in sorted(CLIENTS.rglob("*.py"))
        if path.relative_to(ROOT).as_posix() not in MAY_NAME
        for where in python_names(path, games)
    ]
    assert not wrong, "\n".join(wrong)


def test_no_web_module_but_the_games_own_names_a_game() -> None:
    games = set(game_names())
    wrong = [
        f"{path.relative_to(ROOT)} {where}"
        for path in sorted(WEB.rglob("*.js"))
        if path.parent.name != "games"
        for where in js_names(path, games)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_checks_see_a_name(tmp_path: Path) -> None:
    py = tmp_path / "view.py"
    py.write_text('from dicehall.rules.yamb.table import ROWS\nif game == "qwixx":\n    pass\n')
    assert python_names(py, {"qwixx", "yamb"}) == [
        "line 1: imports dicehall.rules.yamb.table",
        "line 2: 'qwixx'",
    ]
    js = tmp_path / "room.js"
    js.write_text("const TITLES = { qwinto: 'Qwinto' };\nconst quinto = 1;\n")
    assert js_names(js, {"qwinto"}) == ["line 1: const TITLES = { qwinto: 'Qwinto' };"]
