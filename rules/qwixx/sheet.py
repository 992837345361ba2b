"""The Qwixx score sheet as plain ints: scoring, the canonical text, hand-made sheets.

A row is a bitmask of box indexes 0..10, left to right, so "the last mark" is
`mask.bit_length() - 1` and the number of marks is `mask.bit_count()`; the engine's hot
path needs nothing heavier. Red and yellow read 2..12, green and blue 12..2.
"""

# mypyc: compiled (a hot module: server/compiled.py)

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidState

COLOURS: tuple[str, ...] = ("red", "yellow", "green", "blue")
ROW_OF: dict[str, int] = {c: i for i, c in enumerate(COLOURS)}
TITLES: tuple[str, ...] = ("Red", "Yellow", "Green", "Blue")
LAST_BOX = 10
"""Index of the last box (12 on red/yellow, 2 on green/blue): marking it locks the row."""
MAX_FAILED = 4
FAILED_PENALTY = 5

# TRIANGLE[k]: points of a row with k marks (the lock included); at most 11 marks + lock.
TRIANGLE: tuple[int, ...] = tuple(k * (k + 1) // 2 for k in range(13))

# BOX[row][number] and NUMBER[row][box]: the two directions of the rows, precomputed.
BOX: tuple[tuple[int, ...], ...] = tuple(
    tuple((n - 2 if r < 2 else 12 - n) if 2 <= n <= 12 else -1 for n in range(13)) for r in range(4)
)
NUMBER: tuple[tuple[int, ...], ...] = tuple(
    tuple(b + 2 if r < 2 else 12 - b for b in range(11)) for r in range(4)
)

_SEPARATOR = " " * 12 + "-" * 36
_POINTS_COLUMN = 28


def row_numbers(row: int, mask: int) -> list[int]:
    """The marked numbers of a row, left to right (a fresh list: views are the caller's)."""
    return list(_row_numbers(row, mask))


@functools.cache
def _row_numbers(row: int, mask: int) -> tuple[int, ...]:
    # every view lists 4 rows per seat: remembered, they cost a lookup (at most 4 x 2048)
    numbers = NUMBER[row]
    return tuple(numbers[b] for b in range(11) if mask >> b & 1)


def score(marks: Sequence[int], locks: int, failed: int) -> int:
    """Triangular points per row (a lock is one more mark), minus 5 per failed throw."""
    total = -FAILED_PENALTY * failed
    for r in range(4):
        total += TRIANGLE[marks[r].bit_count() + (locks >> r & 1)]
    return total


def render_sheet(
    name: str, marks: Sequence[int], locks: int, failed: int, points: int | None
) -> str:
    """The canonical Qwixx sheet (docs/rules.md, Qwixx); `points` is None until the game is over.

    Lines have no trailing spaces and the text has no trailing newline (callers print it).
    Whitespace runs in the name collapse to one space so that a name cannot break the layout.
    """
    name = " ".join(name.split())
    head = f"Player name: {name}" if name else "Player name:"
    if points is not None:
        head = head.ljust(max(_POINTS_COLUMN, len(head) + 1)) + f"Points: {points}"
    lines = [head, _SEPARATOR]
    for r in range(4):
        mask = marks[r]
        numbers = NUMBER[r]
        boxes = "".join("XX|" if mask >> b & 1 else f"{numbers[b]:2d}|" for b in range(11))
        end = " L" if locks >> r & 1 else " U"
        lines.append(f"{TITLES[r]:>11} |{boxes}{end}")
        lines.append(_SEPARATOR)
    lines.append("       Failed throws:" + "".join(f" {i}" for i in range(1, failed + 1)))
    return "\n".join(lines)


def _fail(message: str) -> InvalidState:
    return InvalidState(f"qwixx sheet: {message}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_FIELDS = frozenset({"name", "rows", "locked", "failed"})


def parse_sheet(data: Any) -> tuple[str, list[int], int, int]:
    """Checks the shape of a hand-made sheet (not how it was reached) and returns
    (name, row masks, lock mask, failed throws).

    Only `rows` is required. As in the Qwinto and Yamb sheet inputs, `name` may be left
    out (no name) and so may `failed` (0), and `locked` (no row locked) too: a sheet
    copied from paper carries what is written on it, and an unwritten name, no failed
    throw and no lock are written as nothing. A field that is given must be valid (null
    is not "left out": it is refused, as the other games refuse it).
    """
    if not isinstance(data, Mapping):
        raise _fail("expected a map with 'rows' and optionally 'name', 'locked' and 'failed'")
    extra = set(data) - _FIELDS
    if extra:
        raise _fail(f"unknown fields {sorted(map(str, extra))}")
    if "rows" not in data:
        raise _fail("missing field 'rows'")
    name = data.get("name", "")
    if not isinstance(name, str):
        raise _fail("'name' must be a string")
    rows = data["rows"]
    if not isinstance(rows, Mapping):
        raise _fail("'rows' must be a map from colour to a list of marked numbers")
    if set(rows) != set(COLOURS):
        raise _fail(f"'rows' must have exactly the colours {list(COLOURS)}")
    marks = [0, 0, 0, 0]
    for r, colour in enumerate(COLOURS):
        numbers = rows[colour]
        if not isinstance(numbers, list):
            raise _fail(f"row {colour!r} must be a list of numbers")
        for n in numbers:
            if not _is_int(n) or not 2 <= n <= 12:
                raise _fail(f"row {colour!r}: {n!r} is not a number from 2 to 12")
            bit = 1 << BOX[r][n]
            if marks[r] & bit:
                raise _fail(f"row {colour!r}: {n} is marked twice")
            marks[r] |= bit
    locked = data.get("locked", [])
    if not isinstance(locked, list):
        raise _fail("'locked' must be a list of colours")
    locks = 0
    for colour in locked:
        if not isinstance(colour, str) or colour not in ROW_OF:
            raise _fail(f"'locked': {colour!r} is not one of {list(COLOURS)}")
        r = ROW_OF[colour]
        if locks >> r & 1:
            raise _fail(f"'locked': {colour!r} is listed twice")
        if not marks[r] >> LAST_BOX & 1:
            raise _fail(
                f"row {colour!r} is locked but its last box {NUMBER[r][LAST_BOX]} is not marked"
            )
        locks |= 1 << r
    failed = data.get("failed", 0)
    if not _is_int(failed) or not 0 <= failed <= MAX_FAILED:
        raise _fail(f"'failed' must be an integer from 0 to {MAX_FAILED}")
    return name, marks, locks, failed


def score_sheet(data: Any) -> tuple[int, str]:
    """`dicehall sheet qwixx FILE`: score a sheet drawn by hand, without replaying it.

    The rules' worked example (docs/rules.md, Qwixx) marks red 12 with only three marks and
    no lock, which play never allows; it must still score 26 as drawn, so only the shape is
    checked.
    """
    name, marks, locks, failed = parse_sheet(data)
    points = score(marks, locks, failed)
    return points, render_sheet(name, marks, locks, failed, points)
