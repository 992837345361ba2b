"""Records replay every game exactly, prove the dice, and point at the entry that is wrong."""

from __future__ import annotations

import copy
import json
from random import Random
from typing import Any

import pytest

from rules import RecordError, all_games, get_game
from rules.base import JSON
from rules.play import play_out, random_chooser
from rules.records import FORMAT, new_record, replay

GAMES = [g.name for g in all_games()]


def recorded_game(name: str, seats: int = 2, seed: bytes = b"r" * 32) -> tuple[JSON, Any]:
    game = get_game(name)
    seats = min(seats, game.max_seats)
    state = game.new_state(seats, seed=seed)
    names = [f"P{i}" for i in range(seats)]
    record = new_record(name, state.options, names, state)
    play_out(state, random_chooser(Random(1)), record["log"])
    record["seed"] = seed.hex()
    record["result"] = {"scores": dict(zip(names, state.scores(), strict=True))}
    return json.loads(json.dumps(record)), state


@pytest.mark.parametrize("name", GAMES)
def test_a_recorded_game_replays_to_the_same_end(name: str) -> None:
    record, state = recorded_game(name)
    result = replay(record)
    assert result.state == state
    assert result.verified is True
    out = result.to_json()
    assert out["over"] is True
    assert out["game"] == name
    assert list(out["scores"].values()) == state.scores()
    assert out["sheets"]["P0"] == state.render(0, "P0")


@pytest.mark.parametrize("name", GAMES)
def test_without_the_seed_the_written_outcomes_rule(name: str) -> None:
    record, state = recorded_game(name)
    del record["seed"]
    result = replay(record)
    assert result.verified is None
    assert result.state.scores() == state.scores()


@pytest.mark.parametrize("name", GAMES)
def test_a_changed_outcome_is_caught_by_the_seed(name: str) -> None:
    record, _ = recorded_game(name)
    index = next(i for i, e in enumerate(record["log"]) if "chance" in e)
    # Replace the outcome with the one a different seed gives for the same position.
    probe = get_game(name).new_state(len(record["seats"]), record["options"], bytes(32))
    for entry in record["log"][:index]:
        if "chance" in entry:
            probe.apply_chance(entry["chance"])
        elif entry.get("timeout"):
            probe.apply_timeout(entry["seat"])
        else:
            probe.apply_action(entry["seat"], entry["action"])
    other = probe.sample_chance()
    if other == record["log"][index]["chance"]:
        pytest.fail("choose another seed: the outcomes coincide")
    record["log"][index]["chance"] = other
    with pytest.raises(RecordError) as err:
        replay(record)
    assert err.value.rule == "outcome-not-from-seed"
    assert err.value.index == index


def test_a_wrong_commitment_is_refused() -> None:
    record, _ = recorded_game(GAMES[0])
    record["commitment"] = "0" * 64
    with pytest.raises(RecordError) as err:
        replay(record)
    assert err.value.rule == "commitment-mismatch"


def test_a_wrong_result_is_refused() -> None:
    record, _ = recorded_game(GAMES[0])
    record["result"]["scores"]["P0"] += 1
    with pytest.raises(RecordError) as err:
        replay(record)
    assert err.value.rule == "result-mismatch"


@pytest.mark.parametrize("name", GAMES)
def test_an_illegal_entry_is_named_with_its_rule(name: str) -> None:
    record, _ = recorded_game(name)
    del record["seed"]
    index = next(i for i, e in enumerate(record["log"]) if "action" in e)
    bad = copy.deepcopy(record)
    bad["log"][index]["seat"] = (bad["log"][index]["seat"] + 1) % 7
    bad["log"][index]["action"] = {"type": "no-such-action"}
    with pytest.raises(RecordError) as err:
        replay(bad)
    assert err.value.index == index
    assert err.value.rule in {"not-your-turn", "unknown-action", "no-such-seat"}
    assert f"log entry {index}" in str(err.value)


@pytest.mark.parametrize(
    ("mutate", "rule"),
    [
        (lambda r: r.__setitem__("game", "chess"), "unknown-game"),
        (lambda r: r.__setitem__("format", "other/9"), "unsupported-format"),
        (lambda r: r.__setitem__("seats", ["a", "a"]), "malformed-record"),
        (lambda r: r.__setitem__("seats", "ab"), "malformed-record"),
        (lambda r: r.pop("log"), "malformed-record"),
        (lambda r: r.__setitem__("seed", "zz"), "malformed-record"),
        (lambda r: r.__setitem__("options", {"bogus": 1}), "invalid-options"),
        (lambda r: r["log"].insert(0, 5), "malformed-entry"),
        (lambda r: r["log"].insert(0, {"seat": 0}), "malformed-entry"),
        (lambda r: r["log"].insert(0, {"seat": "0", "action": {}}), "malformed-entry"),
    ],
)
def test_malformed_records(mutate: Any, rule: str) -> None:
    record, _ = recorded_game(GAMES[0])
    del record["seed"]
    del record["result"]
    mutate(record)
    with pytest.raises(RecordError) as err:
        replay(record)
    assert err.value.rule == rule


def test_record_format_name() -> None:
    record, _ = recorded_game(GAMES[0])
    assert record["format"] == FORMAT
    with pytest.raises(RecordError):
        replay([])
