"""The legal-move generator: every placement of a hand, with its points, fast enough for bots.

A placement is either one tile on an anchor (an empty cell next to the board), or two or
more tiles in one row or column. For the latter the placement fills every empty cell of
a stretch [first, last] of that line whose outer neighbours stay empty; the stretch always
holds an anchor (that is what connects it). So the generator walks, from each anchor, the
possible first and last cells (at most 6 cells in all), and fills the empty cells of each
stretch by backtracking over the hand's distinct tiles: a line never holds one tile twice,
so identical tiles of the hand give each placement once. A cell that takes a tile must
keep its perpendicular line valid, and that line's points are the cell's too; both depend
on the cell only, so they are computed once per anchor. A line is tested with two 6-bit
masks (board.LINE_N).

The pieces are shared with the strong bot (rules/bots/qwirkle.py), which asks one board
about many hands and keeps an index of its own on top of them:

- `Frontier`: a board's anchors and what each accepts and scores; where a hand fits
  (`HandFit`); the hand's placements (`placements`) and its best one (`best_placement`,
  pruned by the best so far) from it.
- `line_slots`: the stretches of a row or column that a placement could fill, with their
  points.
- `fill_line`: distinct hand tiles that complete one stretch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import combinations, permutations
from typing import Any

from .board import (
    CBIT,
    COLOR_OF,
    DX,
    DY,
    KINDS,
    LINE_MAX,
    LINE_N,
    SBIT,
    SHAPE_OF,
    Board,
    largest_set,
    line_points,
    pack,
    unpack,
)

Placed = tuple[tuple[int, int, int], ...]
"""(x, y, code) tiles sorted by (x, y)."""
Move = tuple[int, Placed]
"""(points, tiles)."""
Slot = tuple[int, int, int, tuple[int, ...], int, int, int]
"""A stretch of one line that a placement could fill: (its points, its first and last
cells, its empty cells in order, the colour mask, shape mask and count of its tiles)."""


def segment(cells: dict[int, int], cell: int, step: int) -> tuple[int, int, int]:
    """Colour mask, shape mask and count of the tiles in line with the empty `cell` along
    `step` (DX: its row, DY: its column): the line a tile placed there joins."""
    colours = shapes = count = 0
    for direction in (step, -step):
        q = cell + direction
        code = cells.get(q)
        while code is not None:
            colours |= CBIT[code]
            shapes |= SBIT[code]
            count += 1
            q += direction
            code = cells.get(q)
    return colours, shapes, count


_ACCEPTED: dict[int, int] = {}
"""Memo of `accepted_kinds`: the same few line shapes recur all game."""


def accepted_kinds(colours: int, shapes: int, count: int) -> int:
    """Bitmask (bit t: kind t) of the tile kinds that extend a valid line of `count` tiles
    with these colour and shape masks by one."""
    key = count << 12 | colours << 6 | shapes
    kinds = _ACCEPTED.get(key)
    if kinds is None:
        kinds = 0
        longer = count + 1
        for code in range(KINDS):
            if LINE_N[(colours | CBIT[code]) << 6 | shapes | SBIT[code]] == longer:
                kinds |= 1 << code
        _ACCEPTED[key] = kinds
    return kinds


def kinds_mask(codes: Iterable[int]) -> int:
    """Bitmask (bit t: kind t) of the kinds among `codes`."""
    mask = 0
    for code in codes:
        mask |= 1 << code
    return mask


def anchors(board: Board) -> list[int]:
    """Empty packed cells next to a tile, sorted."""
    cells = board.cells
    out = set()
    for p in cells:
        for q in (p + DX, p - DX, p + DY, p - DY):
            if q not in cells:
                out.add(q)
    return sorted(out)


def openings(hand: Iterable[int]) -> list[Move]:
    """First moves of the game: a line of the hand's largest-set size covering (0, 0)."""
    codes = sorted(set(hand))
    size = largest_set(codes)
    if size == 0:
        return []
    if size == 1:
        return [(1, ((0, 0, code),)) for code in codes]
    groups: list[list[int]] = []
    for colour in range(6):
        group = [code for code in codes if code // 6 == colour]
        if len(group) >= size:
            groups.append(group)
    for shape in range(6):
        group = [code for code in codes if code % 6 == shape]
        if len(group) >= size:
            groups.append(group)
    points = line_points(size)
    zeros = (0,) * size
    spans = [range(-offset, size - offset) for offset in range(size)]
    out: list[Move] = []
    for group in groups:
        for combo in combinations(group, size):
            for order in permutations(combo):
                for span in spans:
                    out.append((points, tuple(zip(span, zeros, order, strict=True))))
                    out.append((points, tuple(zip(zeros, span, order, strict=True))))
    return out


class Frontier:
    """A board's anchors and, per anchor, what a tile placed there must be and scores.

    Every placement starts from these facts, and they depend on the board alone: the
    engine measures them once per call of `placements`, the strong bot once per board it
    looks at (deriving them for the board after a candidate move) and then asks about many
    hands. `measure` computes the facts of the anchors it is given, in that order: the
    order in which the placements of a hand are generated.
    """

    __slots__ = ("cells", "column_points", "kinds", "row_points")

    def __init__(self, cells: dict[int, int], anchor_cells: Iterable[int] = ()) -> None:
        self.cells = cells
        """The board's tiles by packed cell."""
        self.kinds: dict[int, int] = {}
        """Per anchor: bitmask of the tile kinds its row and its column both accept."""
        self.row_points: dict[int, int] = {}
        """Per anchor: the points of its row once a tile lands there (0 for a lone tile)."""
        self.column_points: dict[int, int] = {}
        """Per anchor: the points of its column once a tile lands there."""
        self.measure(anchor_cells)

    @classmethod
    def of(cls, board: Board) -> Frontier:
        """The facts of every anchor of `board`, in cell order."""
        return cls(board.cells, anchors(board))

    def measure(self, anchor_cells: Iterable[int]) -> None:
        """Compute (or recompute) the facts of these anchors."""
        cells = self.cells
        kinds = self.kinds
        row_points = self.row_points
        column_points = self.column_points
        for p in anchor_cells:
            row_colours, row_shapes, row_count = segment(cells, p, DX)
            column_colours, column_shapes, column_count = segment(cells, p, DY)
            kinds[p] = accepted_kinds(row_colours, row_shapes, row_count) & accepted_kinds(
                column_colours, column_shapes, column_count
            )
            row_points[p] = line_points(row_count + 1)
            column_points[p] = line_points(column_count + 1)

    def fit(self, codes: list[int]) -> HandFit:
        """Where the tiles of a hand (`codes`: its kinds, distinct and sorted) fit."""
        have = kinds_mask(codes)
        fits: dict[int, list[int]] = {}
        starts: list[int] = []
        none: list[int] = []
        for p, kinds in self.kinds.items():
            if kinds & have:
                fits[p] = [code for code in codes if kinds >> code & 1]
                starts.append(p)
            else:
                fits[p] = none
        return HandFit(codes, fits, starts)

    def placements(self, hand: Iterable[int]) -> list[Move]:
        """Every legal placement of `hand` with its points: on an empty board the openings,
        else single tiles by anchor, then rows, then columns."""
        codes = sorted(set(hand))
        if not codes:
            return []
        if not self.cells:
            return openings(codes)
        fit = self.fit(codes)
        fits = fit.fits
        row_points = self.row_points
        column_points = self.column_points
        out: list[Move] = []
        for p in fit.starts:
            x, y = unpack(p)
            points = row_points[p] + column_points[p]
            for code in fits[p]:
                out.append((points, ((x, y, code),)))
        if fit.most >= 2:
            self._line_placements(fit, DX, out)
            self._line_placements(fit, DY, out)
        return out

    def _line_placements(self, fit: HandFit, step: int, out: list[Move]) -> None:
        """Placements of two or more tiles along `step` (DX: in a row, DY: in a column)
        onto `out`. A stretch of two empty cells, the most common, is filled right here."""
        line_n = LINE_N
        codes = fit.codes
        fits = fit.fits
        cross_points = self.column_points if step == DX else self.row_points
        for points, _, _, empty, colours, shapes, count in line_slots(
            self.cells, fit.starts, step, fits, cross_points, fit.most
        ):
            if len(empty) == 2:
                first_cell, second_cell = empty
                once = count + 1
                twice = count + 2
                for first in fits.get(first_cell, codes):
                    colours1 = colours | CBIT[first]
                    shapes1 = shapes | SBIT[first]
                    if line_n[colours1 << 6 | shapes1] != once:
                        continue
                    for second in fits.get(second_cell, codes):
                        if line_n[(colours1 | CBIT[second]) << 6 | shapes1 | SBIT[second]] == twice:
                            x0, y0 = unpack(first_cell)
                            x1, y1 = unpack(second_cell)
                            out.append((points, ((x0, y0, first), (x1, y1, second))))
            else:
                options = [fits.get(q, codes) for q in empty]
                fill_line(empty, options, colours, shapes, count, points, out)

    def best_placement(self, hand: Iterable[int]) -> Move | None:
        """The highest-scoring placement of `hand` (ties: the first `placements` gives),
        or None; without generating the others."""
        codes = sorted(set(hand))
        if not codes:
            return None
        if not self.cells:
            return max(openings(codes), key=_points)
        fit = self.fit(codes)
        fits = fit.fits
        row_points = self.row_points
        column_points = self.column_points
        best: Move | None = None
        for p in fit.starts:
            points = row_points[p] + column_points[p]
            if best is None or points > best[0]:
                best = (points, ((*unpack(p), fits[p][0]),))
        if fit.most >= 2:
            line = self.best_line_placement(fit, 0 if best is None else best[0])
            if line is not None:
                best = line
        return best

    def best_line_placement(self, fit: HandFit, beat: int, least: int = 2) -> Move | None:
        """Of the hand's placements of `least` or more tiles in one row or column, the first
        generated of the highest-scoring, if it scores more than `beat`. A stretch that
        cannot score more than the best so far is never filled, and a fillable one is
        filled once: this is what makes it cheaper than the best of `placements`."""
        found: list[Move] = []
        codes = fit.codes
        fits = fit.fits
        for step, cross_points in ((DX, self.column_points), (DY, self.row_points)):
            for points, _, _, empty, colours, shapes, count in line_slots(
                self.cells, fit.starts, step, fits, cross_points, fit.most, least
            ):
                if points > beat:
                    options = [fits.get(q, codes) for q in empty]
                    if fill_line(empty, options, colours, shapes, count, points, found, True):
                        beat = points
        return found[-1] if found else None


class HandFit:
    """Where the tiles of one hand fit on a `Frontier`: what its placements start from."""

    __slots__ = ("codes", "fits", "most", "starts")

    def __init__(self, codes: list[int], fits: dict[int, list[int]], starts: list[int]) -> None:
        self.codes = codes
        """The hand's kinds, distinct and sorted: what an empty cell that is no anchor takes."""
        self.fits = fits
        """Per anchor: the hand's kinds it accepts (an empty list: none)."""
        self.starts = starts
        """The anchors that accept some, in the frontier's order."""
        self.most = largest_set(codes)
        """The most tiles of the hand that one line can take (its largest set)."""


def _points(move: Move) -> int:
    return move[0]


def placements(board: Board, hand: Iterable[int]) -> list[Move]:
    """Every legal placement of `hand` on `board` with its points.

    On an empty board these are the openings (start rule: the hand's largest-set size,
    covering (0, 0)). Order: single tiles by cell, then rows, then columns.
    """
    return Frontier.of(board).placements(hand)


def line_slots(
    cells: dict[int, int],
    starts: Iterable[int],
    step: int,
    open_cells: Mapping[int, object],
    cross_points: Mapping[int, int],
    most: int,
    least: int = 2,
) -> Iterator[Slot]:
    """The stretches along `step` (DX: of a row, DY: of a column) through an anchor of
    `starts` that `least`..`most` tiles could fill into one valid line, each once.

    A stretch's outer neighbours are empty, it holds at most 6 cells, its board tiles form
    a valid line and each of its empty cells is open: an anchor is open if `open_cells`
    says so (the generator passes the hand's tiles that fit it, the bot the kinds it
    accepts); an empty cell that is not an anchor has no neighbour and is always open. Its
    points are those of its line plus `cross_points` of its empty cells (the line across
    each). Which tiles fill the empty cells is the caller's search.

    Order: by start, then by first cell (nearest first), then by last cell (nearest
    first). A stretch through several starts comes from the first of them: a walk stops
    before a start walked already, as that start gave every stretch through it.
    """
    line_n = LINE_N
    done: set[int] = set()
    for p in starts:
        # The possible first cells, nearest first, each with what lies from it to p (p
        # aside): (first, cells from first to p, empty cells among them with p, the colour
        # mask, shape mask and count of their tiles, their empty cells' cross points, those
        # empty cells in order). Past tiles that cannot share a line, no first is valid.
        firsts: list[tuple[int, int, int, int, int, int, int, tuple[int, ...]]] = []
        cur = p
        length = 1
        empties = 1
        colours = shapes = count = cross = 0
        empty: tuple[int, ...] = ()
        while True:
            before = cur - step
            code = cells.get(before)
            if code is not None:
                cur = before
                length += 1
                colours |= CBIT[code]
                shapes |= SBIT[code]
                count += 1
                if length > LINE_MAX or line_n[colours << 6 | shapes] != count:
                    break
                continue
            firsts.append((cur, length, empties, colours, shapes, count, cross, empty))
            if (
                length == LINE_MAX
                or empties == most
                or not open_cells.get(before, True)
                or before in done
            ):
                break
            cur = before
            length += 1
            empties += 1
            cross += cross_points.get(before, 0)
            empty = (before, *empty)
        # The possible last cells, nearest first, the same from p to each (empty cells
        # without p).
        lasts: list[tuple[int, int, int, int, int, int, int, tuple[int, ...]]] = []
        cur = p
        length = 1
        empties = 0
        colours = shapes = count = cross = 0
        empty = ()
        while True:
            after = cur + step
            code = cells.get(after)
            if code is not None:
                cur = after
                length += 1
                colours |= CBIT[code]
                shapes |= SBIT[code]
                count += 1
                if length > LINE_MAX or line_n[colours << 6 | shapes] != count:
                    break
                continue
            lasts.append((cur, length, empties, colours, shapes, count, cross, empty))
            if (
                length == LINE_MAX
                or empties + 1 == most
                or not open_cells.get(after, True)
                or after in done
            ):
                break
            cur = after
            length += 1
            empties += 1
            cross += cross_points.get(after, 0)
            empty = (*empty, after)
        done.add(p)
        own_cross = cross_points.get(p, 0)
        for (
            first,
            first_length,
            first_empties,
            first_colours,
            first_shapes,
            first_count,
            first_cross,
            first_empty,
        ) in firsts:
            for (
                last,
                last_length,
                last_empties,
                last_colours,
                last_shapes,
                last_count,
                last_cross,
                last_empty,
            ) in lasts:
                total = first_length + last_length - 1
                if total > LINE_MAX:
                    break
                filled = first_empties + last_empties
                if filled < least or filled > most:
                    continue
                colours = first_colours | last_colours
                shapes = first_shapes | last_shapes
                count = first_count + last_count
                if line_n[colours << 6 | shapes] == count:
                    yield (
                        line_points(total) + own_cross + first_cross + last_cross,
                        first,
                        last,
                        (*first_empty, p, *last_empty),
                        colours,
                        shapes,
                        count,
                    )


def fill_line(
    empty: Sequence[int],
    options: list[list[int]],
    colours: int,
    shapes: int,
    count: int,
    points: int,
    out: list[Move],
    first: bool = False,
) -> bool:
    """Every assignment of distinct hand tiles to the `empty` cells of one line (whose
    tiles have these colour and shape masks and count; `options[i]`: the tiles that may go
    in `empty[i]`), each with `points`, onto `out`; with `first`, only the first one.
    Whether there was one. Backtracking over the line's masks: a tile the line holds
    already never fits again, so each assignment comes once."""
    size = len(empty)
    where = [unpack(q) for q in empty]
    chosen = [0] * size
    line_n = LINE_N

    def place(i: int, colours: int, shapes: int, count: int) -> bool:
        last = i == size - 1
        count += 1
        found = False
        for code in options[i]:
            colours2 = colours | CBIT[code]
            shapes2 = shapes | SBIT[code]
            if line_n[colours2 << 6 | shapes2] != count:
                continue
            chosen[i] = code
            if last:
                out.append((points, tuple((*where[j], chosen[j]) for j in range(size))))
            elif not place(i + 1, colours2, shapes2, count):
                continue
            if first:
                return True
            found = True
        return found

    return place(0, colours, shapes, count)


def place_action(tiles: Placed) -> dict[str, Any]:
    """The wire action of a generated placement: {"type": "place", "tiles": [...]}."""
    co = COLOR_OF
    sh = SHAPE_OF
    return {
        "type": "place",
        "tiles": [{"color": co[c], "shape": sh[c], "x": x, "y": y} for x, y, c in tiles],
    }


def has_placement(board: Board, hand: Iterable[int]) -> bool:
    """Whether any placement is legal: a multi-tile one implies a single one on its anchor."""
    cells = board.cells
    have = kinds_mask(hand)
    if not have:
        return False
    if not cells:
        return True
    for p in anchors(board):
        if have & accepted_kinds(*segment(cells, p, DX)) & accepted_kinds(*segment(cells, p, DY)):
            return True
    return False


def best_placement(board: Board, hand: Iterable[int]) -> Move | None:
    """The highest-scoring placement (ties: the first generated), or None: a greedy bot."""
    return Frontier.of(board).best_placement(hand)


__all__ = [
    "Frontier",
    "HandFit",
    "Move",
    "Placed",
    "accepted_kinds",
    "anchors",
    "best_placement",
    "fill_line",
    "has_placement",
    "kinds_mask",
    "line_slots",
    "openings",
    "pack",
    "place_action",
    "placements",
    "segment",
]
