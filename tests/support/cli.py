"""The `dicehall` command as a user runs it, for the tests of its subcommands."""

from __future__ import annotations

import subprocess
import sys

from tests.support.servers import ROOT


def dicehall(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`dicehall ARGS` from the repository's top, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "dicehall.clients.cli", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
