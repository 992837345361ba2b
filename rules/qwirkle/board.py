"""Qwirkle tiles, the board, the line rule and the scoring of a placement (docs/rules.md, Qwirkle).

A tile is an int code `colour * 6 + shape` (0..35), so hands and the bag are small int
lists and a line is checked with two 6-bit masks. A board cell is one packed int
(`pack(x, y)`), so neighbours are `p +- DX` and `p +- DY` and the board is a plain dict.
x grows to the right, y grows downwards.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import IllegalAction

COLORS: tuple[str, ...] = ("red", "orange", "yellow", "green", "blue", "purple")
SHAPES: tuple[str, ...] = ("circle", "square", "diamond", "star", "clover", "cross")
COLOR_LETTERS = "ROYGBP"
SHAPE_LETTERS = "csdtlx"
"""Text letters: colour upper case, shape lower case (c circle, s square, d diamond,
t star, l clover, x cross), so `Rt` is a red star."""

KINDS = 36
COPIES = 3
HAND_SIZE = 6
LINE_MAX = 6
QWIRKLE_BONUS = 6
END_BONUS = 6

COLOR_INDEX = {c: i for i, c in enumerate(COLORS)}
SHAPE_INDEX = {s: i for i, s in enumerate(SHAPES)}
COLOR_OF: tuple[str, ...] = tuple(COLORS[t // 6] for t in range(KINDS))
SHAPE_OF: tuple[str, ...] = tuple(SHAPES[t % 6] for t in range(KINDS))
CBIT: tuple[int, ...] = tuple(1 << (t // 6) for t in range(KINDS))
SBIT: tuple[int, ...] = tuple(1 << (t % 6) for t in range(KINDS))
POP: tuple[int, ...] = tuple(bin(m).count("1") for m in range(64))


def _line_n(cm: int, sm: int) -> int:
    if POP[cm] == 1:
        return POP[sm]
    if POP[sm] == 1:
        return POP[cm]
    return 0 if cm == sm == 0 else -1


LINE_N: tuple[int, ...] = tuple(_line_n(m >> 6, m & 63) for m in range(64 * 64))
"""LINE_N[cm << 6 | sm]: the one length a valid line with these colour and shape masks
has (-1: none). The hot loops test `LINE_N[...] == n` instead of calling line_ok."""

LIMIT = 500
"""Coordinates beyond +-LIMIT can never touch a legal board (108 tiles); refused early."""
_OFF = 512
STRIDE = 1024
DX = STRIDE
DY = 1


def pack(x: int, y: int) -> int:
    return (x + _OFF) * STRIDE + y + _OFF


def unpack(p: int) -> tuple[int, int]:
    return p // STRIDE - _OFF, p % STRIDE - _OFF


def line_ok(cm: int, sm: int, n: int) -> bool:
    """Colour mask, shape mask and length of a line: one colour with distinct shapes, or
    one shape with distinct colours (distinctness makes the length at most 6)."""
    if n <= 1:
        return True
    pc = POP[cm]
    ps = POP[sm]
    return (pc == 1 and ps == n) or (ps == 1 and pc == n)


def tile_json(code: int) -> dict[str, Any]:
    return {"color": COLOR_OF[code], "shape": SHAPE_OF[code]}


def tile_text(code: int) -> str:
    return COLOR_LETTERS[code // 6] + SHAPE_LETTERS[code % 6]


def tile_code(color: str, shape: str) -> int:
    return COLOR_INDEX[color] * 6 + SHAPE_INDEX[shape]


def parse_tile(item: object, with_position: bool) -> tuple[int, int, int]:
    """One wire tile -> (x, y, code) ((0, 0, code) without position), validated strictly."""
    if not isinstance(item, Mapping):
        raise IllegalAction("a tile must be a map", "malformed-action")
    keys = ("color", "shape", "x", "y") if with_position else ("color", "shape")
    if set(item) != set(keys):
        raise IllegalAction(f"a tile has exactly the fields {list(keys)}", "malformed-action")
    color = item["color"]
    shape = item["shape"]
    if not isinstance(color, str) or not isinstance(shape, str):
        raise IllegalAction("tile colour and shape must be strings", "malformed-action")
    if color not in COLOR_INDEX or shape not in SHAPE_INDEX:
        raise IllegalAction(f"there is no {color} {shape} tile", "unknown-tile")
    code = COLOR_INDEX[color] * 6 + SHAPE_INDEX[shape]
    if not with_position:
        return 0, 0, code
    x = item["x"]
    y = item["y"]
    for v in (x, y):
        if isinstance(v, bool) or not isinstance(v, int):
            raise IllegalAction("tile coordinates must be integers", "malformed-action")
    if abs(x) > LIMIT or abs(y) > LIMIT:
        raise IllegalAction("that cell is far away from every tile", "off-board")
    return x, y, code


class Board:
    """The tiles on the table: packed cell -> tile code."""

    __slots__ = ("cells",)

    def __init__(self, cells: dict[int, int] | None = None) -> None:
        self.cells: dict[int, int] = {} if cells is None else cells

    @classmethod
    def from_tiles(cls, tiles: Iterable[tuple[int, int, int]]) -> Board:
        """From (x, y, code) triples; no line check (a hand-made position may be anything)."""
        board = cls()
        for x, y, code in tiles:
            if abs(x) > LIMIT or abs(y) > LIMIT or not 0 <= code < KINDS:
                raise ValueError(f"bad tile {(x, y, code)}")
            p = pack(x, y)
            if p in board.cells:
                raise ValueError(f"two tiles on ({x}, {y})")
            board.cells[p] = code
        return board

    def copy(self) -> Board:
        return Board(dict(self.cells))

    def __len__(self) -> int:
        return len(self.cells)

    def at(self, x: int, y: int) -> int | None:
        return self.cells.get(pack(x, y))

    def tiles(self) -> list[tuple[int, int, int]]:
        """(x, y, code) sorted by (x, y): the canonical order."""
        out = [(*unpack(p), c) for p, c in self.cells.items()]
        out.sort()
        return out

    def put(self, placed: Iterable[tuple[int, int, int]]) -> None:
        for x, y, code in placed:
            self.cells[pack(x, y)] = code


def largest_set(hand: Iterable[int]) -> int:
    """Size of the biggest set of a hand that could form one line (the start rule): its
    distinct kinds of one colour, or of one shape, whichever are more (0 for no tiles)."""
    colours = [0] * 6
    shapes = [0] * 6
    for code in set(hand):
        colours[code // 6] += 1
        shapes[code % 6] += 1
    return max(max(colours), max(shapes))


def line_points(n: int) -> int:
    """Points of a line of n tiles (0 below 2, a Qwirkle bonus at 6)."""
    if n < 2:
        return 0
    return n + QWIRKLE_BONUS if n == LINE_MAX else n


def _check_line(cells: Mapping[int, int], new: Mapping[int, int], p: int, d: int) -> int:
    """Validate the line through p along step d; returns its length."""
    codes = [new[p]]
    for step in (d, -d):
        q = p + step
        while True:
            if q in new:
                codes.append(new[q])
            elif q in cells:
                codes.append(cells[q])
            else:
                break
            q += step
    n = len(codes)
    if n == 1:
        return 1
    if n > LINE_MAX:
        raise IllegalAction(f"a line of {n} tiles is longer than 6", "line-too-long")
    if len(set(codes)) < n:
        raise IllegalAction("a line may not hold the same tile twice", "duplicate-tile")
    cm = sm = 0
    for c in codes:
        cm |= CBIT[c]
        sm |= SBIT[c]
    if not line_ok(cm, sm, n):
        raise IllegalAction(
            "a line must be one colour with different shapes or one shape with different colours",
            "line-mismatch",
        )
    return n


def check_placement(
    board: Board, placed: Sequence[tuple[int, int, int]], opening_size: int | None = None
) -> tuple[int, int]:
    """Validate a placement of (x, y, code) tiles (hand membership aside).

    Returns (points, qwirkles). On an empty board the placement must cover (0, 0) and, when
    `opening_size` is given, hold exactly that many tiles (the start rule).
    """
    cells = board.cells
    n = len(placed)
    if n == 0:
        raise IllegalAction("place at least one tile", "no-tiles")
    if n > HAND_SIZE:
        raise IllegalAction("at most 6 tiles can be placed", "too-many-tiles")
    new: dict[int, int] = {}
    for x, y, code in placed:
        if abs(x) > LIMIT or abs(y) > LIMIT:
            raise IllegalAction("that cell is far away from every tile", "off-board")
        p = pack(x, y)
        if p in new:
            raise IllegalAction(f"two tiles on ({x}, {y})", "same-cell")
        if p in cells:
            raise IllegalAction(f"({x}, {y}) is already taken", "cell-occupied")
        new[p] = code
    xs = {t[0] for t in placed}
    ys = {t[1] for t in placed}
    if n == 1:
        main = 0
    elif len(ys) == 1:
        main = DX
    elif len(xs) == 1:
        main = DY
    else:
        raise IllegalAction("the tiles must lie in one row or one column", "not-in-line")
    if main:
        lo = min(new)
        hi = max(new)
        for q in range(lo, hi + main, main):
            if q not in new and q not in cells:
                raise IllegalAction(
                    "the tiles and the board must form one unbroken line", "not-contiguous"
                )
    if not cells:
        if pack(0, 0) not in new:
            raise IllegalAction("the first tiles of the game must cover (0, 0)", "opening-origin")
    elif not any(
        p + DX in cells or p - DX in cells or p + DY in cells or p - DY in cells for p in new
    ):
        raise IllegalAction("the tiles must touch the tiles on the board", "not-connected")

    points = 0
    qwirkles = 0
    lengths: list[int] = []
    if main:
        first = next(iter(new))
        lengths.append(_check_line(cells, new, first, main))
        perp = DY if main == DX else DX
        lengths.extend(_check_line(cells, new, p, perp) for p in new)
    else:
        (p,) = new
        lengths.append(_check_line(cells, new, p, DX))
        lengths.append(_check_line(cells, new, p, DY))
    for length in lengths:
        points += line_points(length)
        qwirkles += length == LINE_MAX
    if not cells:
        if opening_size is not None and n != opening_size:
            raise IllegalAction(
                f"the first move must place your largest set: {opening_size} tiles",
                "opening-size",
            )
        if n == 1:
            points = 1
    return points, qwirkles


def score_placement(board: Board, tiles: Sequence[tuple[int, int, int]]) -> int:
    """Points a placement of (x, y, code) tiles would score; IllegalAction if illegal.

    For bots: no hand and no opening size are checked.
    """
    return check_placement(board, tiles)[0]
