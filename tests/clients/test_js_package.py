"""The JavaScript client as a package a bot author installs (clients/js/README.md).

Each of the README's ways to install it runs as written, in a fresh folder outside the
repository, from a checkout of the package that has none of the repository's npm packages
around it (a user's checkout may have no `ws`; ours has one, at its top); the README's bot is
taken from its code block, so the doc and the test cannot drift, and Node runs it against a
real `dicehall serve` to the end of a game, whose record the server replays to the scores
the bot printed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from dicehall.rules.records import replay
from tests.support.servers import ROOT, running_server

JS = ROOT / "clients" / "js"
README = JS / "README.md"
PLACEHOLDER = "/path/to/dicehall"
"""Where the README's commands say the checkout is."""
NPM_ENV = {
    "npm_config_prefer_offline": "true",  # npm's cache when it has `ws`, else the registry
    "npm_config_audit": "false",
    "npm_config_fund": "false",
    "npm_config_update_notifier": "false",
}


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", README.read_text(), re.M | re.S)


INSTALLS = [block for block in _blocks("sh") if PLACEHOLDER in block]
BOT = next(block for block in _blocks("js") if "from 'dicehall-client'" in block)


@pytest.fixture(scope="module")
def tools() -> tuple[str, str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("node or npm is missing: run `make js` (installs Debian's nodejs and npm)")
    return node, npm


def _checkout(tmp: Path) -> Path:
    """A checkout's clients/js alone; the path the README's commands get for the checkout."""
    shutil.copytree(
        JS,
        tmp / "dicehall" / "clients" / "js",
        ignore=shutil.ignore_patterns("*.tgz", "node_modules"),
    )
    return tmp / "dicehall"


def _install(tmp: Path, commands: str) -> Path:
    """A new bot project made by the README's `commands`, with the README's bot in it."""
    checkout = _checkout(tmp)
    project = tmp / "bot"
    project.mkdir()
    script = "set -euo pipefail\n" + commands.replace(PLACEHOLDER, str(checkout))
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=project,
        env={**os.environ, **NPM_ENV},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
    (project / "bot.mjs").write_text(BOT)
    return project


def test_the_readme_shows_both_ways_to_install() -> None:
    assert len(INSTALLS) == 2, INSTALLS
    assert "npm install ws" in INSTALLS[0] and "npm pack" in INSTALLS[1], INSTALLS


@pytest.mark.parametrize("commands", INSTALLS, ids=["link", "tarball"])
def test_the_readme_bot_plays_a_game_from_a_fresh_project(
    tools: tuple[str, str], tmp_path: Path, commands: str
) -> None:
    node, _ = tools
    project = _install(tmp_path, commands)
    with running_server() as server:
        done = subprocess.run(
            [node, "bot.mjs", server.ws, "qwixx"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert len(lines) == 1, done.stdout
        line = json.loads(lines[0])
        status, body = server.get(f"/api/rooms/{line['room']}/record")
    assert set(line) == {"game", "room", "seat", "actions", "scores", "winners"}, line
    assert line["game"] == "qwixx" and line["seat"] == 0 and line["actions"] > 0, line
    assert status == 200, body
    record = replay(json.loads(body)).to_json()
    assert record["over"] and list(record["scores"].values()) == line["scores"], record
    best = max(line["scores"])
    assert line["winners"] and all(line["scores"][w] == best for w in line["winners"]), line


NO_GLOBAL_WEBSOCKET = ("--import", "data:text/javascript,delete globalThis.WebSocket")


def test_without_ws_the_bot_is_told_to_install_it(tools: tuple[str, str], tmp_path: Path) -> None:
    """On a Node with no WebSocket of its own, a project without `ws` fails at once, with the
    command that fixes it. (A Node that has one, 22 and later, has it taken away first.)"""
    node, _ = tools
    commands = "\n".join(line for line in INSTALLS[0].splitlines() if "install ws" not in line)
    project = _install(tmp_path, commands)
    done = subprocess.run(
        [node, *NO_GLOBAL_WEBSOCKET, "bot.mjs", "ws://127.0.0.1:9/ws", "qwixx"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and done.stdout == "", done.stdout
    assert "(npm install ws)" in done.stderr and "Node.js (v" in done.stderr, done.stderr
