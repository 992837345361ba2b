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
    (`dicehall.server.rooms.room` is "server")."""
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
    bad.write_text(
        "import asyncio\nfrom dicehall.server.rooms.room import RoomCore\nfrom . import x\n"
    )
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


KNOWN_CYCLES: list[set[str]] = []
"""Import cycles issue 34 is removing: no other may appear, nor these grow; delete an
entry once its cycle is gone (one that matches nothing is ignored, so that each can go in
its own commit)."""


def module_name(path: Path, root: Path = ROOT) -> str:
    """`server.ws.frames` for server/edge/ws/frames.py (its name under dicehall)."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str], root: Path = ROOT) -> set[str]:
    """Those of the `known` modules that `path` imports: relative imports resolved, `from
    pkg import name` counting `pkg.name` when that is a module (else `pkg`), and imports
    under TYPE_CHECKING or inside functions counted too (a cycle all the same to a reader)."""
    name = module_name(path, root)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name.removeprefix("dicehall.") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = (node.module or "").removeprefix("dicehall.")
            # (`from . import errors` imports the module errors, not the package's names)
            submodules = [f"{module}.{alias.name}" for alias in node.names]
            targets = [sub if sub in known else module for sub in submodules]
        else:
            continue
        found |= {target for target in targets if target in known and target != name}
    return found


def import_cycles(paths: list[Path], root: Path = ROOT) -> list[set[str]]:
    """The groups of modules that import each other round a cycle (the strongly connected
    components of the import graph, by Tarjan's algorithm)."""
    names = {module_name(path, root) for path in paths}
    edges = {module_name(path, root): imported_modules(path, names, root) for path in paths}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        for w in edges[v]:
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            group = set(stack[stack.index(v) :])
            del stack[stack.index(v) :]
            if len(group) > 1:
                groups.append(group)

    for name in sorted(edges):
        if name not in order:
            visit(name)
    return groups


def test_no_import_cycle_but_those_being_removed() -> None:
    paths = [path for package in PACKAGES for path in modules(package)]
    new = [sorted(group) for group in import_cycles(paths) if group not in KNOWN_CYCLES]
    assert not new, f"modules that import each other: {new}"


def test_the_cycle_finder_sees_a_cycle_through_type_checking(tmp_path: Path) -> None:
    """The load tester's table and worker imported each other so (issue 34)."""
    package = tmp_path / "clients" / "loadtest"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from .worker import run\n")
    (package / "table.py").write_text("if TYPE_CHECKING:\n    from .worker import Worker\n")
    (package / "worker.py").write_text("from dicehall.clients.loadtest.table import Table\n")
    (package / "seat.py").write_text("from . import table\nfrom ..loadtest import config\n")
    (package / "config.py").write_text("import dicehall.clients.loadtest.stats\n")
    (package / "stats.py").write_text("from .config import LoadConfig\n")
    found = import_cycles(sorted(package.glob("*.py")), root=tmp_path)
    assert sorted(map(sorted, found)) == [
        ["clients.loadtest.config", "clients.loadtest.stats"],
        ["clients.loadtest.table", "clients.loadtest.worker"],
    ]
