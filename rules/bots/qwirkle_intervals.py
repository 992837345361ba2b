"""The stretches of a row or column that a placement of two to SPAN tiles could fill,
and whether a hand fills one: what `Replies` indexes once per board, so that each
sampled hand is answered by a lookup rather than the engine's full walk."""

from __future__ import annotations

from collections.abc import Iterable

from ..qwirkle.board import DX, KINDS, STRIDE
from ..qwirkle.moves import Frontier, accepted_kinds, line_slots

ALL_KINDS = (1 << KINDS) - 1
COLOUR_KINDS: tuple[int, ...] = tuple(sum(1 << (c * 6 + s) for s in range(6)) for c in range(6))
"""Per colour: the bitmask of its six kinds."""
SHAPE_KINDS: tuple[int, ...] = tuple(sum(1 << (c * 6 + s) for c in range(6)) for s in range(6))
"""Per shape: the bitmask of its six kinds."""

Interval = tuple[int, int, tuple[tuple[int, ...], ...], int, int, int]
"""(points, tiles it takes, ways, line id, lo, hi) of a stretch of one line that a
placement of two or more tiles could fill. A way is one choice of the line's shared colour
or shape, as the kinds each empty cell may then take (its row and column both stay
valid); distinct kinds of one way always make a valid line, so a hand fills the stretch
if it holds distinct tiles, one per cell, of one way. lo .. hi are the cells the stretch
depends on: itself and the empty cell at each end."""
SPAN = 4
"""Intervals are listed for placements of up to this many tiles; a hand that could place
more in one line gets those longer placements from the engine's walk (rare)."""
_SUBSETS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(
        tuple(i for i in range(k) if bits >> i & 1)
        for bits in range(1, 1 << k)
        if bin(bits).count("1") >= 2
    )
    for k in range(SPAN + 1)
)
"""Per cell count: the index sets of two or more cells that Hall's condition checks."""


def row_line(p: int) -> int:
    """The id of the line through p along DX."""
    return p % STRIDE


def column_line(p: int) -> int:
    """The id of the line through p along DY."""
    return STRIDE + p // STRIDE


def fills(way: tuple[int, ...], have: int) -> bool:
    """Whether distinct kinds of `have` (a hand's kinds, as a bitmask) fill the cells of
    `way`, one each (Hall's condition: every set of cells accepts at least as many kinds
    as it has cells). m0, m1, m2: the hand's kinds the first three cells take."""
    m0 = way[0] & have
    if not m0:
        return False
    m1 = way[1] & have
    if not m1:
        return False
    size = len(way)
    if size == 2:
        return m0 != m1 or m0 & (m0 - 1) != 0
    m2 = way[2] & have
    if not m2:
        return False
    if size == 3:
        return (
            (m0 | m1 | m2).bit_count() >= 3
            and (m0 | m1).bit_count() >= 2
            and (m0 | m2).bit_count() >= 2
            and (m1 | m2).bit_count() >= 2
        )
    masks = [m0, m1, m2]
    for m in way[3:]:
        m &= have
        if not m:
            return False
        masks.append(m)
    for subset in _SUBSETS[size]:
        union = 0
        for i in subset:
            union |= masks[i]
        if union.bit_count() < len(subset):
            return False
    return True


def rank(interval: Interval) -> int:
    """The order `best` tries intervals in (highest first): by points, and among equal
    points the fewer tiles first, as a hand fills those more often (the answer is the
    same in any order of equals; this order reaches it sooner)."""
    return interval[0] * 8 - interval[1]


_WAYS: dict[tuple[tuple[int, ...], int, int], tuple[tuple[int, ...], ...]] = {}
"""Memo of `_ways` for lines of at most one tile (the same stretches recur all game)."""
WAYS_MEMO = 1 << 16
"""The memo is emptied when it holds this many entries."""


def _ways(
    cell_kinds: list[int], colours: int, shapes: int, count: int
) -> tuple[tuple[int, ...], ...]:
    """The ways to fill cells that take `cell_kinds` in a line holding `count` tiles with
    these colour and shape masks: by its colour or by its shape (both open for one tile or
    none; with two or more the line's own masks already fix which)."""
    if count >= 2:
        return (tuple(cell_kinds),)
    key = (tuple(cell_kinds), colours, shapes)
    out = _WAYS.get(key)
    if out is not None:
        return out
    if count == 0:  # the colours and shapes every cell has some kind of
        colours = shapes = 63
        for m in cell_kinds:
            shapes &= m | m >> 6 | m >> 12 | m >> 18 | m >> 24 | m >> 30
            colours &= (
                (m & 63 != 0)
                | (m >> 6 & 63 != 0) << 1
                | (m >> 12 & 63 != 0) << 2
                | (m >> 18 & 63 != 0) << 3
                | (m >> 24 & 63 != 0) << 4
                | (m >> 30 & 63 != 0) << 5
            )
    ways = []
    for colour in range(6):
        if colours >> colour & 1:
            way = tuple(m & COLOUR_KINDS[colour] for m in cell_kinds)
            if all(way):
                ways.append(way)
    for shape in range(6):
        if shapes >> shape & 1:
            way = tuple(m & SHAPE_KINDS[shape] for m in cell_kinds)
            if all(way):
                ways.append(way)
    out = tuple(ways)
    if len(_WAYS) >= WAYS_MEMO:
        _WAYS.clear()
    _WAYS[key] = out
    return out


def index_intervals(
    frontier: Frontier, starts: Iterable[int], step: int, out: list[Interval]
) -> None:
    """The intervals along `step` through an anchor of `starts`, onto `out`: the engine's
    `line_slots` of 2 to SPAN tiles, every kind open, whose cells each take some kind the
    line accepts in at least one way."""
    kinds = frontier.kinds
    cross_points = frontier.column_points if step == DX else frontier.row_points
    for points, first, last, empty, colours, shapes, count in line_slots(
        frontier.cells, starts, step, kinds, cross_points, SPAN
    ):
        line_accepts = accepted_kinds(colours, shapes, count)
        cell_kinds = [kinds.get(q, ALL_KINDS) & line_accepts for q in empty]
        if all(cell_kinds):
            ways = _ways(cell_kinds, colours, shapes, count)
            if ways:
                line = row_line(first) if step == DX else column_line(first)
                out.append((points, len(empty), ways, line, first - step, last + step))
