"""setuptools' build backend, asking for mypyc when the build compiles (DICEHALL_COMPILE=1).

An isolated build (`pip install .`, `python -m build`) installs what the backend asks for
before it runs setup.py; mypy, which brings mypyc, is asked for only by a compiled build,
in the version of the lock file (tests/server/test_compiled.py checks they agree).
"""

from __future__ import annotations

import os
from typing import Any

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F403  (the rest of the backend, unchanged)

MYPYC = "mypy==1.20.2"


def _compiling() -> list[str]:
    return [MYPYC] if os.environ.get("DICEHALL_COMPILE", "") == "1" else []


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return [*build_meta.get_requires_for_build_wheel(config_settings), *_compiling()]


def get_requires_for_build_editable(
    config_settings: dict[str, Any] | None = None,
) -> list[str]:
    return [*build_meta.get_requires_for_build_editable(config_settings), *_compiling()]
