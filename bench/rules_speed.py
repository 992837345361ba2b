"""Speed of the rules engines: legal actions + apply per action, and whole random games.

Run: `make bench` or `.venv/bin/python -m bench.rules_speed [--games N] [--json]`.
Targets (issue 2): legal-action generation plus apply at most 20 us median per action; a
full 4-seat random Qwinto or Qwixx game at most 5 ms median.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from random import Random

from dicehall.rules import all_games, get_game
from dicehall.rules.base import State
from dicehall.rules.play import play_out, random_chooser


def one_game(state: State, rng: Random, per_action: list[float]) -> None:
    """A random game; times every legal_actions + apply_action pair (chance excluded).
    Its own loop, not `rules.play.play_out`: the clock must stop after the apply."""
    clock = time.perf_counter
    while not state.is_over():
        if state.chance_pending():
            state.resolve_chance()
            continue
        seat = state.actors()[0]
        t0 = clock()
        legal = state.legal_actions(seat)
        action = legal[rng.randrange(len(legal))]
        state.apply_action(seat, action)
        per_action.append(clock() - t0)


def whole_game(name: str, seats: int, seed: int, rng: Random) -> float:
    """Wall time of a complete random game, chance included."""
    game = get_game(name)
    clock = time.perf_counter
    t0 = clock()
    state = game.new_state(seats, seed=seed.to_bytes(32, "big"))
    play_out(state, random_chooser(rng))
    return clock() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=300, help="games per measurement")
    p.add_argument("--only", help="one game")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    rows = []
    for game in all_games():
        if args.only and game.name != args.only:
            continue
        seats = min(4, game.max_seats)
        n = args.games if game.name in ("qwinto", "qwixx") else max(10, args.games // 20)
        rng = Random(0)
        per_action: list[float] = []
        for i in range(n):
            one_game(game.new_state(seats, seed=i.to_bytes(32, "big")), rng, per_action)
        games = [whole_game(game.name, seats, 10_000 + i, rng) for i in range(n)]
        per_action.sort()
        rows.append(
            {
                "game": game.name,
                "seats": seats,
                "games": n,
                "actions": len(per_action),
                "action_p50_us": round(statistics.median(per_action) * 1e6, 2),
                "action_p99_us": round(per_action[int(len(per_action) * 0.99)] * 1e6, 2),
                "game_p50_ms": round(statistics.median(games) * 1e3, 3),
                "actions_per_game": round(len(per_action) / n, 1),
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"Python {platform.python_version()} on {platform.machine()}")
    print(
        "| game | seats | games | actions/game | action p50 (us) | action p99 (us) "
        "| game p50 (ms) |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['game']} | {r['seats']} | {r['games']} | {r['actions_per_game']} | "
            f"{r['action_p50_us']} | {r['action_p99_us']} | {r['game_p50_ms']} |"
        )


if __name__ == "__main__":
    main()
