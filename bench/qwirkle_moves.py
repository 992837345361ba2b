"""Speed of the Qwirkle move generator on boards of 100+ tiles, of whole games, and of the bots.

Run: `.venv/bin/python -m bench.qwirkle_moves [--positions N] [--bot-games N] [--json]`.
Target (Qwirkle issue): all legal placements of a 6-tile hand on a board of 100+ tiles in
at most 50 ms median.

Positions are reproducible: 2-seat self-play from seeds 0, 1, 2, ... (chance from the
seed, every seat plays its highest-scoring placement, or swaps/passes when it has none)
until the board first holds 100 tiles. The seat to move then gets a 6-tile hand, in
two variants: `unseen` draws it (random.Random(seed)) from the tiles not on the board, as
in a real game; `any` takes 6 arbitrary kinds, which ignores the 3-copies limit and tends
to fit more places.

The bots' decisions are timed over every position of a few seeded greedy games (2 and 3
seats, to the end: the 2-seat endgame search included): `greedy` and `strong`
(`QwirkleStrong.decide`, which runs the engine's generator and the bot's own `Replies`),
each a fresh bot seeded by the position's index, and the engine's `best_placement` there;
per position the least of a few runs (`--bot-repeat`).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from functools import partial
from random import Random

from dicehall.rules.base import JSON
from dicehall.rules.bots import get_bot
from dicehall.rules.qwirkle import GAME, QwirkleState, best_placement, place_action, placements

TARGET_TILES = 100


def build_position(seed: int) -> QwirkleState | None:
    """Greedy self-play until the board holds TARGET_TILES tiles (None if it ends first)."""
    state = GAME.new_state(2, seed=seed.to_bytes(32, "big"))
    assert isinstance(state, QwirkleState)
    while not state.is_over():
        if state.chance_pending():
            state.resolve_chance()
            continue
        seat = state.actors()[0]
        if len(state.board) >= TARGET_TILES:
            return state
        move = best_placement(state.board, state.hands[seat])
        if move is None:
            state.apply_action(seat, state.legal_actions(seat)[0])
        else:
            state.apply_action(seat, place_action(move[1]))
    return None


def with_hand(state: QwirkleState, hand: list[int]) -> QwirkleState:
    probe = state.clone()
    probe.hands[probe.actors()[0]] = sorted(hand)
    return probe


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """`repeat` wall times (seconds) of fn()."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def measure_positions(count: int, repeat: int) -> dict[str, object]:
    rows: dict[str, dict[str, list[float]]] = {
        "unseen": {"legal": [], "gen": [], "moves": []},
        "any": {"legal": [], "gen": [], "moves": []},
    }
    sizes: list[int] = []
    seed = 0
    while len(sizes) < count:
        state = build_position(seed)
        rng = Random(seed)
        seed += 1
        if state is None:
            continue
        counts = [3] * 36
        for c in state.board.cells.values():
            counts[c] -= 1
        unseen = [c for c in range(36) for _ in range(counts[c])]
        if len(unseen) < 6:
            continue
        sizes.append(len(state.board))
        hands = {"unseen": rng.sample(unseen, 6), "any": [rng.randrange(36) for _ in range(6)]}
        for kind, hand in hands.items():
            probe = with_hand(state, hand)
            seat = probe.actors()[0]
            row = rows[kind]
            row["legal"].extend(timed(partial(probe.legal_actions, seat), repeat))
            row["gen"].extend(timed(partial(placements, probe.board, probe.hands[seat]), repeat))
            row["moves"].append(len(placements(probe.board, probe.hands[seat])))
    out: dict[str, object] = {
        "positions": count,
        "board_tiles": [min(sizes), max(sizes)],
    }
    for kind, row in rows.items():
        out[kind] = {
            "legal_actions_ms_p50": round(statistics.median(row["legal"]) * 1e3, 3),
            "legal_actions_ms_p95": round(pct(row["legal"], 0.95) * 1e3, 3),
            "legal_actions_ms_max": round(max(row["legal"]) * 1e3, 3),
            "placements_ms_p50": round(statistics.median(row["gen"]) * 1e3, 3),
            "placements_ms_p95": round(pct(row["gen"], 0.95) * 1e3, 3),
            "placements_p50": statistics.median(row["moves"]),
            "placements_max": max(row["moves"]),
        }
    return out


def measure_games(count: int) -> dict[str, object]:
    """Whole games: 4-seat random legal play, and 2-seat greedy play (chance included)."""
    rng = Random(0)
    random_ms: list[float] = []
    per_action: list[float] = []
    for i in range(count):
        t0 = time.perf_counter()
        state = GAME.new_state(4, seed=(10_000 + i).to_bytes(32, "big"))
        while not state.is_over():
            if state.chance_pending():
                state.resolve_chance()
                continue
            seat = state.actors()[0]
            a0 = time.perf_counter()
            legal = state.legal_actions(seat)
            state.apply_action(seat, legal[rng.randrange(len(legal))])
            per_action.append(time.perf_counter() - a0)
        random_ms.append((time.perf_counter() - t0) * 1e3)
    greedy_ms: list[float] = []
    for i in range(count):
        t0 = time.perf_counter()
        build_position(20_000 + i)
        greedy_ms.append((time.perf_counter() - t0) * 1e3)
    return {
        "games": count,
        "random_4_seats_game_ms_p50": round(statistics.median(random_ms), 2),
        "random_action_us_p50": round(statistics.median(per_action) * 1e6, 1),
        "random_action_us_p95": round(pct(per_action, 0.95) * 1e6, 1),
        "greedy_2_seats_to_100_tiles_ms_p50": round(statistics.median(greedy_ms), 2),
    }


def bot_positions(count: int) -> list[tuple[QwirkleState, int, JSON, list[JSON]]]:
    """Every decision of `count` seeded greedy games (2 and 3 seats in turn, chance from the
    seed, to the end): (state, seat, its view, its legal actions)."""
    out: list[tuple[QwirkleState, int, JSON, list[JSON]]] = []
    for i in range(count):
        seats = 2 + i % 2
        state = GAME.new_state(seats, seed=(30_000 + i).to_bytes(32, "big"))
        assert isinstance(state, QwirkleState)
        bots = [get_bot("greedy", "qwirkle", seed=s) for s in range(seats)]
        while not state.is_over():
            if state.chance_pending():
                state.resolve_chance()
                continue
            seat = state.actors()[0]
            view = state.view(seat)
            legal = state.legal_actions(seat)
            out.append((state.clone(), seat, view, legal))
            state.apply_action(seat, bots[seat].decide(view, legal))
    return out


def measure_bots(count: int, repeat: int) -> dict[str, object]:
    """Wall time of one decision of each Qwirkle bot, and of `best_placement`, per position:
    the least of `repeat` runs (a fresh bot each, so each run does the same work), which
    leaves out the time the process waited for the CPU on a busy machine."""
    positions = bot_positions(count)
    times: dict[str, list[float]] = {"greedy": [], "strong": [], "best_placement": []}
    clock = time.perf_counter
    for i, (state, seat, view, legal) in enumerate(positions):
        for kind in ("greedy", "strong"):
            runs = []
            for _ in range(repeat):
                bot = get_bot(kind, "qwirkle", seed=i)
                t0 = clock()
                bot.decide(view, legal)
                runs.append(clock() - t0)
            times[kind].append(min(runs))
        hand = state.hands[seat]
        times["best_placement"].append(
            min(timed(partial(best_placement, state.board, hand), repeat))
        )
    out: dict[str, object] = {"games": count, "decisions": len(positions), "repeat": repeat}
    for kind, row in times.items():
        out[kind] = {
            "ms_p50": round(statistics.median(row) * 1e3, 3),
            "ms_p95": round(pct(row, 0.95) * 1e3, 3),
            "ms_mean": round(statistics.fmean(row) * 1e3, 3),
            "s_total": round(sum(row), 3),
        }
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--positions", type=int, default=50, help="boards of 100+ tiles")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per position")
    p.add_argument("--games", type=int, default=20, help="whole games per measurement")
    p.add_argument("--bot-games", type=int, default=4, help="games whose decisions time the bots")
    p.add_argument("--bot-repeat", type=int, default=3, help="timed runs per decision (least)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    result = {
        "python": platform.python_version(),
        "moves": measure_positions(args.positions, args.repeat),
        "games": measure_games(args.games),
        "bots": measure_bots(args.bot_games, args.bot_repeat),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    moves = result["moves"]
    assert isinstance(moves, dict)
    print(f"Python {result['python']} on {platform.machine()}")
    print(f"{moves['positions']} positions, boards of {moves['board_tiles']} tiles, 6-tile hands")
    print(
        "| hand | placements p50/max | legal_actions p50 / p95 / max (ms) "
        "| placements() p50 / p95 (ms) |"
    )
    print("|---|---|---|---|")
    for kind in ("unseen", "any"):
        r = moves[kind]
        print(
            f"| {kind} | {r['placements_p50']}/{r['placements_max']} | "
            f"{r['legal_actions_ms_p50']} / {r['legal_actions_ms_p95']} / "
            f"{r['legal_actions_ms_max']} | {r['placements_ms_p50']} / {r['placements_ms_p95']} |"
        )
    print(json.dumps(result["games"]))
    bots = result["bots"]
    assert isinstance(bots, dict)
    print(
        f"{bots['decisions']} decisions of {bots['games']} greedy games (2 and 3 seats), "
        f"least of {bots['repeat']} runs each"
    )
    print("| decision | p50 / p95 / mean (ms) | total (s) |")
    print("|---|---|---|")
    for kind in ("greedy", "strong", "best_placement"):
        r = bots[kind]
        print(f"| {kind} | {r['ms_p50']} / {r['ms_p95']} / {r['ms_mean']} | {r['s_total']} |")


if __name__ == "__main__":
    main()
