"""The JavaScript client (clients/js): its declarations and its example Node bot.

The TypeScript declarations must be what tools/types.mjs generates from the committed JSON
Schemas, and they must type-check the example bot (`tsc`, checkJs). The example bot, run
by Node against a real `dicehall serve`, plays each game to the end through the module
(`answer`: legal, choose, act, while `owes`), paced under the rate limit, and checks the
revealed seed against the commitment.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from dicehall.clients.client import Client
from tests.support.servers import ROOT, run_async, running_server

JS = ROOT / "clients" / "js"
GAMES = ["qwinto", "qwixx", "qwirkle", "yamb"]
TSC = ROOT / "node_modules" / "typescript" / "bin" / "tsc"
"""(The packages of the repository's npm workspace sit at its top.)"""


@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node")
    if path is None:
        pytest.fail("node is missing: run `make js` (installs Debian's nodejs and npm)")
    if not (ROOT / "node_modules" / ".installed").exists():
        pytest.fail("the JavaScript packages are missing: run `make js` (npm ci from the lock)")
    return path


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=JS, capture_output=True, text=True, timeout=timeout)


def test_the_declarations_are_generated_from_the_schemas(node: str) -> None:
    done = _run(node, "tools/types.mjs", "--check")
    assert done.returncode == 0, done.stderr + "\nrun: cd clients/js && node tools/types.mjs"


def test_the_declarations_type_check_the_example_bot(node: str) -> None:
    done = _run(node, str(TSC), "-p", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_wrong_request_does_not_type_check(node: str, tmp_path: Path) -> None:
    """The check above can fail: a request type that does not exist is an error."""
    bad = tmp_path / "bad.mjs"
    bad.write_text(
        "// @ts-check\n"
        f"import {{ Connection }} from '{JS / 'dicehall.js'}';\n"
        "const conn = new Connection({ url: 'ws://x/ws' });\n"
        "await conn.request('add_bot', { room: 'r' });\n"
    )
    config = tmp_path / "tsconfig.json"
    settings = json.loads((JS / "tsconfig.json").read_text())
    settings["files"] = [str(bad)]
    settings["compilerOptions"]["typeRoots"] = [str(ROOT / "node_modules" / "@types")]
    config.write_text(json.dumps(settings))
    done = _run(node, str(TSC), "-p", str(config))
    assert done.returncode != 0 and "add_bot" in done.stdout, done.stdout + done.stderr


async def _bot(node: str, url: str, game: str, key: str = "") -> dict[str, object]:
    code, out, err = await run_async(
        [node, "examples/bot.mjs", url, game],
        timeout=180,
        cwd=JS,
        env={**os.environ, "NODE_NO_WARNINGS": "1", "DICEHALL_KEY": key},
    )
    assert code == 0, f"{game}: {err.decode()}"
    result: dict[str, object] = json.loads(out.decode().strip().splitlines()[-1])
    return result


async def test_the_node_bot_plays_every_game_to_the_end(node: str) -> None:
    """Each plays as a new player, but the one given a key (`Connection({key})`): the
    player an earlier `hello` (of the Python client) got."""
    with running_server() as server:
        async with Client(server.ws) as owner:
            player = owner.player
        assert player is not None
        keys = [player.key if i == 0 else "" for i in range(len(GAMES))]
        results = await asyncio.gather(
            *(_bot(node, server.ws, game, key) for game, key in zip(GAMES, keys, strict=True))
        )
    for game, result in zip(GAMES, results, strict=True):
        assert result["game"] == game and result["fair"] is True, result
        scores = result["scores"]
        assert isinstance(scores, list) and len(scores) == 2, result
        assert isinstance(result["actions"], int) and result["actions"] > 0, result
    ids = [result["player"] for result in results]
    assert ids[0] == player.id and len(set(ids)) == len(GAMES), ids
