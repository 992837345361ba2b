"""`make lock`: write the lock files of requirements/ from pyproject.toml, with uv.

- dev.txt: everything a developer and CI install (every extra and the dev group),
  resolved for every platform and Python the project supports, each file hashed.
- server.txt: what the Docker image installs (`dicehall[server]`), and build.txt what it
  builds the project with (setuptools, and mypy for mypyc), pinned to dev.txt's versions.
- oldest.txt: the declared minimum of every runtime dependency (uv's lowest-direct
  resolution) with the dev tools of dev.txt, for `make test-oldest` on this Python.

They are pip's hashed requirements format, installed with `pip install --require-hashes`:
installing needs only pip, and they name no index (pip's own configuration decides where
packages come from). Usage: `python requirements/lock.py` (from `make lock`).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
UV = [sys.executable, "-m", "uv"]
COMMON = ["--generate-hashes", "--custom-compile-command", "make lock", "--quiet"]


def compile_lock(out: str, *args: str, source: str = "pyproject.toml", stdin: str = "") -> None:
    command = [*UV, "pip", "compile", source, *COMMON, *args, "-o", f"requirements/{out}"]
    subprocess.run(command, cwd=ROOT, check=True, input=stdin, text=True)


def dev_tool_pins() -> list[str]:
    """The dev group's packages at dev.txt's versions (name==version lines)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    names = {
        re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0].lower().replace("_", "-")
        for spec in project["dependency-groups"]["dev"]
    }
    pins = re.findall(r"^([A-Za-z0-9._-]+)==([^ ;\\]+)", (HERE / "dev.txt").read_text(), re.M)
    return [f"{name}=={version}" for name, version in pins if name.lower() in names]


def main() -> int:
    compile_lock("dev.txt", "--all-extras", "--group", "dev", "--universal")
    compile_lock("server.txt", "--extra", "server", "--universal", "-c", "requirements/dev.txt")
    compile_lock(
        "build.txt",
        "--universal",
        "-c",
        "requirements/dev.txt",
        source="-",
        stdin="setuptools\nmypy\n",
    )
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as tools:
        tools.write("\n".join(dev_tool_pins()) + "\n")
        tools.flush()
        compile_lock(
            "oldest.txt",
            "--all-extras",
            "--group",
            "dev",
            "--resolution",
            "lowest-direct",
            "--python-version",
            f"{sys.version_info.major}.{sys.version_info.minor}",
            "-c",
            tools.name,
            "--no-annotate",  # (the constraints file's path would change every run)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
