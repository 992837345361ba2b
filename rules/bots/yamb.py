"""The strong Yamb bot: exact expectations over the rolls of one turn, a heuristic table.

Two parts:

- A value of the table, `column_value`: the written cells, and for each empty cell its
  "par" (what such a cell is expected to bring when it is filled later), with the S1 bonus
  as a probability and S2 as (max - min) x ones of those expectations. Writing value v in a
  cell is worth the change it makes: v against the par, plus its effect on the bonus and
  on S2 (four 1s in row 1 multiply max - min by four).
- The turn: with up to two rolls left, the bot computes the exact expected worth of every
  hold (the 462 multisets of six dice, the 462 holds of up to five, every outcome of the
  rerolled dice with its probability) and plays the hold, the write or the call with the
  best expectation. A call is weighed with the expected value of that row when the rest of
  the turn targets it (a second small exact computation per row, cached for the process).

The numbers are computed once per turn (a few milliseconds) and reused by the later
decisions of the same turn.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from itertools import combinations_with_replacement, product
from operator import mul
from typing import Any

from ..base import JSON
from ..yamb.table import (
    CALL,
    COLUMNS,
    DOWN,
    EMPTY,
    FREE1,
    FREE2,
    HAND,
    KENTA,
    MAX,
    MIN,
    NCOLS,
    NROWS,
    ROW_INDEX,
    ROWS,
    UP,
    cell_value,
)
from .base import Bot, register
from .views import yamb_cells

# --- the dice: multisets, holds and the chances of every reroll -----------------------------

Dice = tuple[int, ...]


class _Dice:
    """Every multiset of six dice, every hold, and the transition of each hold."""

    def __init__(self) -> None:
        self.sets: list[Dice] = list(combinations_with_replacement(range(1, 7), 6))
        self.index: dict[Dice, int] = {d: i for i, d in enumerate(self.sets)}
        self.holds: list[Dice] = [
            h for k in range(6) for h in combinations_with_replacement(range(1, 7), k)
        ]
        hold_index = {h: i for i, h in enumerate(self.holds)}
        outcomes = {m: _outcomes(m) for m in range(7)}
        self.first: list[float] = [p for _, p in outcomes[6]]
        """Chance of each multiset on a roll of all six dice (same order as `sets`)."""
        self.trans: list[tuple[list[int], list[float]]] = []
        """Per hold: the multisets it can become and their chances."""
        for h in self.holds:
            pairs = outcomes[6 - len(h)]
            self.trans.append(
                ([self.index[tuple(sorted(h + o))] for o, _ in pairs], [p for _, p in pairs])
            )
        self.subs: list[list[int]] = []
        """Per multiset: its distinct holds (sub-multisets of at most five dice)."""
        for d in self.sets:
            counts = Counter(d)
            faces = sorted(counts)
            subs: set[int] = set()
            for pick in product(*(range(counts[f] + 1) for f in faces)):
                h = tuple(f for f, n in zip(faces, pick, strict=True) for _ in range(n))
                if len(h) < 6:
                    subs.add(hold_index[h])
            self.subs.append(sorted(subs))
        self.values: list[list[int]] = [[cell_value(d, r) for d in self.sets] for r in range(NROWS)]

    def expect(self, values: Sequence[float]) -> list[float]:
        """The expected `values` after rerolling, for every hold."""
        get = values.__getitem__
        return [sum(map(mul, probs, map(get, idx))) for idx, probs in self.trans]

    def best_of(self, now: Sequence[float], held: Sequence[float]) -> list[float]:
        """Per multiset: the better of stopping (`now`) and its best hold (`held`)."""
        get = held.__getitem__
        subs = self.subs
        return [max(now[i], max(map(get, subs[i]))) for i in range(len(now))]


def _outcomes(m: int) -> list[tuple[Dice, float]]:
    out = []
    for o in combinations_with_replacement(range(1, 7), m):
        ways = math.factorial(m)
        for n in Counter(o).values():
            ways //= math.factorial(n)
        out.append((o, ways / 6**m))
    return out


_DICE: _Dice | None = None


def dice_tables() -> _Dice:
    global _DICE
    if _DICE is None:
        _DICE = _Dice()
    return _DICE


_TARGETS: dict[int, tuple[list[float], list[float]]] = {}


def target(row: int) -> tuple[list[float], list[float]]:
    """(with one roll left, with two rolls left): per multiset, the expected value of `row`
    when every remaining roll aims at it (min aims low). Cached for the process."""
    cached = _TARGETS.get(row)
    if cached is not None:
        return cached
    t = dice_tables()
    aim = [-v for v in t.values[row]] if row == MIN else [float(v) for v in t.values[row]]
    one = t.best_of(aim, t.expect(aim))
    two = t.best_of(aim, t.expect(one))
    sign = -1.0 if row == MIN else 1.0
    result = ([sign * v for v in one], [sign * v for v in two])
    _TARGETS[row] = result
    return result


# --- the value of a table ------------------------------------------------------------------

AIMED: tuple[float, ...] = (
    2.53,
    5.06,
    7.58,
    10.11,
    12.64,
    15.17,
    14.0,
    28.0,
    12.01,
    37.32,
    27.85,
    10.85,
    1.68,
)
"""Expected value of each row over a whole turn that aims at it (three rolls)."""

SHARE: dict[int, float] = {DOWN: 0.9, UP: 0.9, FREE1: 1.0, FREE2: 1.0, CALL: 1.0, HAND: 0.75}
"""Par = SHARE[column] x AIMED[row]: what an empty cell is expected to bring."""


def pars(share: dict[int, float]) -> list[list[float]]:
    out = []
    for col in range(NCOLS):
        row_pars = [share[col] * a for a in AIMED]
        # Aiming low is what makes min small; a lower share must not make it look better.
        row_pars[MIN] = AIMED[MIN] / share[col]
        out.append(row_pars)
    return out


PARS = pars(SHARE)
SPREAD: tuple[float, ...] = tuple((1.2 * (r + 1)) ** 2 for r in range(6))
"""Variance of an upper row still to fill (for the chance of the S1 bonus)."""


def column_value(cells: Sequence[float], col: int, par: Sequence[float]) -> float:
    """Expected final total of one column: written cells as they are, empty ones at par.

    `cells` holds the 13 cells of the column (EMPTY: not written).
    """
    s1 = 0.0
    spread = 0.0
    for r in range(6):
        v = cells[r]
        if v == EMPTY:
            s1 += par[r]
            spread += SPREAD[r]
        else:
            s1 += v
    if spread:
        s1 += 15.0 * (1.0 + math.erf((s1 - 59.5) / math.sqrt(2.0 * spread)))
    elif s1 >= 60:
        s1 += 30.0
    ones = par[0] if cells[0] == EMPTY else cells[0]
    low = par[MIN] if cells[MIN] == EMPTY else cells[MIN]
    high = par[MAX] if cells[MAX] == EMPTY else cells[MAX]
    s3 = 0.0
    for r in range(KENTA, NROWS):
        v = cells[r]
        s3 += par[r] if v == EMPTY else v
    return s1 + (high - low) * ones + s3


# --- the turn ----------------------------------------------------------------------------


class TurnPlan:
    """Worth of writing each cell, and of every hold, for one table (one turn)."""

    def __init__(self, cells: list[int], pars_: list[list[float]]) -> None:
        t = dice_tables()
        self.cells = cells
        self.later = _later_cells(cells)
        """Cells a second or third roll may still write (hand and call aside)."""
        self.hand = [HAND * NROWS + r for r in range(NROWS) if cells[HAND * NROWS + r] == EMPTY]
        self.gain: dict[int, list[float]] = {}
        for i in [*self.later, *self.hand]:
            self.gain[i] = self._gains(i, pars_, t)
        if self.later:
            self.write_later = [
                max(vs) for vs in zip(*(self.gain[i] for i in self.later), strict=True)
            ]
            self.hold_last = t.expect(self.write_later)
            """Worth of each hold before the last roll."""
            self.two_left = t.best_of(self.write_later, self.hold_last)
        else:
            self.write_later = []
            self.hold_last = []
            self.two_left = []
        self.pars = pars_

    def _gains(self, i: int, pars_: list[list[float]], t: _Dice) -> list[float]:
        col, row = divmod(i, NROWS)
        column: list[float] = [float(v) for v in self.cells[col * NROWS : (col + 1) * NROWS]]
        par = pars_[col]
        before = column_value(column, col, par)
        by_value: dict[int, float] = {}
        for v in set(t.values[row]):
            column[row] = v
            by_value[v] = column_value(column, col, par) - before
        return [by_value[v] for v in t.values[row]]

    def call_gain(self, row: int, expected: float) -> float:
        """Worth of writing `expected` in call row `row` (the value a targeted turn gets)."""
        column = [float(v) for v in self.cells[CALL * NROWS : (CALL + 1) * NROWS]]
        par = self.pars[CALL]
        before = column_value(column, CALL, par)
        column[row] = expected
        return column_value(column, CALL, par) - before


def _later_cells(cells: list[int]) -> list[int]:
    out: list[int] = []
    for r in range(NROWS):
        if cells[DOWN * NROWS + r] == EMPTY:
            out.append(DOWN * NROWS + r)
            break
    for r in range(NROWS - 1, -1, -1):
        if cells[UP * NROWS + r] == EMPTY:
            out.append(UP * NROWS + r)
            break
    out += [i for i in range(FREE1 * NROWS, (FREE2 + 1) * NROWS) if cells[i] == EMPTY]
    return out


Choice = tuple[str, Any]
"""("write", cell index) | ("call", row) | ("roll", hold multiset)."""


def choose(plan: TurnPlan, dice: Sequence[int], rolls: int) -> Choice:
    """The best move for these dice after roll number `rolls` (1..3), not having called."""
    t = dice_tables()
    d = t.index[tuple(sorted(dice))]
    best: Choice = ("write", -1)
    best_worth = -math.inf
    writable = plan.later + (plan.hand if rolls == 1 else [])
    for i in writable:
        worth = plan.gain[i][d]
        if worth > best_worth:
            best, best_worth = ("write", i), worth
    if rolls < 3 and plan.later:
        if rolls == 2:
            held = plan.hold_last
        else:
            # Two rolls left: the worth of each hold of these dice, from the exact table.
            get = plan.two_left.__getitem__
            held = [0.0] * len(t.holds)
            for h in t.subs[d]:
                idx, probs = t.trans[h]
                held[h] = sum(map(mul, probs, map(get, idx)))
        for h in t.subs[d]:
            if held[h] > best_worth + 1e-9:
                best, best_worth = ("roll", t.holds[h]), held[h]
    if rolls == 1:
        for row in range(NROWS):
            if plan.cells[CALL * NROWS + row] != EMPTY:
                continue
            expected = target(row)[1][d]
            worth = plan.call_gain(row, expected)
            if worth > best_worth + 1e-9:
                best, best_worth = ("call", row), worth
    return best


def choose_called(row: int, dice: Sequence[int], rolls: int) -> Dice | None:
    """After a call: the hold that aims best at `row`, or None to write now."""
    if rolls >= 3:
        return None
    t = dice_tables()
    d = t.index[tuple(sorted(dice))]
    sign = -1.0 if row == MIN else 1.0
    # The worth of a multiset after the next roll: with one more roll to come (rolls 1),
    # the targeted value with one roll left; else its value as it stands.
    after = target(row)[0] if rolls == 1 else t.values[row]
    aim = [sign * v for v in after]
    get = aim.__getitem__
    best_hold: Dice | None = None
    best = sign * t.values[row][d]
    for h in t.subs[d]:
        idx, probs = t.trans[h]
        worth = sum(map(mul, probs, map(get, idx)))
        if worth > best + 1e-9:
            best, best_hold = worth, t.holds[h]
    return best_hold


def hold_positions(dice: Sequence[int], hold: Dice) -> list[int]:
    """Indexes of dice showing the values of the multiset `hold`."""
    left = Counter(hold)
    out = []
    for i, v in enumerate(dice):
        if left[v]:
            left[v] -= 1
            out.append(i)
    return out


@register
class YambStrong(Bot):
    """Exact turn expectations under the par-based table value."""

    kind = "strong"
    games = frozenset({"yamb"})

    def __init__(self, game: str, seed: object = None) -> None:
        super().__init__(game, seed)
        self._plan: TurnPlan | None = None

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        if len(legal) == 1:
            return legal[0]
        me = view["you"]
        table = view["tables"][me]
        rolls: int = table["rolls"]
        dice: list[int] = table["dice"]
        called = table["called"]
        if called is not None:
            hold = choose_called(ROW_INDEX[called], dice, rolls)
            wanted: JSON = (
                {"type": "write", "column": "call", "row": called}
                if hold is None
                else {"type": "roll", "hold": hold_positions(dice, hold)}
            )
            return _pick(legal, wanted)
        cells = yamb_cells(view, me)
        plan = self._plan
        if plan is None or plan.cells != cells:
            plan = self._plan = TurnPlan(cells, PARS)
        kind, arg = choose(plan, dice, rolls)
        if kind == "roll":
            wanted = {"type": "roll", "hold": hold_positions(dice, arg)}
        elif kind == "call":
            wanted = {"type": "call", "row": ROWS[arg]}
        elif arg >= 0:
            col, row = divmod(arg, NROWS)
            wanted = {"type": "write", "column": COLUMNS[col], "row": ROWS[row]}
        else:
            wanted = {}
        return _pick(legal, wanted)


def _pick(legal: list[JSON], wanted: JSON) -> JSON:
    for action in legal:
        if action == wanted:
            return action
    # Only when nothing the plan knows is legal (e.g. only call cells are left at the
    # last roll): the first legal write, else the first legal action.
    return next((a for a in legal if a["type"] == "write"), legal[0])
