"""The strong Qwixx bot: a learned value of the sheet, and the best white + colour pair.

A row is summed up by (last box marked, marks so far); boxes are counted left to right on
the sheet, so all four rows look alike (the dice are symmetric: 14 - n is as likely as n).
The value of a sheet is

    points of closed rows - 5 x failed throws + sum over open rows of A[L][f][last][marks]

with L the closed rows (0 or 1) and f the failed throws: A is the expected final points
of a row in that position. A was learned by self-play (afterstate TD(0), bench/qwixx_train.py)
for `lock_after` 4 and 5, and is stored in qwixx_values.py.

Deciding: the active seat sees all six dice in the white window, so it weighs every pair
(white mark or none, then colour mark or none) by the value of the sheet after the whole
turn (a turn without a mark costs a failed throw) and plays the white half; in the colour
window it weighs the colour marks again, which gives the same answer. Other seats weigh
the white mark against passing. That is a few dozen table look-ups: microseconds.

With other seats (`pressure_of`) the game can end sooner than alone: any of them may lock
a row or take a fourth failed throw. So only part of an open row's expected gain counts
(`SCALE`, less with more seats), the table is read as if a row were already locked when
another seat can lock an open row, and at the failed throws of the seat nearest its
fourth; a turn that ends the game counts `BONUS` more if the bot then leads, less if it
trails. Without this, strong won 45 % of duels and 14 % of 3-seat games against
docs/bots.md's skipper (issue 33).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..base import JSON
from ..qwixx.sheet import COLOURS, LAST_BOX, TRIANGLE
from .base import Bot, register
from .qwixx_values import TABLES

Row = tuple[int, int]
"""(last marked box or -1, marks including a lock)."""

STRIDE_P = 12
STRIDE_F = 11 * STRIDE_P
STRIDE_L = 4 * STRIDE_F
TABLE_SIZE = 2 * STRIDE_L


def box_of(row: int, number: int) -> int:
    return number - 2 if row < 2 else 12 - number


def number_of(row: int, box: int) -> int:
    return box + 2 if row < 2 else 12 - box


def table_for(lock_after: int) -> Sequence[float]:
    """The learned table of the nearest trained `lock_after`."""
    keys = sorted(TABLES)
    return TABLES[min(keys, key=lambda k: (abs(k - lock_after), k))]


@dataclass(frozen=True, slots=True)
class Pressure:
    """How much shorter than a solitaire game the other seats make this one.

    `scale`: the share of an open row's expected gain (table value minus its points now)
    that counts; `locks` (0 or 1) is added to the table's index for closed rows and
    `failed` is a floor of its index for failed throws, since a game the others can end
    soon is worth what a solitaire game that near its end is worth. `bonus` is added to a
    finished game's score above `best_other` (taken from one below it).
    """

    scale: float = 1.0
    locks: int = 0
    failed: int = 0
    best_other: float = 0.0
    bonus: float = 0.0


SOLITAIRE = Pressure()


def value(
    rows: Sequence[Row],
    closed: int,
    failed: int,
    table: Sequence[float],
    pressure: Pressure = SOLITAIRE,
) -> float:
    """The expected final score of a sheet (exact once the game is over)."""
    locked = closed.bit_count()
    total = -5.0 * failed
    if locked >= 2 or failed >= 4:
        for _, c in rows:
            total += TRIANGLE[c]
        if pressure.bonus:
            if total > pressure.best_other:
                total += pressure.bonus
            elif total < pressure.best_other:
                total -= pressure.bonus
        return total
    base = (
        min(1, locked + pressure.locks) * STRIDE_L + min(3, max(failed, pressure.failed)) * STRIDE_F
    )
    scale = pressure.scale
    for r in range(4):
        p, c = rows[r]
        if closed >> r & 1:
            total += TRIANGLE[c]
        elif scale == 1.0:
            total += table[base + (p + 1) * STRIDE_P + c]
        else:
            now = TRIANGLE[c]
            total += now + scale * (table[base + (p + 1) * STRIDE_P + c] - now)
    return total


def mark(rows: list[Row], closed: int, r: int, box: int, lock_after: int) -> int:
    """Mark `box` in row `r` in place if it is legal; returns the new closed mask, or -1."""
    p, c = rows[r]
    if closed >> r & 1 or box <= p or (box == LAST_BOX and c < lock_after):
        return -1
    if box == LAST_BOX:
        rows[r] = (box, c + 2)
        return closed | 1 << r
    rows[r] = (box, c + 1)
    return closed


Choice = tuple[int, int, int, int]
"""(white row, white box, colour row, colour box); -1 for no mark."""


def best_turn(
    rows: Sequence[Row],
    closed: int,
    failed: int,
    dice: Sequence[int],
    lock_after: int,
    table: Sequence[float],
    active: bool,
    white_done: bool = False,
    marked: bool = False,
    pressure: Pressure = SOLITAIRE,
) -> tuple[float, Choice]:
    """The best (white, colour) pair for this roll, with the value of the sheet after it.

    `dice`: white1, white2, red, yellow, green, blue (0 for a die out of the game).
    `white_done`: the white window is over (only the colour mark is left to choose);
    `marked`: the active seat already marked this turn, so passing costs nothing.
    """
    w1, w2 = dice[0], dice[1]
    white_sum = w1 + w2
    best = -1e9
    best_choice: Choice = (-1, -1, -1, -1)
    whites: list[tuple[int, int, list[Row], int]] = []
    if white_done:
        whites.append((-1, -1, list(rows), closed))
    else:
        whites.append((-1, -1, list(rows), closed))
        for r in range(4):
            after = list(rows)
            b = box_of(r, white_sum)
            now = mark(after, closed, r, b, lock_after)
            if now >= 0:
                whites.append((r, b, after, now))
    for wr, wb, after, now in whites:
        lost = 0 if (wr >= 0 or marked or not active) else 1
        v = value(after, now, failed + lost, table, pressure)
        if v > best:
            best, best_choice = v, (wr, wb, -1, -1)
        if not active or now.bit_count() >= 2:
            continue
        for r in range(4):
            die = dice[2 + r]
            if not die or now >> r & 1:
                continue
            seen = -1
            for w in (w1, w2):
                b = box_of(r, w + die)
                if b == seen:
                    continue
                seen = b
                again = list(after)
                closed2 = mark(again, now, r, b, lock_after)
                if closed2 < 0:
                    continue
                v = value(again, closed2, failed, table, pressure)
                if v > best:
                    best, best_choice = v, (wr, wb, r, b)
    return best, best_choice


def rows_of(sheet: JSON) -> list[Row]:
    """(last box, marks + lock) of each row of a seat's sheet in the view."""
    out: list[Row] = []
    locked = sheet["locked"]
    for r, colour in enumerate(COLOURS):
        numbers = sheet["rows"][colour]
        boxes = [box_of(r, n) for n in numbers]
        last = max(boxes) if boxes else -1
        out.append((last, len(boxes) + (colour in locked)))
    return out


SCALE = {1: 1.0, 2: 0.35, 3: 0.3, 4: 0.25, 5: 0.2, 6: 0.2}
"""Share of a row's expected gain that counts, by seats: the table was learned alone, and
every other seat's locks and failed throws can end the game before the gain comes in.
Tuned with bench/bot_field.py (docs/bots.md)."""

BONUS = 20.0
"""Points a turn that ends the game is worth when it ends it ahead (minus when behind),
so the bot closes a game it leads and keeps open one it trails."""


def pressure_of(view: JSON, me: int, lock_after: int) -> Pressure:
    """What the other seats' sheets say about how soon the game can end."""
    seats = len(view["sheets"])
    if seats == 1:
        return SOLITAIRE
    closed = view["closed"]
    failed = 0
    locks = 0
    for seat, sheet in enumerate(view["sheets"]):
        if seat == me:
            continue
        failed = max(failed, int(sheet["failed"]))
        for colour in COLOURS:
            if colour not in closed and len(sheet["rows"][colour]) >= lock_after:
                locks = 1
    best_other = max(int(s) for seat, s in enumerate(view["scores"]) if seat != me)
    return Pressure(SCALE.get(seats, SCALE[6]), locks, failed, best_other, BONUS)


DICE_KEYS = ("white1", "white2", "red", "yellow", "green", "blue")


@register
class QwixxStrong(Bot):
    """Plays the best white + colour pair under the learned sheet value."""

    kind = "strong"
    games = frozenset({"qwixx"})

    def __init__(self, game: str, seed: object = None) -> None:
        super().__init__(game, seed)
        self._white: tuple[int, bool] | None = None
        """(white window id, whether this seat marked in it), to know in the colour
        window whether a pass would be a failed throw."""

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        me = view["you"]
        lock_after = int(view["options"]["lock_after"])
        table = table_for(lock_after)
        sheet = view["sheets"][me]
        rows = rows_of(sheet)
        closed = 0
        for colour in view["closed"]:
            closed |= 1 << COLOURS.index(colour)
        dice_map = view["dice"] or {}
        dice = [dice_map.get(k, 0) for k in DICE_KEYS]
        active = view["active"] == me
        colour_window = view["phase"] == "colour"
        marked = False
        if colour_window:
            memory = self._white
            # Without a memory of the white window (a bot seated mid-turn) assume the
            # worst: a pass now would be a failed throw.
            marked = memory is not None and memory[0] == view["window"] - 1 and memory[1]
        _, (wr, wb, cr, cb) = best_turn(
            rows,
            closed,
            sheet["failed"],
            dice,
            lock_after,
            table,
            active,
            white_done=colour_window,
            marked=marked,
            pressure=pressure_of(view, me, lock_after),
        )
        row, box = (cr, cb) if colour_window else (wr, wb)
        if not colour_window:
            self._white = (view["window"], row >= 0)
        wanted: JSON = (
            {"type": "pass"}
            if row < 0
            else {"type": "mark", "row": COLOURS[row], "number": number_of(row, box)}
        )
        for action in legal:
            if action == wanted:
                return action
        # Not reachable with a consistent view; never answer with an illegal action.
        return next((a for a in legal if a["type"] == "pass"), legal[0])
