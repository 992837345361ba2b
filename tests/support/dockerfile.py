"""deploy/Dockerfile as instructions: what the deploy tests check and the packaging test
replays (no container runtime here to build it)."""

from __future__ import annotations

import re

from .servers import ROOT


def dockerfile_steps() -> list[tuple[str, str]]:
    """(instruction, arguments) of deploy/Dockerfile in order, each continuation line
    joined to its instruction; comments and blank lines left out."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "deploy" / "Dockerfile").read_text())
    steps: list[tuple[str, str]] = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            steps.append((word.upper(), rest.strip()))
    return steps
