"""The layers import only downwards: rules <- protocol <- server, and clients speak the
public protocol (docs/contributing.md, "How the tree is cut").

rules/ is pure (no asyncio, no I/O modules, nothing else of dicehall); protocol/ knows the
rules' names at most; server/ never imports a client; clients/ never import the server,
except the `dicehall serve` command, which starts it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rules", "protocol", "server", "clients")

MAY_IMPORT = {
    "rules": set(),
    "protocol": {"rules"},
    "server": {"rules", "protocol"},
    "clients": {"rules", "protocol"},
}
IMPURE = {"asyncio", "socket", "subprocess", "threading", "multiprocessing", "urllib", "http"}
"""What rules/ never imports: it computes, the server and the clients do the I/O."""
STARTS_THE_SERVER = {"clients/cli.py"}
"""`dicehall serve` lives in the one command line; it imports the server when it runs."""


def imported(path: Path) -> set[str]:
    """The full names of every module `path` imports (relative imports: its own)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def imports(path: Path) -> set[str]:
    """What `path` imports, by top-level name; dicehall's modules by their layer
    (`dicehall.server.room` is "server")."""
    parts = [name.split(".") for name in imported(path)]
    return {p[1] if p[0] == "dicehall" and len(p) > 1 else p[0] for p in parts}


def modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_imports_only_the_layers_below_it(package: str) -> None:
    wrong = []
    for path in modules(package):
        name = path.relative_to(ROOT).as_posix()
        allowed = MAY_IMPORT[package] | {package}
        if name in STARTS_THE_SERVER:
            allowed = allowed | {"server"}
        found = imports(path) & set(PACKAGES) - allowed
        wrong += [f"{name} imports {sorted(found)}"] if found else []
    assert not wrong, "\n".join(wrong)


def test_the_rules_do_no_io() -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {sorted(found)}"
        for path in modules("rules")
        if (found := imports(path) & IMPURE)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_checker_sees_a_wrong_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import asyncio\nfrom dicehall.server.room import RoomCore\nfrom . import x\n")
    assert imports(bad) == {"asyncio", "server"}


def test_the_project_is_imported_by_its_one_package_name() -> None:
    """The four folders install as dicehall.rules, dicehall.protocol, dicehall.server and
    dicehall.clients: imported by their bare names they would work in this tree only (and
    a bot author's own server.py or rules/ would shadow them)."""
    tracked = sorted(ROOT.glob("*.py")) + [
        path for top in (*PACKAGES, "tests", "bench") for path in (ROOT / top).rglob("*.py")
    ]
    wrong = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in tracked
        for name in sorted(imported(path))
        if name.split(".")[0] in PACKAGES
    ]
    assert not wrong, "\n".join(wrong)
