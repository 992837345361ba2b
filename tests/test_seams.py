"""The project meets other packages only at their public seams: no private names of
uvicorn, websockets or anyone else, nor modules they do not document (websockets.speedups),
no walking generators or frames, no swapping a library's asyncio protocol (the checker is
tests/support/seams.py)."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.support import seams

ROOT = Path(__file__).resolve().parents[1]

# Names that the scanned "project" defines, the way the real code base defines its own.
PROJECT = """
from typing import NamedTuple


class Point(NamedTuple):
    x: int
    y: int


class Core:
    __slots__ = ("_slot", "_log")
    _table: dict[str, int]

    def __init__(self) -> None:
        self._x = 1

    def _helper(self) -> int:
        return self._x


_registry: dict[str, int] = {}
"""


def tracked_python_files() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.fail("these checks read the files git tracks: run them from a git checkout")
    out = subprocess.run(
        ["git", "ls-files", "-z", "*.py"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    return [name for name in out.decode("utf-8").split("\0") if name]


def test_the_repository_uses_only_public_seams() -> None:
    violations = seams.check(tracked_python_files(), root=ROOT)
    report = "\n".join(str(violation) for violation in violations)
    if report:
        print(report)
    assert not violations, "private names or internals of other packages:\n" + report


def scan(tmp_path: Path, snippet: str) -> list[seams.Violation]:
    """The violations in `snippet`, checked together with the PROJECT file."""
    (tmp_path / "project.py").write_text(PROJECT, encoding="utf-8")
    (tmp_path / "snippet.py").write_text(textwrap.dedent(snippet).lstrip(), encoding="utf-8")
    found = seams.check(["project.py", "snippet.py"], root=tmp_path)
    assert all(violation.path == "snippet.py" for violation in found), found
    return found


def rules(found: list[seams.Violation]) -> list[tuple[int, str]]:
    return [(violation.line, violation.message.split(":", 1)[0]) for violation in found]


@pytest.mark.parametrize(
    ("snippet", "rule"),
    [
        ("server._captured_signals.clear()\n", "private-attribute"),
        ("frames = gen.gi_yieldfrom\n", "introspection"),
        ("name = code.co_name\n", "introspection"),
        ("protocol = send.__self__\n", "introspection"),
        ('conn = getattr(p, "_conn")\n', "private-attribute"),
        ('inner = getattr(gen, "gi_yieldfrom", None)\n', "introspection"),
        ('known = hasattr(server, "_captured_signals")\n', "private-attribute"),
        ('monkeypatch.setattr(server, "_serve", None)\n', "private-attribute"),
        ('monkeypatch.setattr("uvicorn.server._captured", [])\n', "private-attribute"),
        ("from uvicorn.protocols._x import y\n", "private-import"),
        ("from websockets.legacy import _parse\n", "private-import"),
        ("import uvicorn._compat\n", "private-import"),
        # Modules that websockets does not document, though no underscore says so.
        ("from websockets.speedups import apply_mask\n", "private-import"),
        ("import websockets.speedups\n", "private-import"),
        ("from websockets import speedups\n", "private-import"),
        ("from websockets.utils import accept_key\n", "private-import"),
        ("from websockets.legacy import framing\n", "private-import"),
        ('monkeypatch.setattr("websockets.speedups.apply_mask", len)\n', "private-attribute"),
        ("transport.set_protocol(p)\n", "set-protocol"),
        ("frame = sys._getframe()\n", "frame-access"),
        ("from sys import _getframe\n", "frame-access"),
        ("x = 1  # seam:\n", "seam-comment"),
        ("x = 1  # seam: a reason for nothing\n", "seam-comment"),
    ],
)
def test_flags(tmp_path: Path, snippet: str, rule: str) -> None:
    assert rules(scan(tmp_path, snippet)) == [(1, rule)]


def test_a_private_name_inherited_from_another_package(tmp_path: Path) -> None:
    """Our own classes set the private names they read: one they never set is a base
    class's, here uvicorn's."""
    found = scan(
        tmp_path,
        """
        import uvicorn

        class DrainingServer(uvicorn.Server):
            def handle_exit(self, sig: int, frame: object) -> None:
                super().handle_exit(sig, frame)
                self._captured_signals.remove(sig)
                super()._wait_tasks_to_complete()
        """,
    )
    assert rules(found) == [(6, "private-attribute"), (7, "private-attribute")]


def test_an_empty_reason_excuses_nothing(tmp_path: Path) -> None:
    found = scan(tmp_path, "signals = server._captured_signals  # seam:\n")
    assert rules(found) == [(1, "private-attribute"), (1, "seam-comment")]
    assert found[1].message == "seam-comment: # seam: needs a reason"
    found = scan(tmp_path, "x = 1  # seam:   \n")
    assert [violation.message for violation in found] == ["seam-comment: # seam: needs a reason"]


def test_a_seam_that_excuses_nothing(tmp_path: Path) -> None:
    found = scan(tmp_path, "x = 1  # seam: it once did\n")
    assert [violation.message for violation in found] == [
        "seam-comment: # seam: excuses nothing here"
    ]


def test_the_line_is_the_violations(tmp_path: Path) -> None:
    found = scan(
        tmp_path,
        """
        import sys

        def where() -> str:
            return sys._getframe(1).f_code.co_name
        """,
    )
    assert rules(found) == [(4, "frame-access"), (4, "introspection")]
    assert str(found[0]).startswith("snippet.py:4: frame-access: sys._getframe")


@pytest.mark.parametrize(
    "snippet",
    [
        "class Own:\n    def run(self) -> None:\n        self._mine = 1\n        print(self._mine)",
        "class Own:\n    @classmethod\n    def make(cls) -> None:\n        print(cls._table)\n",
        "value = other._x\n",
        "value = core._slot + core._table['a'] + core._helper()\n",
        "value = project._registry\n",
        "value = super()._helper()\n",
        'value = getattr(core, "_log")\n',
        "moved = point._replace(x=1)\n",
        "pairs = (point._asdict(), Point._fields, Point._make([1, 2]), Point._field_defaults)\n",
        "os._exit(0)\n",
        "name = type(thing).__name__ + str(core.__dict__) + thing.__class__.__qualname__\n",
        "signals = server._captured_signals  # seam: why\n",
        "signals = (\n    server._captured_signals  # seam: why\n)\n",
        "from __future__ import annotations\n",
        "from . import _sibling\nfrom .._parent import thing\n",
        "from tests.support._local import helper\nimport dicehall.server._internal\n",
        "from typing import NamedTuple\n",
        "from websockets.frames import Frame\nfrom websockets import connect, frames\n",
        "import websockets.asyncio.client\nfrom websockets.legacy.server import serve\n",
        "text = 'gen.gi_yieldfrom and send.__self__ in a string'\n",
        "color = Color.RED._value_\n",
    ],
)
def test_does_not_flag(tmp_path: Path, snippet: str) -> None:
    assert scan(tmp_path, snippet) == []


def test_assigning_the_name_makes_it_the_projects(tmp_path: Path) -> None:
    """The project's own objects may set private names on each other."""
    found = scan(tmp_path, "holder._mine = 1\nprint(other._mine)\nprint(other._theirs)\n")
    assert rules(found) == [(3, "private-attribute")]


def test_an_unparsable_file_is_reported(tmp_path: Path) -> None:
    assert rules(scan(tmp_path, "def broken(:\n")) == [(1, "syntax-error")]


def test_a_missing_file_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "project.py").write_text(PROJECT, encoding="utf-8")
    assert seams.check(["project.py", "gone.py"], root=tmp_path) == []
