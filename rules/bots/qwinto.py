"""The strong Qwinto bot: a value of the sheet and one look ahead over the dice.

The value of a sheet (`sheet_value`) is its score plus what its empty boxes can still
bring. A row is cut by its filled boxes into gaps; a gap of k open boxes between the
numbers a and b can take the numbers a+1 .. b-1, each counted by how easily some choice of
dice rolls it (a 7 counts 1, an 18 much less). With m that count, the gap is expected to
fill k(1 - exp(-rate x m / k)) more boxes: a number placed where its rank among 1..18 says
it belongs costs little, one that squeezes a long gap costs a lot. A row that may still
be completed is worth part of the extra points of its last box; a bonus column part of its
bonus box, by how full it is. The potential shrinks as failed throws pile up, because the
game gets shorter (`Params`, tuned with the arena).

Deciding: an entry is the one that leaves the best value (a pass costs the active seat
a failed throw). Choosing dice is one step of expectimax: for each of the 7 subsets, the
exact chance of each sum times the value of the best answer to it. With the `reroll`
option, the roll is kept when its best answer beats the expected value of a reroll.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import product

from ..base import JSON
from ..qwinto.sheet import (
    BLOCKED,
    BONUS_COLUMNS,
    BOXES,
    COLOUR_INDEX,
    COLOURS,
    HIGHEST,
    MAX_FAILED,
    Sheet,
    full_rows,
    open_boxes,
    score,
)
from .base import Bot, register
from .views import qwinto_sheet

SUBSETS: tuple[tuple[int, ...], ...] = ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2))


def _sum_chances(dice: int) -> list[float]:
    """chances[n]: the chance that `dice` dice sum to n (n = 0..18)."""
    out = [0.0] * (HIGHEST + 1)
    for faces in product(range(1, 7), repeat=dice):
        out[sum(faces)] += 1 / 6**dice
    return out


SUMS: tuple[list[float], ...] = tuple(_sum_chances(k) for k in range(4))


class Params:
    """The knobs of the sheet value (tuned with the arena, see docs/bots.md)."""

    def __init__(
        self,
        potential: float = 1.5,
        rate: float = 1.5,
        reach_power: float = 0.5,
        complete: float = 0.5,
        bonus: float = 0.6,
        decay: float = 1.0,
    ) -> None:
        self.potential = potential
        self.decay = decay
        """The potential shrinks as ((4 - failed) / 4) ** decay: fewer lives, fewer turns."""
        """Weight of the boxes a sheet can still fill, with no failed throw yet."""
        self.rate = rate
        """How fast a gap fills as it gets more numbers per box."""
        self.complete = complete
        """Weight of the extra points of a row that may still be completed."""
        self.bonus = bonus
        """Weight of an incomplete bonus column (times its fill ratio squared)."""
        reach = [
            min(1.0, 6 * max(SUMS[k][n] for k in (1, 2, 3))) ** reach_power
            for n in range(HIGHEST + 1)
        ]
        reach[0] = 0.0
        self.cumulative = [sum(reach[: n + 1]) for n in range(HIGHEST + 2)]
        """cumulative[n]: how many of the numbers 1..n are easily rolled (1 each at best)."""
        self.fill = [
            [
                [self._fill(k, low, high) for high in range(HIGHEST + 2)]
                for low in range(HIGHEST + 1)
            ]
            for k in range(BOXES)
        ]
        """fill[k][low][high]: expected boxes filled in a gap of k open boxes between the
        numbers low and high (0 and 19 at the ends of a row)."""

    def weight(self, failed: int) -> float:
        share: float = ((MAX_FAILED - failed) / MAX_FAILED) ** self.decay
        return self.potential * share

    def _fill(self, k: int, low: int, high: int) -> float:
        if k <= 0 or high - low <= 1:
            return 0.0
        m = self.cumulative[high - 1] - self.cumulative[low]
        return k * (1 - math.exp(-self.rate * m / k))


EXPECTED_LAST = 15.0
"""A row filled to the end typically ends on about this number."""


def row_value(row: Sequence[int], r: int, weight: float, p: Params) -> float:
    """A row's points now plus its weighted potential (a full row: its last box)."""
    fill = p.fill
    total = 0.0
    low = 0
    k = 0
    filled = 0
    blocked = BLOCKED[r]
    for b in range(BOXES):
        if b == blocked:
            continue
        v = row[b]
        if v:
            total += fill[k][low][v]
            low = v
            k = 0
            filled += 1
        else:
            k += 1
    if filled == BOXES - 1:
        return float(row[BOXES - 1])
    gain = total + fill[k][low][HIGHEST + 1]
    value = filled + weight * gain
    missing = BOXES - 1 - filled
    last = row[BOXES - 1] or EXPECTED_LAST
    # The extra points of a full row, as likely as every open box is to be filled.
    return value + weight * p.complete * max(0.0, last - 9) * (gain / missing) ** 3


def bonus_value(sheet: Sheet, weight: float, p: Params) -> float:
    total = 0.0
    for (r, b), column in BONUS_COLUMNS:
        filled = sum(1 for r2, b2 in column if sheet[r2][b2])
        bonus = sheet[r][b]
        if filled == 3:
            total += bonus
        elif filled:
            total += weight * p.bonus * (bonus or ideal(r, b)) * (filled / 3) ** 2
    return total


DEFAULT = Params()


def sheet_value(sheet: Sheet, failed: int, p: Params = DEFAULT) -> float:
    """Score now plus discounted potential; the exact score once the game is over."""
    if failed >= MAX_FAILED or full_rows(sheet) >= 2:
        return float(score(sheet, failed))
    weight = p.weight(failed)
    total = -5.0 * failed + bonus_value(sheet, weight, p)
    for r in range(3):
        total += row_value(sheet[r], r, weight, p)
    return total


def ideal(r: int, b: int) -> float:
    """The number that box b of row r holds in a sheet filled evenly from 1 to 18."""
    rank = b - (1 if b > BLOCKED[r] else 0)
    return 1 + rank * (HIGHEST - 1) / (BOXES - 2)


Answer = tuple[int, int]
"""(row, box), or (-1, -1) for a pass."""


def best_answer(
    sheet: Sheet,
    failed: int,
    total: int,
    rows: Sequence[int],
    pass_cost: int,
    p: Params = DEFAULT,
) -> tuple[float, Answer]:
    """The entry of `total` into one of `rows` (or the pass) that leaves the best value."""
    best = sheet_value(sheet, failed + pass_cost, p)
    choice: Answer = (-1, -1)
    if failed >= MAX_FAILED:
        return best, choice
    weight = p.weight(failed)
    full = full_rows(sheet)
    base_rows = [row_value(sheet[r], r, weight, p) for r in range(3)]
    base = -5.0 * failed + sum(base_rows)
    for r in rows:
        row = sheet[r]
        for b in open_boxes(sheet, r, total):
            row[b] = total
            if full + (sum(1 for v in row if v) == BOXES - 1) >= 2:
                v = float(score(sheet, failed))
            else:
                v = (
                    base
                    - base_rows[r]
                    + row_value(row, r, weight, p)
                    + bonus_value(sheet, weight, p)
                )
            row[b] = 0
            if v > best:
                best, choice = v, (r, b)
    return best, choice


def roll_worth(
    sheet: Sheet, failed: int, dice: Sequence[int], pass_cost: int, p: Params = DEFAULT
) -> float:
    """Expected value after rolling `dice` and answering as well as possible."""
    chances = SUMS[len(dice)]
    worth = 0.0
    for n in range(len(dice), 6 * len(dice) + 1):
        worth += chances[n] * best_answer(sheet, failed, n, dice, pass_cost, p)[0]
    return worth


@register
class QwintoStrong(Bot):
    """Sheet value with gap potentials; expectimax over the dice subsets."""

    kind = "strong"
    games = frozenset({"qwinto"})
    params = DEFAULT

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        me = view["you"]
        sheet = qwinto_sheet(view, me)
        failed: int = view["sheets"][me]["failed"]
        active = view["active"] == me
        pass_cost = 1 if active else 0
        phase = view["phase"]
        if phase == "choose":
            best = max(SUBSETS, key=lambda dice: roll_worth(sheet, failed, dice, 1, self.params))
            return _pick(legal, {"type": "roll", "dice": [COLOURS[i] for i in best]})
        rows = [COLOUR_INDEX[c] for c in view["dice"]]
        value, (r, b) = best_answer(sheet, failed, view["sum"], rows, pass_cost, self.params)
        if (
            phase == "confirm"
            and any(a["type"] == "reroll" for a in legal)
            and roll_worth(sheet, failed, rows, 1, self.params) > value
        ):
            return _pick(legal, {"type": "reroll"})
        if r < 0:
            return _pick(legal, {"type": "pass"})
        return _pick(legal, {"type": "enter", "row": COLOURS[r], "box": b})


def _pick(legal: list[JSON], wanted: JSON) -> JSON:
    for action in legal:
        if action == wanted:
            return action
    return next((a for a in legal if a["type"] == "pass"), legal[0])
