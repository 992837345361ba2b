"""`dicehall arena`: offline bot games, deterministic per seed whatever the process count."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from dicehall.clients.arena import (
    ArenaConfig,
    ArenaError,
    format_table,
    lineup,
    play_game,
    run_arena,
)
from dicehall.rules.base import JSON
from dicehall.rules.bots import Bot
from dicehall.rules.bots import base as bots_base
from dicehall.server.history.store import HistoryStore
from tests.support.cli import dicehall
from tests.support.servers import ROOT

BOT_KEYS = {"bot", "games", "mean", "se", "win_rate", "decisions", "p50_ms", "p99_ms"}
REPORT_KEYS = {"game", "seats", "games", "seed", "preset", "options", "bots", "procs", "seconds"}
TIMING = ("p50_ms", "p99_ms")


def outcome(report: dict[str, Any]) -> dict[str, Any]:
    """The report without what depends on the machine (times, processes)."""
    out = {k: v for k, v in report.items() if k not in ("procs", "seconds")}
    out["bots"] = [{k: v for k, v in b.items() if k not in TIMING} for b in report["bots"]]
    return out


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dicehall.clients.cli", "arena", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_same_seed_gives_the_same_games_with_any_process_count() -> None:
    cfg = ArenaConfig(game="qwixx", bots=("greedy", "random"), seats=2, games=12, seed="s1")
    one = run_arena(cfg)
    two = run_arena(ArenaConfig(**{**cfg.__dict__, "procs": 2}))
    assert two["procs"] == 2 and one["procs"] == 1
    assert outcome(one) == outcome(two)
    other = run_arena(ArenaConfig(**{**cfg.__dict__, "seed": "s2"}))
    assert outcome(other) != outcome(one)


def test_json_report_from_the_command_line() -> None:
    args = ("--game", "qwinto", "--bots", "strong,greedy", "--seats", "1", "--games", "6")
    first = arena(*args, "--seed", "7", "--json", "--procs", "2")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert set(report) == REPORT_KEYS
    assert report["options"] == {"reroll": False} and report["preset"] is None
    assert [b["bot"] for b in report["bots"]] == ["strong", "greedy"]
    for b in report["bots"]:
        assert set(b) == BOT_KEYS
        assert b["games"] == 3  # solitaire: each round's deal is played by each bot
        assert b["win_rate"] is None  # nobody to beat alone
        assert b["decisions"] > 0 and 0 < b["p50_ms"] <= b["p99_ms"]
    again = arena(*args, "--seed", "7", "--json", "--procs", "1")
    assert outcome(json.loads(again.stdout)) == outcome(report)
    table = arena(*args, "--seed", "7")
    assert table.returncode == 0
    lines = table.stdout.splitlines()
    assert lines[0].startswith("arena: qwinto, 1 seat(s), 6 games, seed 7;")
    assert lines[2].split()[:3] == ["strong", "3", f"{report['bots'][0]['mean']:.2f}"]
    assert lines[3].split()[:3] == ["greedy", "3", f"{report['bots'][1]['mean']:.2f}"]
    # The same numbers as the JSON, decision times aside (a second run measures anew).
    expected = format_table(report).splitlines()[1:]
    assert [line.split()[:7] for line in lines[1:]] == [line.split()[:7] for line in expected]


def test_bad_arguments_are_refused_before_playing() -> None:
    bad = arena("--game", "qwixx", "--bots", "strong,clever", "--games", "2")
    assert bad.returncode == 2 and "no bot 'clever' for qwixx" in bad.stderr
    bad = arena("--game", "chess", "--bots", "random")
    assert bad.returncode == 2 and "no game 'chess'" in bad.stderr
    bad = arena("--game", "qwirkle", "--bots", "random", "--seats", "5")
    assert bad.returncode == 2 and "1 to 4 seats" in bad.stderr
    bad = arena("--game", "qwixx", "--bots", "random", "--preset", "house")
    assert bad.returncode == 2 and "no preset 'house'" in bad.stderr


def test_seats_rotate_and_every_rotation_replays_the_deal() -> None:
    cfg = ArenaConfig(game="qwinto", bots=("strong", "greedy"), seats=2, games=4)
    assert [lineup(cfg, k) for k in range(4)] == [
        ["strong", "greedy"],
        ["greedy", "strong"],
        ["strong", "greedy"],
        ["greedy", "strong"],
    ]
    # Solitaire, one deterministic bot listed twice: games 0 and 1 are one round, so the
    # same dice and the same game; game 2 starts the next round's deal.
    solo = ArenaConfig(game="qwixx", bots=("strong", "strong"), seats=1, games=3, seed="r")
    first, second, third = (play_game(solo, k) for k in range(3))
    assert first.lineup == ["strong"]
    assert first.scores == second.scores and first.times.keys() == second.times.keys()
    assert len(first.times["strong"]) == len(second.times["strong"])
    assert len(third.times["strong"]) != len(first.times["strong"]) or (
        third.scores != first.scores
    )


def test_wins_are_shared_on_a_tie_and_summed_per_bot() -> None:
    """Random against itself in Qwixx: every game's win shares add up to one, and one kind
    in every seat holds all the games."""
    cfg = ArenaConfig(game="qwixx", bots=("random",), seats=3, games=10, seed="ties")
    report = run_arena(cfg)
    (only,) = report["bots"]
    assert only["games"] == 30  # three seats in ten games
    assert only["win_rate"] == pytest.approx(10 / 30, abs=1e-4)
    for k in range(10):
        assert sum(play_game(cfg, k).shares) == pytest.approx(1.0)


class Cheater(Bot):
    """Answers with an action that is never legal: the arena must say so, not play on."""

    kind = "test-cheater"

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        return {"type": "pass", "please": True}


def test_an_illegal_answer_stops_the_arena() -> None:
    bots_base.register(Cheater)
    try:
        with pytest.raises(ArenaError, match="not one of its legal actions"):
            run_arena(ArenaConfig(game="qwixx", bots=("test-cheater",), seats=1, games=1))
    finally:
        del bots_base._BOTS["test-cheater"]


@pytest.mark.parametrize(
    ("game", "seats", "games", "preset"),
    [
        ("qwixx", 1, 30, "official"),
        ("qwinto", 1, 30, None),
        ("yamb", 1, 12, None),
        ("qwirkle", 3, 12, None),
    ],
)
def test_strong_beats_greedy_beats_random(
    game: str, seats: int, games: int, preset: str | None
) -> None:
    """A small fixed-seed run: on mean score, strong > greedy > random in every game (dice
    games alone on identical dice, Qwirkle with the three at one table)."""
    cfg = ArenaConfig(
        game=game,
        bots=("strong", "greedy", "random"),
        seats=seats,
        games=games,
        preset=preset,
        procs=2,
    )
    mean = {b["bot"]: b["mean"] for b in run_arena(cfg)["bots"]}
    assert mean["strong"] > mean["greedy"] > mean["random"], mean


# --- --rated: the arena's games on the server's ladder ---------------------------------------


async def test_rated_games_are_stored_and_move_the_house_bots_ratings(history_url: str) -> None:
    """`--rated` stores every game with its record (it replays, seed verified) under the
    house bots' player ids, so arena games and a server's games share one ladder."""
    args = ("arena", "--game", "qwixx", "--bots", "strong,random", "--games", "6", "--procs", "2")
    done = dicehall(*args, "--rated", "--db", history_url, "--json")
    assert done.returncode == 0, done.stderr
    ladder = json.loads(done.stdout)["ladder"]
    assert (ladder["ladder"], ladder["stored"]) == ("qwixx", 6)
    board = {s["player"]: s for s in ladder["standings"]}
    assert board["house:strong"]["games"] == board["house:random"]["games"] == 6
    again = dicehall(*args, "--rated", "--db", history_url, "--json", "--preset", "official")
    assert json.loads(again.stdout)["ladder"]["ladder"] == "qwixx:official"

    store = await HistoryStore.open(history_url)
    try:
        assert await store.counts() == (12, 2)
        (first, *_) = await store.player_games("house:strong", 20)
        stored = await store.game(first.game_id)
        assert stored is not None and stored.record["seed"]
        replayed = dicehall("replay", "-", "--json", stdin=json.dumps(stored.record))
        assert replayed.returncode == 0 and json.loads(replayed.stdout)["seed_verified"] is True
        assert (await store.ratings_of("house:strong"))["qwixx"].games == 6
    finally:
        await store.close()


def test_rated_needs_two_seats_and_a_database_it_can_use() -> None:
    solo = dicehall("arena", "--game", "yamb", "--bots", "strong", "--seats", "1", "--rated")
    assert solo.returncode == 2 and "one seat gives no rating" in solo.stderr
    bad = dicehall(
        "arena", "--game", "qwixx", "--bots", "strong,random", "--rated", "--db", "mysql://x"
    )
    assert bad.returncode == 1 and "--rated" in bad.stderr and "mysql" in bad.stderr
