"""The Qwinto sheet: geometry, entry rules, scoring and the canonical text (docs/rules.md).

A sheet is three lists of 10 ints (red, yellow, blue; 0 = empty). Plain lists keep clones
and legality checks cheap, which matters because bots search on cloned states.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidState

COLOURS: tuple[str, ...] = ("red", "yellow", "blue")
COLOUR_INDEX: dict[str, int] = {c: i for i, c in enumerate(COLOURS)}
LABELS: tuple[str, ...] = ("Red", "Yellow", "Blue")
BOXES = 10
MAX_FAILED = 4
HIGHEST = 18
OFFSET: tuple[int, ...] = (2, 1, 0)
"""Global column of box 0 of each row (the sheet is sheared one box per row)."""
BLOCKED: tuple[int, ...] = (3, 5, 4)
"""The `XX` box of each row, by index within the row."""
BONUS: frozenset[tuple[int, int]] = frozenset({(2, 2), (0, 1), (0, 5), (1, 7), (2, 9)})
"""(row, box) of the five bonus boxes, in global columns 2, 3, 7, 8 and 9."""

Sheet = list[list[int]]


def _column_boxes(col: int) -> tuple[tuple[int, int], ...]:
    return tuple(
        (r, col - OFFSET[r])
        for r in range(3)
        if 0 <= col - OFFSET[r] < BOXES and col - OFFSET[r] != BLOCKED[r]
    )


MATES: tuple[tuple[tuple[tuple[int, int], ...], ...], ...] = tuple(
    tuple(tuple(m for m in _column_boxes(b + OFFSET[r]) if m[0] != r) for b in range(BOXES))
    for r in range(3)
)
"""MATES[row][box]: the fillable boxes of the other rows in the same global column."""

BONUS_COLUMNS: tuple[tuple[tuple[int, int], tuple[tuple[int, int], ...]], ...] = tuple(
    sorted(
        (((r, b), _column_boxes(b + OFFSET[r])) for r, b in BONUS),
        key=lambda item: item[0][1] + OFFSET[item[0][0]],
    )
)
"""Each bonus box with the three boxes of its column."""

for _box, _column in BONUS_COLUMNS:
    assert len(_column) == 3, "a bonus column has three fillable boxes"


def empty_sheet() -> Sheet:
    return [[0] * BOXES for _ in range(3)]


def open_boxes(sheet: Sheet, r: int, n: int) -> list[int]:
    """The boxes of row `r` that may take number `n` now, left to right."""
    row = sheet[r]
    lo = 0
    hi = BOXES
    for i in range(BOXES):
        v = row[i]
        if v:
            if v < n:
                lo = i + 1
            elif v == n:
                return []
            else:
                hi = i
                break
    blocked = BLOCKED[r]
    mates = MATES[r]
    out = []
    for b in range(lo, hi):
        if b == blocked or row[b]:
            continue
        for r2, b2 in mates[b]:
            if sheet[r2][b2] == n:
                break
        else:
            out.append(b)
    return out


def entry_error(sheet: Sheet, r: int, b: int, n: int) -> tuple[str, str] | None:
    """Why `n` may not go in box `b` of row `r` (message, rule), or None if it may."""
    row = sheet[r]
    colour = COLOURS[r]
    if b == BLOCKED[r]:
        return f"{colour} box {b} is blocked", "box-blocked"
    if row[b]:
        return f"{colour} box {b} already holds {row[b]}", "box-filled"
    for i in range(BOXES):
        v = row[i]
        if v and ((i < b and v >= n) or (i > b and v <= n)):
            return (
                f"{n} in {colour} box {b} would not increase strictly ({v} in box {i})",
                "row-not-increasing",
            )
    for r2, b2 in MATES[r][b]:
        if sheet[r2][b2] == n:
            return (
                f"{n} is already in that column ({COLOURS[r2]} box {b2})",
                "column-repeat",
            )
    return None


def row_full(row: list[int], r: int) -> bool:
    return sum(1 for v in row if v) == BOXES - 1


def full_rows(sheet: Sheet) -> int:
    return sum(1 for r in range(3) if row_full(sheet[r], r))


def score(sheet: Sheet, failed: int) -> int:
    total = 0
    for r in range(3):
        row = sheet[r]
        filled = sum(1 for v in row if v)
        total += row[BOXES - 1] if filled == BOXES - 1 else filled
    for (r, b), column in BONUS_COLUMNS:
        if all(sheet[r2][b2] for r2, b2 in column):
            total += sheet[r][b]
    return total - 5 * failed


def _row_line(row: list[int], r: int) -> str:
    parts = [LABELS[r].ljust(7 + 3 * OFFSET[r])]
    blocked = BLOCKED[r]
    prev_bonus = False
    for b in range(BOXES):
        bonus = (r, b) in BONUS
        parts.append("%" if bonus or prev_bonus else "|")
        v = row[b]
        parts.append("XX" if b == blocked else (f"{v:2d}" if v else "  "))
        prev_bonus = bonus
    parts.append("%" if prev_bonus else "|")
    return "".join(parts)


def _rule_line(rows: Sequence[int]) -> str:
    start = 7 + 3 * min(OFFSET[r] for r in rows)
    end = 7 + 3 * (max(OFFSET[r] for r in rows) + BOXES)
    return " " * start + "-" * (end - start + 1)


_RULES = (_rule_line((0,)), _rule_line((0, 1)), _rule_line((1, 2)), _rule_line((2,)))
POINTS_COLUMN = 34


def render(sheet: Sheet, failed: int, name: str = "", points: int | None = None) -> str:
    """The canonical text (docs/rules.md, Qwinto); `points` is shown only when given (game over)."""
    name = " ".join(name.split())
    head = "Player name: " + name if name else "Player name:"
    if points is not None:
        head += " " * max(1, POINTS_COLUMN - len(head)) + f"Points: {points}"
    lines = [
        head,
        _RULES[0],
        _row_line(sheet[0], 0),
        _RULES[1],
        _row_line(sheet[1], 1),
        _RULES[2],
        _row_line(sheet[2], 2),
        _RULES[3],
        "Failed throws:" + "".join(f" {i}" for i in range(1, failed + 1)),
    ]
    return "\n".join(lines)


def rows_to_json(sheet: Sheet) -> dict[str, list[int | None]]:
    """Rows as JSON: null for an empty or blocked box."""
    return {COLOURS[r]: [v or None for v in sheet[r]] for r in range(3)}


def rows_from_json(rows: object, where: str = "sheet") -> Sheet:
    """Parse `{"red": [10 x int|null], ...}`: shape, types and ranges, nothing more."""
    if not isinstance(rows, Mapping):
        raise InvalidState(f"{where}: 'rows' must be an object with red, yellow and blue")
    if set(rows) != set(COLOURS):
        raise InvalidState(
            f"{where}: 'rows' must have exactly the keys red, yellow and blue, not {sorted(rows)}"
        )
    sheet = empty_sheet()
    for r, colour in enumerate(COLOURS):
        row = rows[colour]
        if not isinstance(row, list) or len(row) != BOXES:
            raise InvalidState(f"{where}: row {colour} must be a list of {BOXES} boxes")
        for b, v in enumerate(row):
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int):
                raise InvalidState(f"{where}: {colour} box {b} must be a number or null, not {v!r}")
            if not 1 <= v <= HIGHEST:
                raise InvalidState(f"{where}: {colour} box {b} holds {v}, not 1..{HIGHEST}")
            if b == BLOCKED[r]:
                raise InvalidState(f"{where}: {colour} box {b} is blocked and must be null")
            sheet[r][b] = v
    return sheet


def failed_from_json(failed: object, where: str = "sheet") -> int:
    if isinstance(failed, bool) or not isinstance(failed, int):
        raise InvalidState(f"{where}: 'failed' must be an integer")
    if not 0 <= failed <= MAX_FAILED:
        raise InvalidState(f"{where}: 'failed' is {failed}, not 0..{MAX_FAILED}")
    return failed


def check_legal(sheet: Sheet, where: str) -> None:
    """A reachable position: rows strictly increase, no number twice in a column."""
    for r in range(3):
        last = 0
        for b in range(BOXES):
            v = sheet[r][b]
            if v:
                if v <= last:
                    raise InvalidState(f"{where}: row {COLOURS[r]} does not increase strictly")
                last = v
                for r2, b2 in MATES[r][b]:
                    if sheet[r2][b2] == v:
                        raise InvalidState(f"{where}: {v} repeats in a column")


def score_sheet(data: Any) -> tuple[int, str]:
    """`dicehall sheet qwinto FILE`: score and draw a hand-filled sheet (no replay)."""
    if not isinstance(data, Mapping):
        raise InvalidState("a Qwinto sheet must be an object with 'name', 'rows' and 'failed'")
    extra = set(data) - {"name", "rows", "failed"}
    if extra:
        raise InvalidState(f"unexpected fields {sorted(extra)} in a Qwinto sheet")
    name = data.get("name", "")
    if not isinstance(name, str):
        raise InvalidState("'name' must be a string")
    if "rows" not in data:
        raise InvalidState("a Qwinto sheet needs 'rows'")
    sheet = rows_from_json(data["rows"])
    failed = failed_from_json(data.get("failed", 0))
    points = score(sheet, failed)
    return points, render(sheet, failed, name, points)
