"""The JavaScript client (clients/js): its declarations and its example Node bot.

The TypeScript declarations must be what tools/types.mjs generates from the committed JSON
Schemas, and they must type-check the example bot (`tsc`, checkJs). The example bot, run
by Node against a real `dicehall serve`, plays each game to the end through the module
(`answer`: legal, choose, act, while `owes`), paced under the rate limit, and checks the
revealed seed against the commitment. `Connection.turn(room)` is the open turn window as of
the latest message received, so a listener attached after the `window` came still finds it.
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


def _node_script(node: str, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """An ES module run from clients/js, where `./dicehall.js` and `ws` resolve."""
    return _run(node, "--input-type=module", "-e", script, *args)


TURN_TRACKING = """
import { Connection } from './dicehall.js';

const conn = new Connection({ url: 'ws://127.0.0.1:9/ws', WebSocket: class {}, reconnect: false });
const seen = [];
const feed = (msg) => {
  conn.receive(JSON.stringify(msg));
  seen.push([msg.type, msg.seq, conn.turn('r')]);
};
const actors = [{ seat: 0, kinds: ['mark'] }, { seat: 1, kinds: ['mark'] }];
const info = { room: 'r' };
feed({ type: 'snapshot', room: 'r', seq: 3, seat: 0, view: {}, info, turn: null });
feed({ type: 'window', room: 'r', seq: 4, window: 1, deadline: 9, actors });
feed({ type: 'progress', room: 'r', seq: 4, window: 1, answered: [0] });
feed({ type: 'progress', room: 'r', seq: 4, window: 7, answered: [1] });
feed({ type: 'window_closed', room: 'r', seq: 5, window: 1, actions: [] });
feed({ type: 'window', room: 'r', seq: 4, window: 1, deadline: 9, actors });
feed({ type: 'window', room: 'r', seq: 6, window: 2, deadline: 10, actors });
feed({ type: 'window', room: 'other', seq: 50, window: 5, deadline: 10, actors });
feed({ type: 'window_closed', room: 'r', seq: 7, window: 1, actions: [] });
feed({ type: 'snapshot', room: 'r', seq: 20, seat: 0, view: {}, info, turn: null });
feed({ type: 'window', room: 'r', seq: 21, window: 3, deadline: 11, actors });
feed({ type: 'game_over', room: 'r', seq: 22, scores: [1, 2], winners: [1], seed: '' });
console.log(JSON.stringify({ seen, other: conn.turn('other'), unknown: conn.turn('nowhere') }));
"""


def test_turn_follows_the_room_messages(node: str) -> None:
    """`turn(room)` as each message leaves it: a window opens it, `progress` takes the seats
    that answered out of its actors, its `window_closed` (not another's) or `game_over`
    closes it, a snapshot says what is open, and a window replayed from an older seq (a
    resume asked from too far back) does not reopen a closed one."""
    done = _node_script(node, TURN_TRACKING)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    both = [{"seat": 0, "kinds": ["mark"]}, {"seat": 1, "kinds": ["mark"]}]
    one = [{"seat": 1, "kinds": ["mark"]}]
    assert result["seen"] == [
        ["snapshot", 3, None],
        ["window", 4, {"window": 1, "deadline": 9, "actors": both}],
        ["progress", 4, {"window": 1, "deadline": 9, "actors": one}],
        ["progress", 4, {"window": 1, "deadline": 9, "actors": one}],
        ["window_closed", 5, None],
        ["window", 4, None],
        ["window", 6, {"window": 2, "deadline": 10, "actors": both}],
        ["window", 50, {"window": 2, "deadline": 10, "actors": both}],
        ["window_closed", 7, {"window": 2, "deadline": 10, "actors": both}],
        ["snapshot", 20, None],
        ["window", 21, {"window": 3, "deadline": 11, "actors": both}],
        ["game_over", 22, None],
    ]
    assert result["other"] == {"window": 5, "deadline": 10, "actors": both}
    assert result["unknown"] is None


LATE_LISTENER = """
import { WebSocket as WsPackage } from 'ws';
import { Connection, answer } from './dicehall.js';

const conn = new Connection({
  url: process.argv[1],
  WebSocket: globalThis.WebSocket ?? WsPackage,
  reconnect: false,
});
conn.connect();
await conn.ready();
const create = { game: 'qwixx', seats: 2, turn_window: 60, public: false };
const { room } = (await conn.request('create', create)).room;
const { seat } = await conn.request('join', { room, seat: 0 });
await conn.request('add_bots', { room });
const before = conn.turn(room);

// Only this listener hears the first window: it is gone before the bot's is attached.
const first = await new Promise((resolve) => {
  const early = ({ detail: msg }) => {
    if (msg.type !== 'window' || msg.room !== room) return;
    conn.removeEventListener('message', early);
    resolve(msg);
  };
  conn.addEventListener('message', early);
  conn.request('start', { room });
});
const found = conn.turn(room);

const random = (actions) => actions[Math.floor(Math.random() * actions.length)];
const sent = {};
let taken = -1;
let turns = Promise.resolve();
let checked = 0;
function play() {
  const turn = conn.turn(room);
  if (!turn || turn.window === taken || !turn.actors.some((a) => a.seat === seat)) return;
  taken = turn.window;
  turns = turns.then(async () => {
    sent[turn.window] = await answer(conn, room, turn.window, random);
  });
}
const over = new Promise((resolve, reject) => {
  conn.addEventListener('message', ({ detail: msg }) => {
    if (msg.room !== room) return;
    const turn = conn.turn(room);
    const open = msg.type === 'window' ? turn?.window === msg.window : turn === null;
    if (['window', 'window_closed', 'game_over'].includes(msg.type) && !open) {
      reject(new Error(`turn(room) is ${JSON.stringify(turn)} at ${JSON.stringify(msg)}`));
    }
    checked += 1;
    if (msg.type === 'game_over') resolve(msg);
    else play();
  });
});
play();
const end = await over;
await turns;
conn.close();
const window = { window: first.window, deadline: first.deadline, actors: first.actors };
console.log(JSON.stringify({
  room, seat, before, window, found, sent, checked, scores: end.scores, after: conn.turn(room),
}));
"""


async def test_a_listener_attached_late_finds_the_open_window(node: str) -> None:
    """The first window comes before the bot listens: `turn(room)` has it, and the bot
    answers it and plays on to the end from `turn(room)` alone, which as each window,
    window_closed and game_over reaches a listener is what that message left open."""
    with running_server() as server:
        code, out, err = await run_async(
            [node, "--input-type=module", "-e", LATE_LISTENER, server.ws], timeout=120, cwd=JS
        )
    assert code == 0, err.decode()
    result = json.loads(out.decode())
    assert result["before"] is None, result
    assert result["found"] == result["window"], result
    assert any(a["seat"] == result["seat"] for a in result["window"]["actors"]), result
    assert result["sent"][str(result["window"]["window"])] > 0, result
    assert result["checked"] > len(result["sent"]) > 1, result
    assert len(result["scores"]) == 2 and result["after"] is None, result
