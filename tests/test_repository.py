"""The repository stands on its own: the rules reading lives in docs/rules.md, and no
tracked file points outside the repository for it (at the notes it was first taken from)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import sheets

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "rules.md"
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()
# Spelled in pieces so that no other search for them finds this file either.
FORBIDDEN = ("../" + "shared", "RULES" + ".md", "DESIGN" + ".md")


def tracked_files() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.fail("these checks read the files git tracks: run them from a git checkout")
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    return [name for name in out.decode("utf-8").split("\0") if name]


def text_of(path: Path) -> str | None:
    """The file's text, or None when it is binary (or gone from the working tree)."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def test_no_tracked_file_refers_to_the_old_shared_notes() -> None:
    found = []
    for name in tracked_files():
        if name == THIS:
            continue
        text = text_of(ROOT / name)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            found += [f"{name}:{number}: {word}" for word in FORBIDDEN if word in line]
    assert not found, "point these at docs/rules.md or docs/design.md:\n" + "\n".join(found)


def test_the_worked_example_sheets_are_the_ones_the_tests_check() -> None:
    assert RULES.is_file(), "docs/rules.md is missing"
    text = RULES.read_text(encoding="utf-8")
    for sheet in (sheets.QWINTO_28, sheets.QWIXX_26):
        assert f"```\n{sheet}\n```" in text
