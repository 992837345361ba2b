"""`dicehall arena`: bots play many games offline through the rules engine, and are measured.

No server and no network: each seat's bot gets exactly what a connected seat would get,
`state.view(seat)` and `state.legal_actions(seat)`, and chance comes from the state's own
seed (`resolve_chance`), as in a room. Games run in several processes; results are
gathered in game order, so the numbers depend on the seed only, never on the process count.

Lineups and seeds. With B bot names and N seats, game k seats bot `names[(k + i) % B]` in
seat i, so seats rotate and no bot always starts; games k and k+1 ... k+B-1 of one round
(k a multiple of B) replay the same deal (the same seed) with every rotation. In solitaire
(N = 1) that compares the bots on identical dice; in a duel it plays each deal from both
chairs. The seed of round r is sha256("dicehall-arena/{seed}/{r}").
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from dicehall.rules import JSON, EndlessGame, State, get_game
from dicehall.rules.bots import get_bot
from dicehall.rules.play import play_out
from dicehall.rules.records import new_record

MAX_STEPS = 200_000
"""A game that has not ended after this many steps is a bug (in a bot or an engine)."""


class ArenaError(Exception):
    """A bot broke the rules (an illegal action) or a game did not end."""


@dataclass(frozen=True)
class ArenaConfig:
    game: str
    bots: tuple[str, ...]
    seats: int
    games: int
    seed: str = "0"
    preset: str | None = None
    procs: int = 1
    records: bool = False
    """Keep each game's record (docs/records.md, seed revealed): `--rated` stores them."""


@dataclass
class GameResult:
    """One game: who sat where, the final scores, each seat's share of the win."""

    index: int
    lineup: list[str]
    scores: list[int]
    shares: list[float]
    times: dict[str, list[float]]
    """Seconds per decision, by bot name."""
    record: JSON | None = None
    """The game's record, when the run keeps them (`ArenaConfig.records`)."""


def lineup(cfg: ArenaConfig, k: int) -> list[str]:
    b = len(cfg.bots)
    return [cfg.bots[(k + i) % b] for i in range(cfg.seats)]


def game_seed(seed: str, k: int, bots: int) -> bytes:
    return hashlib.sha256(f"dicehall-arena/{seed}/{k // bots}".encode()).digest()


def play_game(cfg: ArenaConfig, k: int) -> GameResult:
    """Game k of the run, start to end."""
    game = get_game(cfg.game)
    seed = game_seed(cfg.seed, k, len(cfg.bots))
    state: State = game.new_state(cfg.seats, seed=seed, preset=cfg.preset)
    names = lineup(cfg, k)
    record = None
    if cfg.records:
        record = new_record(cfg.game, game.resolve_options(None, cfg.preset), seat_names(names))
        record["commitment"] = state.commitment()
    bots = [
        get_bot(name, cfg.game, seed=f"arena/{cfg.seed}/{k}/{i}") for i, name in enumerate(names)
    ]
    times: dict[str, list[float]] = {name: [] for name in names}
    clock = time.perf_counter

    def decide(state: State, seat: int) -> JSON:
        view = state.view(seat)
        legal = state.legal_actions(seat)
        began = clock()
        action = bots[seat].decide(view, legal)
        times[names[seat]].append(clock() - began)
        if not any(a is action for a in legal) and action not in legal:
            raise ArenaError(
                f"game {k}: bot {names[seat]!r} in seat {seat} chose {action!r}, "
                "which is not one of its legal actions"
            )
        return action

    try:
        play_out(state, decide, None if record is None else record["log"], max_steps=MAX_STEPS)
    except EndlessGame as exc:
        raise ArenaError(f"game {k} of {cfg.game}: {exc}") from None
    winners = state.winners()
    shares = [1 / len(winners) if s in winners else 0.0 for s in range(cfg.seats)]
    if record is not None:
        record["seed"] = seed.hex()
        record["result"] = {"scores": dict(zip(record["seats"], state.scores(), strict=True))}
    return GameResult(k, names, state.scores(), shares, times, record)


def seat_names(lineup: list[str]) -> list[str]:
    """A record's seat names (distinct, as records need): the bot's, numbered when a bot
    holds several seats (`strong`, `strong 2`)."""
    out: list[str] = []
    for name in lineup:
        n = sum(1 for other in out if other == name or other.startswith(name + " "))
        out.append(name if n == 0 else f"{name} {n + 1}")
    return out


_CONFIG: ArenaConfig | None = None


def _init_worker(cfg: ArenaConfig) -> None:
    global _CONFIG
    _CONFIG = cfg


def _play_in_worker(k: int) -> GameResult:
    assert _CONFIG is not None
    return play_game(_CONFIG, k)


def results(cfg: ArenaConfig) -> Iterator[GameResult]:
    """Every game's result, in game order, from `cfg.procs` processes."""
    procs = max(1, min(cfg.procs, cfg.games))
    if procs == 1:
        for k in range(cfg.games):
            yield play_game(cfg, k)
        return
    # fork: workers inherit the imported engines and bot tables instead of re-importing.
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    chunk = max(1, min(16, cfg.games // (procs * 8)))
    pool = ctx.Pool(procs, initializer=_init_worker, initargs=(cfg,))
    try:
        yield from pool.imap(_play_in_worker, range(cfg.games), chunksize=chunk)
        pool.close()  # the workers finish and exit as processes do (atexit handlers run)
    except BaseException:
        pool.terminate()  # (an error, or the caller stopped early: SIGTERM them)
        raise
    finally:
        pool.join()


@dataclass
class BotTally:
    """Running totals of one bot over the games it sat in (once per seat it held)."""

    name: str
    scores: list[int] = field(default_factory=list)
    wins: float = 0.0
    times: list[float] = field(default_factory=list)

    def summary(self, solitaire: bool) -> dict[str, Any]:
        n = len(self.scores)
        mean = sum(self.scores) / n if n else 0.0
        if n > 1:
            var = sum((s - mean) ** 2 for s in self.scores) / (n - 1)
            se = math.sqrt(var / n)
        else:
            se = 0.0
        times = sorted(self.times)
        return {
            "bot": self.name,
            "games": n,
            "mean": round(mean, 3),
            "se": round(se, 3),
            "win_rate": None if solitaire or not n else round(self.wins / n, 4),
            "decisions": len(times),
            "p50_ms": round(_quantile(times, 0.50) * 1000, 3),
            "p99_ms": round(_quantile(times, 0.99) * 1000, 3),
        }


def _quantile(ordered: list[float], q: float) -> float:
    """The nearest-rank quantile of sorted values (0 for none)."""
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def run_arena(
    cfg: ArenaConfig,
    progress: Callable[[int], None] | None = None,
    keep: Callable[[GameResult], None] | None = None,
) -> dict[str, Any]:
    """Play the games and summarise them per bot (the `--json` output); `keep` sees every
    game's result as it comes."""
    game = get_game(cfg.game)
    game.check_seats(cfg.seats)
    options = game.resolve_options(None, cfg.preset)
    for name in cfg.bots:
        get_bot(name, cfg.game)  # unknown kinds fail before any process starts
    tallies = {name: BotTally(name) for name in dict.fromkeys(cfg.bots)}
    began = time.monotonic()
    for result in results(cfg):
        for seat, name in enumerate(result.lineup):
            tally = tallies[name]
            tally.scores.append(result.scores[seat])
            tally.wins += result.shares[seat]
        for name, spent in result.times.items():
            tallies[name].times.extend(spent)
        if keep is not None:
            keep(result)
        if progress is not None:
            progress(result.index + 1)
    solitaire = cfg.seats == 1
    return {
        "game": cfg.game,
        "seats": cfg.seats,
        "games": cfg.games,
        "seed": cfg.seed,
        "preset": cfg.preset,
        "options": options,
        "bots": [t.summary(solitaire) for t in tallies.values()],
        "procs": max(1, min(cfg.procs, cfg.games)),
        "seconds": round(time.monotonic() - began, 3),
    }


def format_table(report: dict[str, Any]) -> str:
    """The human table: one line per bot."""
    preset = f", preset {report['preset']}" if report["preset"] else ""
    head = (
        f"arena: {report['game']}, {report['seats']} seat(s), {report['games']} games, "
        f"seed {report['seed']}{preset}; {report['procs']} processes, {report['seconds']} s"
    )
    lines = [
        head,
        f"{'bot':<10} {'games':>7} {'mean':>9}   {'se':>6} {'win rate':>9} "
        f"{'decisions':>10} {'p50 ms':>8} {'p99 ms':>8}",
    ]
    for b in report["bots"]:
        win = "-" if b["win_rate"] is None else f"{100 * b['win_rate']:.1f}%"
        lines.append(
            f"{b['bot']:<10} {b['games']:>7} {b['mean']:>9.2f} ± {b['se']:>6.2f} {win:>9} "
            f"{b['decisions']:>10} {b['p50_ms']:>8.3f} {b['p99_ms']:>8.3f}"
        )
    ladder = report.get("ladder")
    if ladder is not None:  # (--rated)
        lines.append(
            f"rated on ladder {ladder['ladder']} ({ladder['stored']} games stored, run "
            f"{ladder['run']}): rank, rating (mu - 3 sigma), games rated there"
        )
        for s in ladder["standings"]:
            lines.append(f"{s['player']:<20} #{s['rank']:<5} {s['rating']:>8.2f} {s['games']:>7}")
    return "\n".join(lines)


def default_procs() -> int:
    return os.cpu_count() or 1
