"""No product module over 600 lines (issue 34): one that long does several jobs, and a
reader has to hold them all at once to change any. Split it into modules named for
their jobs instead (docs/contributing.md, "How the tree is cut")."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 600

PYTHON = ("rules", "protocol", "server", "clients", "bench")
JAVASCRIPT = ("clients/web/js", "clients/js")
"""The web client's modules and the JavaScript client (its example bot and tools are not
the product, nor is anything npm installed)."""

KNOWN_LARGE: set[str] = set()
"""Modules someone is splitting right now: no other may pass the limit. Delete an entry
once its module fits (one that fits already is ignored, so each can go in its own commit)."""


def product_modules(root: Path = ROOT) -> list[Path]:
    """Every Python module of the product packages and every JavaScript module of the
    clients, without installed packages or minified (vendored) files."""
    paths = [path for top in PYTHON for path in (root / top).rglob("*.py")]
    for top in JAVASCRIPT:
        folder = root / top
        scripts = folder.glob("*.js") if top == "clients/js" else folder.rglob("*.js")
        paths += [path for path in scripts if not path.name.endswith(".min.js")]
    return sorted(path for path in paths if "node_modules" not in path.parts)


def too_long(paths: list[Path], root: Path = ROOT, known: set[str] = KNOWN_LARGE) -> list[str]:
    """`path: N lines` for each of `paths` over the limit and not `known`."""
    found = []
    for path in paths:
        name = path.relative_to(root).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > LIMIT and name not in known:
            found.append(f"{name}: {lines} lines")
    return found


def test_no_product_module_is_over_the_limit() -> None:
    wrong = too_long(product_modules())
    assert not wrong, f"modules over {LIMIT} lines (split them by job): {wrong}"


def test_the_check_sees_a_long_module(tmp_path: Path) -> None:
    for name in ("rules/long.py", "clients/web/js/games/long.js", "server/known.py"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n" * (LIMIT + 1))
    for name in ("clients/js/node_modules/ws/long.js", "clients/web/js/lib.min.js"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n" * (LIMIT + 1))
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "short.py").write_text("x = 1\n" * LIMIT)
    assert too_long(product_modules(tmp_path), tmp_path, {"server/known.py"}) == [
        f"clients/web/js/games/long.js: {LIMIT + 1} lines",
        f"rules/long.py: {LIMIT + 1} lines",
    ]
