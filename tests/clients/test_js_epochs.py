"""The JavaScript clients when a failover takes a room back (docs/protocol.md, "Epochs"),
run in Node on crafted server messages: the module (clients/js/dicehall.js) asks for
`epochs` when offered, keeps each room's epoch from snapshots and resume replies, and says
it in `resume` only with the feature on; the web page's stream (clients/web/js/
roomstream.js) takes a snapshot with a lower seq mid-stream, drops the log's lines after
it and goes on with the messages that follow, though their seqs were seen before."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from tests.support.servers import ROOT

MODULE = """
import { Connection, EPOCHS } from './clients/js/dicehall.js';
const offered = process.argv[1] === 'on';
const sent = [];
class FakeSocket {
  static OPEN = 1;
  constructor() { this.readyState = 1; }
  send(data) { sent.push(JSON.parse(data)); }
  close() {}
}
const conn = new Connection({ url: 'ws://scripted/ws', WebSocket: FakeSocket, reconnect: false });
const feed = (msg) => conn.receive(JSON.stringify(msg));
const last = () => sent[sent.length - 1];
const tick = () => new Promise((r) => setTimeout(r, 0));
const out = {};
await conn.connect();
feed({ type: 'welcome', server: 's', protocol: 'dicehall.v1.json', limits: {},
       features: ['progress', 'identity', ...(offered ? [EPOCHS] : [])] });
await tick();
out.asked = last().features;
const on = last().features.filter((f) => f === 'identity' || (offered && f === EPOCHS));
feed({ type: 'reply', id: last().id, ok: true, result: { features: on } });
await conn.ready();
const info = { room: 'r1', seats: [] };
const turn = (window) => ({ window, deadline: 1, actors: [{ seat: 0, kinds: ['pass'] }] });
feed({ type: 'snapshot', room: 'r1', seq: 1, seat: 0, view: {}, info, turn: null, epoch: 0 });
const window = (seq) => ({ type: 'window', room: 'r1', seq, window: seq, deadline: 1, actors: [] });
for (const seq of [2, 3, 4, 5]) feed(window(seq));
feed({ type: 'snapshot', room: 'r1', seq: 3, seat: 0, view: {}, info, turn: turn(3), epoch: 1 });
out.afterRewind = [conn.seqs.get('r1'), conn.epoch('r1'), conn.turn('r1').window];
feed(window(4));
out.afterNext = [conn.seqs.get('r1'), conn.turn('r1').window];
const resumed = conn.resume('r1', 4);
await tick();
out.resume = last();
feed({ type: 'reply', id: last().id, ok: true, result: { mode: 'events', seq: 6, epoch: 2 } });
await resumed;
out.epochAfterResume = conn.epoch('r1');
process.stdout.write(JSON.stringify(out));
process.exit(0); // (the heartbeat's timer would keep Node up)
"""

PAGE = """
import { receive } from './clients/web/js/roomstream.js';
const resumes = [];
const page = {
  room: 'r1', mode: 'seat', seat: 0, lastSeq: 0, roomEpoch: null, info: null, view: null,
  turn: null, over: null, ended: false, memo: {}, log: [], logged: new Set(), early: [],
  syncing: false, backfillFrom: null,
  conn: { resume: (...args) => { resumes.push(args); return Promise.resolve({}); } },
  note(text) { this.log.push({ seq: this.lastSeq, text, kind: 'note' }); },
  nameOf: (s) => `seat ${s}`,
  persistSoon() {}, renderSoon() {}, scheduleRefresh() {},
};
const seats = [{ seat: 0, kind: 'human', name: 'Ann' }];
const info = { room: 'r1', game: 'qwixx', status: 'playing', seats };
const snapshot = (seq, epoch) =>
  ({ type: 'snapshot', room: 'r1', seq, seat: 0, view: {}, info, turn: null, epoch });
const chat = (seq, text) => ({ type: 'chat', room: 'r1', seq, from: 'Ann', seat: 0, text });
receive(page, snapshot(1, 0));
for (const seq of [2, 3, 4, 5]) receive(page, chat(seq, `line ${seq}`));
const over = { scores: [1], winners: [0], seed: 'ab', commitment: 'cd' };
receive(page, { type: 'game_over', room: 'r1', seq: 6, ...over });
receive(page, snapshot(3, 1));
receive(page, chat(4, 'again 4'));
receive(page, chat(5, 'again 5'));
receive(page, chat(4, 'again 4')); // (a repeat: already logged)
process.stdout.write(JSON.stringify({
  log: page.log.map((e) => [e.seq, e.kind, e.text]),
  lastSeq: page.lastSeq, epoch: page.roomEpoch, over: page.over, ended: page.ended, resumes,
}));
"""


@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node")
    if path is None:
        pytest.fail("node is missing: run `make js` (installs Debian's nodejs and npm)")
    return path


def run(node: str, script: str, *args: str) -> Any:
    done = subprocess.run(
        [node, "--input-type=module", "-e", script, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("offered", [True, False])
def test_the_module_keeps_epochs_and_says_them_only_with_the_feature(
    node: str, offered: bool
) -> None:
    out = run(node, MODULE, "on" if offered else "off")
    assert ("epochs" in out["asked"]) is offered
    assert out["afterRewind"] == [3, 1, 3]  # the lower snapshot replaced the room
    assert out["afterNext"] == [4, 4]  # seq 4 again: news, not a repeat
    resume = {k: v for k, v in out["resume"].items() if k != "id"}
    if offered:
        assert resume == {"type": "resume", "room": "r1", "last_seq": 4, "epoch": 1}
    else:
        assert resume == {"type": "resume", "room": "r1", "last_seq": 4}
    assert out["epochAfterResume"] == 2


def test_the_page_drops_the_log_after_a_snapshot_that_goes_back(node: str) -> None:
    out = run(node, PAGE)
    texts = [(seq, text) for seq, kind, text in out["log"] if kind != "note"]
    assert texts == [
        (2, "Ann: line 2"),
        (3, "Ann: line 3"),
        (4, "Ann: again 4"),
        (5, "Ann: again 5"),
    ]
    notes = [(seq, text) for seq, kind, text in out["log"] if kind == "note"]
    assert notes[-1][0] == 3 and "went back to an earlier point" in notes[-1][1]
    assert (out["lastSeq"], out["epoch"]) == (5, 1)
    assert out["over"] is None and out["ended"] is False  # the game over never happened
    assert out["resumes"] == []
