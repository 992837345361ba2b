"""The Yamb table as plain data: cell values, column sums, the canonical text, hand sheets.

A seat's table is a flat list of 78 ints, column-major (`column * 13 + row`), with
`EMPTY` (-1) for a cell not written yet; every function here is pure so the state, the
renderer and `dicehall sheet` share one definition of the scoring rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidState

ROWS: tuple[str, ...] = (
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "min",
    "max",
    "kenta",
    "full",
    "poker",
    "yamb",
    "royal",
)
COLUMNS: tuple[str, ...] = ("down", "up", "free1", "free2", "call", "hand")
ROW_INDEX: dict[str, int] = {name: i for i, name in enumerate(ROWS)}
COLUMN_INDEX: dict[str, int] = {name: i for i, name in enumerate(COLUMNS)}

NROWS = 13
NCOLS = 6
NCELLS = NROWS * NCOLS
EMPTY = -1

DOWN, UP, FREE1, FREE2, CALL, HAND = range(NCOLS)
MIN, MAX, KENTA, FULL, POKER, YAMB, ROYAL = range(6, NROWS)

KENTA_VALUE = 61
BONUS_THRESHOLD = 60
BONUS = 30


def _counts(dice: Sequence[int]) -> list[int]:
    c = [0] * 7
    for d in dice:
        c[d] += 1
    return c


def _best_full(c: Sequence[int]) -> int:
    """Three of `a` and two of a different `b`: the choice of (a, b) that scores most."""
    best = 0
    for a in range(1, 7):
        if c[a] >= 3:
            for b in range(1, 7):
                if b != a and c[b] >= 2 and 3 * a + 2 * b + 30 > best:
                    best = 3 * a + 2 * b + 30
    return best


def _best_of_a_kind(c: Sequence[int], k: int, bonus: int) -> int:
    for a in range(6, 0, -1):
        if c[a] >= k:
            return k * a + bonus
    return 0


def cell_value(dice: Sequence[int], row: int) -> int:
    """The value six dice give in `row` (0 when the combination is not there)."""
    if row < 6:
        return (row + 1) * dice.count(row + 1)
    if row < KENTA:
        return sum(dice)
    c = _counts(dice)
    if row == KENTA:
        return KENTA_VALUE if max(c) == 1 else 0
    if row == FULL:
        return _best_full(c)
    if row == POKER:
        return _best_of_a_kind(c, 4, 40)
    if row == YAMB:
        return _best_of_a_kind(c, 5, 50)
    return _best_of_a_kind(c, 6, 60)


def row_values(dice: Sequence[int]) -> list[int]:
    """`cell_value` of every row at once."""
    return [cell_value(dice, row) for row in range(NROWS)]


def column_sums(cells: Sequence[int], col: int) -> tuple[int, int, int]:
    """(S1 with its bonus, S2, S3) of one column; S2 counts only once its three cells are in."""
    base = col * NROWS
    # An empty cell is -1 (EMPTY): adding the count of empties back sums the written ones.
    top = cells[base : base + 6]
    s1 = sum(top) + top.count(EMPTY)
    if s1 >= BONUS_THRESHOLD:
        s1 += BONUS
    ones, low, high = cells[base], cells[base + MIN], cells[base + MAX]
    s2 = (high - low) * ones if ones >= 0 and low >= 0 and high >= 0 else 0
    bottom = cells[base + KENTA : base + NROWS]
    return s1, s2, sum(bottom) + bottom.count(EMPTY)


def column_total(cells: Sequence[int], col: int) -> int:
    s1, s2, s3 = column_sums(cells, col)
    return s1 + s2 + s3


def table_total(cells: Sequence[int]) -> int:
    return sum(column_total(cells, col) for col in range(NCOLS))


# --- possible values (hand-filled sheets and loaded states) ----------------------------


def _possible(row: int) -> frozenset[int]:
    if row < 6:
        n = row + 1
        return frozenset(n * k for k in range(7))
    if row < KENTA:
        return frozenset(range(6, 37))
    if row == KENTA:
        return frozenset((0, KENTA_VALUE))
    if row == FULL:
        return frozenset(
            [0] + [3 * a + 2 * b + 30 for a in range(1, 7) for b in range(1, 7) if a != b]
        )
    k = {POKER: 4, YAMB: 5, ROYAL: 6}[row]
    return frozenset([0] + [k * a + 10 * k for a in range(1, 7)])


POSSIBLE: tuple[frozenset[int], ...] = tuple(_possible(row) for row in range(NROWS))


def describe_possible(row: int) -> str:
    values = sorted(POSSIBLE[row])
    if row in (MIN, MAX):
        return "6..36 (the sum of six dice)"
    return ", ".join(str(v) for v in values)


def check_value(value: object, col: int, row: int) -> int:
    """A cell value as loaded from JSON: an int that the row can really hold."""
    where = f"column {COLUMNS[col]!r} row {ROWS[row]!r}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidState(f"{where}: the value must be an integer, not {value!r}")
    if value not in POSSIBLE[row]:
        raise InvalidState(
            f"{where}: {value} is not a possible value; it must be one of {describe_possible(row)}"
        )
    return value


# --- canonical text --------------------------------------------------------------------

POINTS_COLUMN = 31
_HEADER = "      |" + "".join(f"{c:>5}|" for c in COLUMNS)
_RULE = "------+" + "-----+" * NCOLS


def _line(label: str, values: Sequence[int | None]) -> str:
    return f"{label:<6}|" + "".join(("     " if v is None else f"{v:>5}") + "|" for v in values)


def render_table(cells: Sequence[int], name: str = "", points: int | None = None) -> str:
    """The canonical text of a table, no final newline (docs/games/yamb.md shows the layout).

    Whitespace runs in the name collapse to one space so that a name cannot break the layout.
    """
    head = f"Player name: {' '.join(name.split())}"
    if points is not None:
        head = f"{head:<{POINTS_COLUMN - 1}} Points: {points}"
    sums = [column_sums(cells, col) for col in range(NCOLS)]

    def row_line(row: int) -> str:
        return _line(
            ROWS[row],
            [None if (v := cells[col * NROWS + row]) < 0 else v for col in range(NCOLS)],
        )

    lines = [head.rstrip(), _HEADER, _RULE]
    lines += [row_line(row) for row in range(6)]
    lines += [_line("S1", [s[0] for s in sums]), _RULE]
    lines += [row_line(MIN), row_line(MAX), _line("S2", [s[1] for s in sums]), _RULE]
    lines += [row_line(row) for row in range(KENTA, NROWS)]
    lines += [_line("S3", [s[2] for s in sums]), _RULE]
    totals = [sum(s) for s in sums]
    lines += [_line("Total", totals), _RULE, f"Score: {sum(totals)}"]
    return "\n".join(lines)


# --- dicehall sheet yamb FILE ----------------------------------------------------------


def cells_from_sheet(data: Any) -> tuple[str, list[int]]:
    """Validate a hand-filled sheet `{"name", "columns": {col: {row: int}}}`."""
    if not isinstance(data, Mapping):
        raise InvalidState('a yamb sheet must be a map {"name": ..., "columns": {...}}')
    extra = sorted(set(data) - {"name", "columns"})
    if extra:
        raise InvalidState(f"unexpected keys in the yamb sheet: {extra}")
    name = data.get("name", "")
    if not isinstance(name, str):
        raise InvalidState("'name' must be a string")
    columns = data.get("columns")
    if not isinstance(columns, Mapping):
        raise InvalidState("'columns' must be a map from column name to {row: value}")
    cells = [EMPTY] * NCELLS
    for cname, column in columns.items():
        if cname not in COLUMN_INDEX:
            raise InvalidState(f"unknown column {cname!r}; columns: {list(COLUMNS)}")
        col = COLUMN_INDEX[cname]
        if not isinstance(column, Mapping):
            raise InvalidState(f"column {cname!r} must be a map from row name to value")
        for rname, value in column.items():
            if rname not in ROW_INDEX:
                raise InvalidState(f"unknown row {rname!r} in column {cname!r}; rows: {list(ROWS)}")
            row = ROW_INDEX[rname]
            if value is not None:
                cells[col * NROWS + row] = check_value(value, col, row)
    return name, cells


def score_sheet(data: Any) -> tuple[int, str]:
    """Score and draw a hand-filled sheet, as drawn (the order of the cells is not checked)."""
    name, cells = cells_from_sheet(data)
    total = table_total(cells)
    return total, render_table(cells, name, total)
