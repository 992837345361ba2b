"""dicehall as a user installs it: the wheel, in a fresh venv outside the repository.

The wheel is built from this tree; its declared dependencies are resolved by uv from the
package index, held to the lock's versions (so a run is reproducible, and a dependency
the code needs but the wheel does not declare fails here). Nothing of the repository is
on the venv's path: the processes run from a temporary directory.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.compiled import MODULES
from tests.server.test_compiled import EXPECT_COMPILED
from tests.support.servers import ROOT, running_server

UV = [sys.executable, "-m", "uv"]


def run(
    *command: str | Path, cwd: Path, timeout: float = 300, **env: str
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    clean.update(env)
    return subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=clean,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel a user would install; under `make test-compiled`, the compiled one."""
    out = tmp_path_factory.mktemp("dist")
    build = run(
        *(sys.executable, "-m", "build", "--wheel", "--no-isolation", "-o", out, "."),
        cwd=ROOT,
        DICEHALL_COMPILE="1" if EXPECT_COMPILED else "0",
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (found,) = out.glob("dicehall-*.whl")
    return found


@pytest.fixture(scope="module")
def constraints(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """name==version of every package in requirements/dev.txt (with its markers)."""
    lock = (ROOT / "requirements" / "dev.txt").read_text()
    pins = re.findall(r"^([A-Za-z0-9._-]+==[^ \\]+(?: ; [^\\]+)?)", lock, re.M)
    path = tmp_path_factory.mktemp("constraints") / "constraints.txt"
    path.write_text("\n".join(p.strip() for p in pins) + "\n")
    return path


def fresh_venv(where: Path, requirement: str, constraints: Path) -> Path:
    """A new venv at `where` with `requirement` installed; its bin/ directory."""
    made = run(*UV, "venv", "--python", sys.executable, where, cwd=where.parent)
    assert made.returncode == 0, made.stderr
    python = where / "bin" / "python"
    done = run(*UV, "pip", "install", "--python", python, "-c", constraints, requirement, cwd=where)
    assert done.returncode == 0, done.stdout + done.stderr
    return where / "bin"


def play_one_game(bin_: Path, url: str, game: str, seats: int, cwd: Path) -> None:
    """`dicehall bot` from the venv plays one game to its verified end."""
    done = run(
        bin_ / "dicehall",
        *("bot", "--url", url, "--game", game, "--seats", str(seats), "--turn-window", "5"),
        cwd=cwd,
        timeout=150,
    )
    assert done.returncode == 0, done.stderr
    (line,) = [json.loads(text) for text in done.stdout.splitlines()]
    assert line["game"] == game and line["seed_verified"] is True


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A working directory with nothing of the repository in it."""
    yield tmp_path_factory.mktemp("elsewhere")


def test_the_server_extra_serves_the_web_client_and_a_bot_game(
    wheel: Path, constraints: Path, outside: Path
) -> None:
    bin_ = fresh_venv(outside / "server-venv", f"{wheel}[server]", constraints)
    where = run(
        bin_ / "python", "-c", "import server, clients; print(server.__file__)", cwd=outside
    )
    assert "site-packages" in where.stdout, where.stdout + where.stderr
    with running_server(command=[str(bin_ / "dicehall")], cwd=outside) as server:
        with urllib.request.urlopen(server.http + "/", timeout=5) as page:
            assert page.status == 200 and b"<script" in page.read()
        for module in ("main.js", "dicehall.js"):  # the page's app and the JS client it imports
            with urllib.request.urlopen(f"{server.http}/js/{module}", timeout=5) as script:
                assert script.status == 200 and b"import" in script.read()
        play_one_game(bin_, server.ws, "qwixx", seats=2, cwd=outside)
        compiled = len(MODULES) if EXPECT_COMPILED else 0
        assert f"dicehall_compiled_modules {compiled}.0" in server.get("/metrics")[1]
        # the history database, migrated by the wheel's own migrations, has the game
        deadline = time.monotonic() + 30
        while "dicehall_history_saved_total 1.0" not in server.get("/metrics")[1]:
            assert time.monotonic() < deadline, server.get("/readyz")[1]
            time.sleep(0.1)  # (polling /metrics: nothing announces a save)
        assert server.terminate() == 0


def test_the_core_install_plays_bots_and_names_the_extras_it_lacks(
    wheel: Path, constraints: Path, outside: Path
) -> None:
    bin_ = fresh_venv(outside / "core-venv", str(wheel), constraints)
    lacking = run(bin_ / "python", "-c", "import starlette", cwd=outside)
    assert lacking.returncode != 0, "the core install pulls the server's dependencies"
    with running_server() as server:  # the repository's own server
        play_one_game(bin_, server.ws, "yamb", seats=1, cwd=outside)
    serve = run(bin_ / "dicehall", "serve", cwd=outside)
    assert serve.returncode == 2
    (message,) = serve.stderr.strip().splitlines()  # one line, no traceback
    assert re.fullmatch(
        r"dicehall serve needs the 'server' extra \(no module named '\w+'\):"
        r" pip install 'dicehall\[server\]'",
        message,
    ), message
    load = run(
        bin_ / "dicehall",
        *("loadtest", "--url", "ws://127.0.0.1:9/ws", "--rooms", "1", "--duration", "1"),
        cwd=outside,
    )
    assert load.returncode == 2
    (message,) = load.stderr.strip().splitlines()
    assert "needs the 'loadtest' extra" in message and "dicehall[loadtest]" in message
    rated = run(
        bin_ / "dicehall",
        *("arena", "--game", "qwixx", "--bots", "strong,random"),
        "--rated",
        "--games",
        "2",
        cwd=outside,
    )
    assert rated.returncode == 2
    (message,) = rated.stderr.strip().splitlines()
    assert "dicehall arena --rated needs the 'server' extra" in message
