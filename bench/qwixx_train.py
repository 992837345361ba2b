"""Learn the strong Qwixx bot's row values by solitaire self-play (afterstate TD(0)).

Run: `nice -n 10 .venv/bin/python -m bench.qwixx_train --lock-after 5 --games 200000`.
It starts from the table in rules/bots/qwixx_values.py (or from a plain guess with
`--fresh`), plays solitaire games with the bot's own decision rule (`best_turn`, plus a
little exploration), moves the value of each sheet after a turn towards the value of the
sheet after the next turn (the final score at the end), and writes the table back for that
`lock_after`. The arena (`dicehall arena --game qwixx --bots strong --seats 1 --preset
official`) then measures the result; see docs/bots.md.

The simulator below is solitaire Qwixx exactly as rules/qwixx plays it (white window,
then colour window with the dice still in play; a turn without a mark is a failed throw;
the game ends at 4 failed throws or 2 locked rows), written on the bot's row summaries so
that it runs fast; the arena replays the learned policy through the real engine.
"""

from __future__ import annotations

import argparse
import importlib
import time
from pathlib import Path
from random import Random

from dicehall.rules.bots import qwixx as bot
from dicehall.rules.qwixx.sheet import TRIANGLE

OUT = Path(__file__).resolve().parent.parent / "rules" / "bots" / "qwixx_values.py"


def guess() -> list[float]:
    """A plain starting table: current points plus a share of the boxes still ahead."""
    table = [0.0] * bot.TABLE_SIZE
    for locked in range(2):
        for f in range(4):
            for p in range(-1, 10):
                for c in range(12):
                    ahead = (9 - p) * (0.45 - 0.05 * f)
                    i = locked * bot.STRIDE_L + f * bot.STRIDE_F + (p + 1) * bot.STRIDE_P + c
                    table[i] = TRIANGLE[min(12, c + round(ahead))]
    return table


def play(table: list[float], lock_after: int, rng: Random, alpha: float, epsilon: float) -> int:
    """One solitaire game; updates `table` when alpha > 0. Returns the final score."""
    rows: list[bot.Row] = [(-1, 0)] * 4
    closed = 0
    failed = 0
    rand = rng.random
    while True:
        dice = [int(rand() * 6) + 1 for _ in range(6)]
        for r in range(4):
            if closed >> r & 1:
                dice[2 + r] = 0
        if epsilon and rand() < epsilon:
            choice = random_choice(rows, closed, dice, lock_after, rng)
        else:
            _, choice = bot.best_turn(rows, closed, failed, dice, lock_after, table, True)
        before_rows, before_closed, before_failed = rows, closed, failed
        rows = list(rows)
        wr, wb, cr, cb = choice
        if wr >= 0:
            closed = bot.mark(rows, closed, wr, wb, lock_after)
        if cr >= 0:
            closed = bot.mark(rows, closed, cr, cb, lock_after)
        if wr < 0 and cr < 0:
            failed += 1
        target = bot.value(rows, closed, failed, table)
        if alpha:
            update(table, before_rows, before_closed, before_failed, target, alpha)
        if failed >= 4 or closed.bit_count() >= 2:
            return round(target)


def update(
    table: list[float], rows: list[bot.Row], closed: int, failed: int, target: float, alpha: float
) -> None:
    """Move the value of the sheet (rows, closed, failed) towards `target`."""
    delta = alpha * (target - bot.value(rows, closed, failed, table))
    base = closed.bit_count() * bot.STRIDE_L + failed * bot.STRIDE_F
    for r in range(4):
        if not closed >> r & 1:
            p, c = rows[r]
            table[base + (p + 1) * bot.STRIDE_P + c] += delta


def random_choice(
    rows: list[bot.Row], closed: int, dice: list[int], lock_after: int, rng: Random
) -> bot.Choice:
    """A uniformly random legal (white, colour) pair: exploration."""
    out: list[bot.Choice] = [(-1, -1, -1, -1)]
    s = dice[0] + dice[1]
    whites = [(-1, -1)]
    for r in range(4):
        b = bot.box_of(r, s)
        if bot.mark(list(rows), closed, r, b, lock_after) >= 0:
            whites.append((r, b))
    for wr, wb in whites:
        after = list(rows)
        now = closed if wr < 0 else bot.mark(after, closed, wr, wb, lock_after)
        out.append((wr, wb, -1, -1))
        if now.bit_count() >= 2:
            continue
        for r in range(4):
            if not dice[2 + r] or now >> r & 1:
                continue
            for w in (dice[0], dice[1]):
                b = bot.box_of(r, w + dice[2 + r])
                if bot.mark(list(after), now, r, b, lock_after) >= 0:
                    out.append((wr, wb, r, b))
    return out[rng.randrange(len(out))]


def write(tables: dict[int, list[float]]) -> None:
    """rules/bots/qwixx_values.py: one text block per table, a line per (closed, failed,
    last box) with the 12 values by marks, parsed at import (compact and diff-friendly)."""
    blocks = []
    for key, table in sorted(tables.items()):
        lines = [
            " ".join(f"{v:.2f}" for v in table[i : i + bot.STRIDE_P])
            for i in range(0, len(table), bot.STRIDE_P)
        ]
        body = "\n".join(lines)
        blocks.append(f'    {key}: _parse(\n        """\n{body}\n"""\n    ),')
    text = (
        '"""Learned row values of the strong Qwixx bot, by lock_after (bench/qwixx_train.py).\n'
        "\n"
        "Generated: do not edit by hand. One line per (closed rows, failed throws, last box\n"
        "+ 1), in that order; on it the value for 0..11 marks. See rules/bots/qwixx.py.\n"
        '"""\n\n\n'
        "def _parse(text: str) -> tuple[float, ...]:\n"
        "    return tuple(float(v) for v in text.split())\n\n\n"
        "TABLES: dict[int, tuple[float, ...]] = {\n" + "\n".join(blocks) + "\n}\n"
    )
    OUT.write_text(text, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lock-after", type=int, default=5)
    ap.add_argument("--games", type=int, default=100_000)
    ap.add_argument("--alpha", type=float, default=0.02)
    ap.add_argument("--epsilon", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fresh", action="store_true", help="start from a plain guess")
    ap.add_argument("--report", type=int, default=10_000, help="games between progress lines")
    args = ap.parse_args()
    values = importlib.import_module("dicehall.rules.bots.qwixx_values")
    tables = {k: list(v) for k, v in values.TABLES.items()}
    table = guess() if args.fresh or args.lock_after not in tables else tables[args.lock_after]
    rng = Random(args.seed)
    began = time.monotonic()
    total = 0
    for g in range(1, args.games + 1):
        # The step size decays to a quarter over the run.
        alpha = args.alpha * (1 - 0.75 * g / args.games)
        total += play(table, args.lock_after, rng, alpha, args.epsilon)
        if g % args.report == 0:
            print(
                f"{g} games: mean {total / args.report:.2f} (exploring), "
                f"{time.monotonic() - began:.0f} s",
                flush=True,
            )
            total = 0
            tables[args.lock_after] = table
            write(tables)
    tables[args.lock_after] = table
    write(tables)
    evaluation = Random(12345)
    scores = [play(table, args.lock_after, evaluation, 0.0, 0.0) for _ in range(2000)]
    print(f"greedy policy, 2000 games: mean {sum(scores) / len(scores):.2f}")


if __name__ == "__main__":
    main()
