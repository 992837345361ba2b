"""The words of the web page's room log (clients/web/js/describe.js), run in Node on the
events of whole games as the rules engine makes them (the server passes them on as they
are, docs/protocol.md "event"). Issue 33: a Yamb roll names the dice it keeps by their
values, the final scores name their seats, a page that comes in with a snapshot (or the
replay of a stored game) says the same as a page that saw it all."""

from __future__ import annotations

import json
import shutil
import subprocess
from random import Random
from typing import Any

import pytest

from dicehall.rules import as_wire, get_game
from dicehall.rules.base import State
from tests.support.servers import ROOT

SCRIPT = """
import * as describe from './clients/web/js/describe.js';
let input = '';
for await (const chunk of process.stdin) input += chunk;
const { game, names, items } = JSON.parse(input);
const nameOf = (s) => names[s];
let memo = {};
const out = items.map((item) => {
  if (item.entry) return describe.describeEntry(game, item.entry, item.views, nameOf);
  if (item.view) return describe.rememberView?.(game, item.view, memo) ?? null;
  const text = describe.describeEvent(game, item.event, nameOf, memo);
  memo = JSON.parse(JSON.stringify(memo)); // what a reload keeps (localStorage)
  return text;
});
process.stdout.write(JSON.stringify(out));
"""

NAMES = ["Ann", "You"]


@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node")
    if path is None:
        pytest.fail("node is missing: run `make js` (installs Debian's nodejs and npm)")
    return path


def describe(node: str, game: str, items: list[dict[str, Any]]) -> list[str | None]:
    done = subprocess.run(
        [node, "--input-type=module", "-e", SCRIPT],
        cwd=ROOT,
        input=json.dumps({"game": game, "names": NAMES, "items": items}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines: list[str | None] = json.loads(done.stdout)
    return lines


def play(game: str, seed: int, stop: int | None = None) -> tuple[State, list[dict[str, Any]]]:
    """A two-seat game of random moves; its public events (to the end, or `stop` steps)."""
    state = get_game(game).new_state(2, seed=bytes([seed]) * 32)
    rng = Random(seed)
    events: list[dict[str, Any]] = []
    while not state.is_over() and (stop is None or stop > 0):
        if state.chance_pending():
            _, new = state.resolve_chance()
        else:
            seat = state.actors()[0]
            new = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
        events += as_wire(new)
        stop = None if stop is None else stop - 1
    return state, events


def listed(items: list[Any]) -> str:
    words = [str(i) for i in items]
    return f"{', '.join(words[:-1])} and {words[-1]}" if len(words) > 1 else words[0]


def kept(seat: int, hold: list[int], dice: list[int]) -> str:
    which = f"{'dice' if len(hold) > 1 else 'die'} {listed([i + 1 for i in hold])}"
    verb = "rolls" if NAMES[seat] != "You" else "roll"
    return f"{NAMES[seat]} {verb} again, keeping {listed([dice[i] for i in hold])} ({which})"


def test_a_yamb_roll_names_the_dice_it_keeps_by_value_and_place(node: str) -> None:
    _, events = play("yamb", 3)
    lines = describe(node, "yamb", [{"event": e} for e in events])
    last: dict[int, list[int]] = {}
    checked = 0
    for event, line in zip(events, lines, strict=True):
        if event["type"] == "rolled":
            last[event["seat"]] = event["dice"]
        hold = event.get("action", {}).get("hold")
        if event["type"] == "applied" and hold:
            assert line == kept(event["seat"], hold, last[event["seat"]])
            checked += 1
    assert checked > 20


def test_the_final_scores_name_every_seat(node: str) -> None:
    for game in ("qwinto", "yamb"):
        state, events = play(game, 5)
        assert events[-1]["type"] == "game_over"
        (a, b) = state.scores()
        assert describe(node, game, [{"event": events[-1]}]) == [f"Final scores: Ann {a}, You {b}"]


def test_a_page_that_comes_in_mid_turn_and_the_replay_name_the_dice_kept(node: str) -> None:
    """A watcher's snapshot in the middle of a Yamb turn; the replay of a stored game,
    whose log entries carry no events (the views after each entry tell the dice)."""
    state, _ = play("yamb", 7, stop=2)  # the first roll of seat 0, rolled
    dice = state.view(None)["tables"][0]["dice"]
    views = [state.view(s) for s in range(2)]
    hold = [0, 2]
    roll = {"type": "roll", "hold": hold}
    state.apply_action(0, roll)
    entry = {"kind": "action", "seat": 0, "action": roll}
    items = [
        {"view": views[1]},
        {"event": {"type": "applied", "seat": 0, "action": roll}},
        {"entry": entry, "views": [state.view(s) for s in range(2)]},
    ]
    assert describe(node, "yamb", items)[1:] == [kept(0, hold, dice)] * 2
