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
import shutil
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from dicehall.server.compiled import MODULES
from tests.server.test_compiled import EXPECT_COMPILED
from tests.support.dockerfile import dockerfile_steps
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
    script = "import dicehall.server, dicehall.clients; print(dicehall.server.__file__)"
    where = run(bin_ / "python", "-c", script, cwd=outside)
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


def test_the_wheel_installs_one_top_level_package(
    wheel: Path, constraints: Path, outside: Path
) -> None:
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"dicehall"}
    # A bot author's folder with a server.py, a rules/ and a protocol.py of their own:
    # the installed package is still what `import dicehall...` finds.
    bin_ = fresh_venv(outside / "author-venv", str(wheel), constraints)
    folder = outside / "my-bot"
    (folder / "rules").mkdir(parents=True)
    for own in ("server.py", "protocol.py", "clients.py", "rules/__init__.py"):
        (folder / own).write_text("raise SystemExit('the author\\'s own module was imported')\n")
    script = "from dicehall.clients.client import Client; import dicehall.rules.qwixx; print('ok')"
    done = run(bin_ / "python", "-c", script, cwd=folder)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr


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


def dockerfile_build_stage() -> list[tuple[str, str]]:
    """deploy/Dockerfile's first stage (the final one copies what it built)."""
    steps = dockerfile_steps()
    final = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[:final]


def test_the_docker_images_build_stage_replayed_here_builds_a_server_that_plays(
    tmp_path: Path, outside: Path
) -> None:
    """No container runtime here: deploy/Dockerfile's build stage is replayed step by step,
    its absolute paths under a temporary root, with this machine's Python 3.11 for the
    image's (the final stage copies /opt/dicehall and nothing else). The system packages
    its RUN installs with apt-get (a C compiler) are the machine's own here. A compiled
    build unless `make test` runs the pure suite (`--build-arg DICEHALL_COMPILE=0`)."""
    compile_ = "1" if EXPECT_COMPILED else "0"
    root = tmp_path / "root"
    python_dir = tmp_path / "python"  # `python` as the image has it: the base interpreter
    python_dir.mkdir()
    bindir = Path(sysconfig.get_config_var("BINDIR"))
    (python_dir / "python").symlink_to(
        bindir / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    )
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
        "PATH": f"{python_dir}:{os.environ['PATH']}",
    }
    workdir = root
    steps = dockerfile_build_stage()
    assert steps[0] == ("FROM", "python:3.11-slim AS build")
    apt = [args for word, args in steps if word == "RUN" and "apt-get" in args]
    assert len(apt) == 1 and '"$DICEHALL_COMPILE" = 1' in apt[0] and "gcc" in apt[0]
    for word, args in steps[1:]:
        args = re.sub(r"(?<![\w.$])/(opt|wheels)\b", lambda m: f"{root}/{m[1]}", args)
        if word == "ARG":
            name, _, default = args.partition("=")
            env[name] = compile_ if name == "DICEHALL_COMPILE" else default
        elif word == "ENV":
            env.update(pair.partition("=")[::2] for pair in args.split())
        elif word == "WORKDIR":
            workdir = root / args.lstrip("/")
            workdir.mkdir(parents=True, exist_ok=True)
        elif word == "COPY":
            *sources, dest = args.split()
            target = workdir / dest
            for source in sources:
                path = ROOT / source
                into = target / path.name if dest.endswith("/") or len(sources) > 1 else target
                if path.is_dir():
                    shutil.copytree(
                        path, into, ignore=shutil.ignore_patterns("__pycache__", "*.so")
                    )
                else:
                    into.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(path, into)
        elif word == "RUN" and "apt-get" not in args:
            done = subprocess.run(
                ["sh", "-c", args], cwd=workdir, env=env, capture_output=True, text=True,
                timeout=900,
            )  # fmt: skip
            assert done.returncode == 0, f"RUN {args}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        else:
            assert word == "RUN", f"the replay does not know {word}"
    bin_ = root / "opt" / "dicehall" / "bin"
    installed = run(bin_ / "python", "-m", "pip", "list", "--format=freeze", cwd=outside)
    names = {line.split("==")[0].lower() for line in installed.stdout.split()}
    assert "dicehall" in names and not names & {"mypy", "setuptools"}, "the build's tools stay out"
    with running_server(command=[str(bin_ / "dicehall")], cwd=outside) as server:
        compiled = len(MODULES) if EXPECT_COMPILED else 0
        assert f"dicehall_compiled_modules {compiled}.0" in server.get("/metrics")[1]
        play_one_game(bin_, server.ws, "qwinto", seats=2, cwd=outside)
        assert server.terminate() == 0
