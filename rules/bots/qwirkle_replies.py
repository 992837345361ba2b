"""`Replies`: the best placements of many hands on one board, and of the board after a
candidate move, equal to the engine's but computed once per board (the strong bot asks
it for every sampled hand of every candidate)."""

from __future__ import annotations

from collections.abc import Sequence

from ..qwirkle.board import DX, DY, STRIDE, Board, largest_set, line_points, pack
from ..qwirkle.moves import Frontier, Move, kinds_mask
from .qwirkle_intervals import (
    SPAN,
    Interval,
    column_line,
    fills,
    index_intervals,
    rank,
    row_line,
)


class Replies:
    """Best placements of many hands on one board.

    The engine's `Frontier` holds what every hand starts from: the board's anchors, the
    kinds each accepts and the points of its lines. On top of it, what depends on the board
    only is indexed once: the anchors by the points a tile there scores, and every interval
    of a row or column that two to SPAN tiles could fill (the engine's `line_slots` with
    every kind open), with the kinds each of its cells may take, sorted by the points they
    would score. A hand then needs its best single tile and the first interval, best
    first, that it can fill. `after` derives all of it for the board after a placement,
    recomputing only what the placement touches.
    """

    __slots__ = ("board", "frontier", "intervals", "lines", "singles")

    def __init__(self, board: Board, *, lines: bool = True, derived: bool = False) -> None:
        self.board = board
        cells = board.cells
        self.frontier = Frontier(cells) if derived else Frontier.of(board)
        self.singles: list[tuple[int, int]] = []
        """(points of a tile there, anchor), best first, for the anchors that take some kind."""
        self.intervals: list[Interval] = []
        self.lines = lines
        """Whether `singles` and `intervals` are computed (`best` needs them)."""
        if derived or not cells or not lines:
            return
        frontier = self.frontier
        row_points = frontier.row_points
        column_points = frontier.column_points
        starts = [p for p, kinds in frontier.kinds.items() if kinds]
        self.singles = [(row_points[p] + column_points[p], p) for p in starts]
        self.singles.sort(reverse=True)
        index_intervals(frontier, starts, DX, self.intervals)
        index_intervals(frontier, starts, DY, self.intervals)
        self.intervals.sort(key=rank, reverse=True)

    def after(self, placed: Sequence[tuple[int, int, int]], *, lines: bool = True) -> Replies:
        """The same for the board after `placed`. Only the anchors at the ends of the lines
        through a placed tile change (the changed anchors; they and the placed cells are
        touched); only the intervals on or next to a placed tile, or holding a changed
        anchor, change. Without `lines`, the anchors only: enough for `moves` and `after`,
        not for `best`."""
        before = self.frontier
        cells = dict(before.cells)
        placed_cells: list[int] = []
        for x, y, code in placed:
            p = pack(x, y)
            cells[p] = code
            placed_cells.append(p)
        board = Board(cells)
        if not before.cells:
            return Replies(board, lines=lines and self.lines)
        out = Replies(board, derived=True)
        changed: set[int] = set()
        for q in placed_cells:
            for step in (DX, -DX, DY, -DY):
                r = q + step
                while r in cells:
                    r += step
                changed.add(r)
        frontier = out.frontier
        kinds = frontier.kinds = dict(before.kinds)
        row_points = frontier.row_points = dict(before.row_points)
        column_points = frontier.column_points = dict(before.column_points)
        for q in placed_cells:
            kinds.pop(q, None)
            row_points.pop(q, None)
            column_points.pop(q, None)
        frontier.measure(changed)
        if not lines or not self.lines:
            out.lines = False
            return out
        touched = changed.union(placed_cells)
        singles = [item for item in self.singles if item[1] not in touched]
        singles.extend((row_points[p] + column_points[p], p) for p in changed if kinds[p])
        singles.sort(reverse=True)
        out.singles = singles
        near: dict[int, tuple[list[int], list[int]]] = {}  # line id: placed, changed cells
        for p in placed_cells:
            for line in (row_line(p), column_line(p)):
                near.setdefault(line, ([], []))[0].append(p)
        for p in changed:
            for line in (row_line(p), column_line(p)):
                near.setdefault(line, ([], []))[1].append(p)
        # An interval stays unless a tile now stands on it or next to it, or one of its
        # cells is a changed anchor; an interval that borders a changed anchor is the same
        # as before (its cells, their kinds and its empty ends are).
        fresh: list[Interval] = []
        for interval in self.intervals:
            hits = near.get(interval[3])
            if hits is not None:
                lo = interval[4]
                hi = interval[5]
                if any(lo <= g <= hi for g in hits[0]) or any(lo < g < hi for g in hits[1]):
                    continue
            fresh.append(interval)
        # The intervals of the new board that hold a changed anchor or a placed tile: a
        # placed tile's run ends in a changed anchor on each side, and an interval (two
        # or more empty cells, empty cells at its ends) holds at least one of them.
        for line, (_, anchors_on_line) in near.items():
            starts = [p for p in anchors_on_line if kinds[p]]
            if starts:
                index_intervals(frontier, starts, DX if line < STRIDE else DY, fresh)
        fresh.sort(key=rank, reverse=True)
        out.intervals = fresh
        return out

    def best(self, hand: Sequence[int]) -> int:
        """Points of the best placement of `hand` (0 if none): equal to
        `rules.qwirkle.best_placement(board, hand)[0]`, which the tests check."""
        assert self.lines, "best needs the lines"
        have = kinds_mask(hand)
        if not have:
            return 0
        most = largest_set(hand)
        frontier = self.frontier
        if not frontier.cells:
            return 1 if most == 1 else line_points(most)
        best = 0
        kinds = frontier.kinds
        for points, p in self.singles:
            if kinds[p] & have:
                best = points
                break
        for points, size, ways, _, _, _ in self.intervals:
            if points <= best:
                break
            if size > most:
                continue
            # `fills`, unrolled for two and three cells (the hot loop): m0, m1, m2 are the
            # hand's kinds that the first, second and third cell of a way take.
            for way in ways:
                m0 = way[0] & have
                if not m0:
                    continue
                m1 = way[1] & have
                if not m1:
                    continue
                if size == 2:
                    if m0 != m1 or m0 & (m0 - 1):
                        break
                    continue
                m2 = way[2] & have
                if not m2:
                    continue
                if size == 3:
                    if (
                        (m0 | m1 | m2).bit_count() >= 3
                        and (m0 | m1).bit_count() >= 2
                        and (m0 | m2).bit_count() >= 2
                        and (m1 | m2).bit_count() >= 2
                    ):
                        break
                    continue
                if fills(way, have):
                    break
            else:
                continue  # no way fills it
            best = points
            break
        if most > SPAN:
            # Placements of more than SPAN tiles in one line are not indexed: the engine's
            # walk, filling only the stretches of that many cells that could beat `best`.
            fit = frontier.fit(sorted(set(hand)))
            longer = frontier.best_line_placement(fit, best, least=SPAN + 1)
            if longer is not None:
                best = longer[0]
        return best

    def moves(self, hand: Sequence[int]) -> list[Move]:
        """Every placement of `hand` with its points: `rules.qwirkle.placements`, from the
        anchor facts computed once (single tiles in the order the anchors were measured)."""
        return self.frontier.placements(hand)

    def best_move(self, hand: Sequence[int]) -> Move | None:
        """A placement of `hand` with the most points, or None: what the greedy baseline
        plays (up to its choice between equals)."""
        return self.frontier.best_placement(hand)


def best_points(board: Board, hand: Sequence[int]) -> int:
    """The points of the best placement of `hand` on `board` (0 if none)."""
    return Replies(board).best(hand)
