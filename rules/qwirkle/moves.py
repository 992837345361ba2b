"""The legal-move generator: every placement of a hand, with its points, fast enough for bots.

A placement is either one tile on an anchor (an empty cell next to the board), or two or
more tiles in one row or column. For the latter the placement fills every empty cell of
an interval [a, b] of that line whose outer neighbours a-1 and b+1 stay empty; the
interval always holds an anchor (that is what connects it). So the generator walks, from
each anchor, the possible left and right ends (at most 6 cells in all), and fills the
empty cells of each interval by backtracking over the hand's distinct tiles: a line never
holds one tile twice, so identical tiles of the hand give each placement once. A cell
that takes a tile must keep its perpendicular line valid; that check depends on the cell
and the tile only, so it is computed once per cell. A line is tested with two 6-bit masks
(board.LINE_N).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import combinations, permutations
from typing import Any

from .board import (
    CBIT,
    COLOR_OF,
    DX,
    DY,
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


def segment(cells: dict[int, int], p: int, d: int) -> tuple[int, int, int]:
    """Colour mask, shape mask and count of the tiles in line with empty cell p along d."""
    cm = sm = n = 0
    for step in (d, -d):
        q = p + step
        c = cells.get(q)
        while c is not None:
            cm |= CBIT[c]
            sm |= SBIT[c]
            n += 1
            q += step
            c = cells.get(q)
    return cm, sm, n


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
    k = largest_set(codes)
    if k == 0:
        return []
    if k == 1:
        return [(1, ((0, 0, t),)) for t in codes]
    groups: list[list[int]] = []
    for c in range(6):
        g = [t for t in codes if t // 6 == c]
        if len(g) >= k:
            groups.append(g)
    for s in range(6):
        g = [t for t in codes if t % 6 == s]
        if len(g) >= k:
            groups.append(g)
    points = line_points(k)
    zeros = (0,) * k
    spans = [range(-off, k - off) for off in range(k)]
    out: list[Move] = []
    for g in groups:
        for combo in combinations(g, k):
            for perm in permutations(combo):
                for span in spans:
                    out.append((points, tuple(zip(span, zeros, perm, strict=True))))
                    out.append((points, tuple(zip(zeros, span, perm, strict=True))))
    return out


def placements(board: Board, hand: Iterable[int]) -> list[Move]:
    """Every legal placement of `hand` on `board` with its points.

    On an empty board these are the openings (start rule: the hand's largest-set size,
    covering (0, 0)). Order: single tiles by cell, then rows, then columns.
    """
    cells = board.cells
    codes = sorted(set(hand))
    if not codes:
        return []
    if not cells:
        return openings(codes)
    anc = anchors(board)
    out: list[Move] = []
    line_n = LINE_N
    # Per anchor: the hand tiles it accepts (its row and its column both stay valid), and
    # the points of its row and of its column if a tile lands there.
    fits: dict[int, list[int]] = {}
    pts_col: dict[int, int] = {}
    pts_row: dict[int, int] = {}
    for p in anc:
        rcm, rsm, rn = segment(cells, p, DX)
        ccm, csm, cn = segment(cells, p, DY)
        rn += 1
        cn += 1
        fit = [
            t
            for t in codes
            if line_n[(rcm | CBIT[t]) << 6 | rsm | SBIT[t]] == rn
            and line_n[(ccm | CBIT[t]) << 6 | csm | SBIT[t]] == cn
        ]
        fits[p] = fit
        pr = line_points(rn)
        pc = line_points(cn)
        pts_row[p] = pr
        pts_col[p] = pc
        if fit:
            x, y = unpack(p)
            base = pr + pc
            for t in fit:
                out.append((base, ((x, y, t),)))
    most = largest_set(codes)
    if most >= 2:
        _lines(cells, codes, anc, DX, fits, pts_col, most, out)
        _lines(cells, codes, anc, DY, fits, pts_row, most, out)
    return out


def _lines(
    cells: dict[int, int],
    codes: list[int],
    anc: list[int],
    d: int,
    fit: dict[int, list[int]],
    perp_points: dict[int, int],
    most: int,
    out: list[Move],
) -> None:
    """Placements of 2..`most` tiles along step d (DX: a row, DY: a column)."""
    line_n = LINE_N
    for points, empty, cm, sm, n in line_slots(cells, codes, anc, d, fit, most):
        for q in empty:
            points += perp_points.get(q, 0)
        options = [fit.get(q, codes) for q in empty]
        if len(empty) == 2:
            o0, o1 = options
            q0, q1 = empty
            for t0 in o0:
                c0 = cm | CBIT[t0]
                s0 = sm | SBIT[t0]
                if line_n[c0 << 6 | s0] != n + 1:
                    continue
                for t1 in o1:
                    if line_n[(c0 | CBIT[t1]) << 6 | s0 | SBIT[t1]] == n + 2:
                        x0, y0 = unpack(q0)
                        x1, y1 = unpack(q1)
                        out.append((points, ((x0, y0, t0), (x1, y1, t1))))
        else:
            fill_line([unpack(q) for q in empty], options, cm, sm, n, points, out)


def line_slots(
    cells: dict[int, int],
    codes: list[int],
    anc: list[int],
    d: int,
    fit: dict[int, list[int]],
    most: int,
    least: int = 2,
) -> Iterator[tuple[int, list[int], int, int, int]]:
    """The stretches along step d through an anchor that `least`..`most` hand tiles could
    fill into one valid line: (the line's own points, its empty cells, the colour mask,
    shape mask and count of its board tiles). Each stretch once.

    `fit` maps an anchor to the hand tiles it accepts alone. A tile placed there in a
    longer placement must fit too: its perpendicular line is the same, and the board
    tiles next to it along d end up in its line. An empty cell that is not an anchor has
    no neighbour and accepts every tile. The board tiles of the stretch are checked with
    their masks; which hand tiles fill the empty cells is the caller's search.
    """
    line_n = LINE_N
    seen: set[int] = set()
    for p in anc:
        if not fit[p]:
            continue
        # Left ends: (a, cells from a to p, empty cells among them).
        lefts: list[tuple[int, int, int]] = []
        cur = p
        length = 1
        empties = 1
        while True:
            prev = cur - d
            if prev in cells:
                cur = prev
                length += 1
                if length > LINE_MAX:
                    break
                continue
            lefts.append((cur, length, empties))
            if length == LINE_MAX or empties == most or not fit.get(prev, codes):
                break
            cur = prev
            length += 1
            empties += 1
        # Right ends: (b, cells from p to b, empty cells among them but p).
        rights: list[tuple[int, int, int]] = []
        cur = p
        length = 1
        empties = 0
        while True:
            nxt = cur + d
            if nxt in cells:
                cur = nxt
                length += 1
                if length > LINE_MAX:
                    break
                continue
            rights.append((cur, length, empties))
            if length == LINE_MAX or empties + 1 == most or not fit.get(nxt, codes):
                break
            cur = nxt
            length += 1
            empties += 1
        for a, la, ea in lefts:
            for b, lb, eb in rights:
                total = la + lb - 1
                if total > LINE_MAX:
                    break
                k = ea + eb
                if k < least or k > most:
                    continue
                key = a * 4096 + total
                if key in seen:
                    continue
                seen.add(key)
                cm = sm = n = 0
                empty: list[int] = []
                q = a
                while q <= b:
                    c = cells.get(q)
                    if c is None:
                        empty.append(q)
                    else:
                        cm |= CBIT[c]
                        sm |= SBIT[c]
                        n += 1
                    q += d
                if line_n[cm << 6 | sm] == n:
                    yield line_points(total), empty, cm, sm, n


def fill_line(
    where: list[tuple[int, int]],
    options: list[list[int]],
    cm: int,
    sm: int,
    n: int,
    points: int,
    out: list[Move],
) -> None:
    """Every assignment of distinct hand tiles to the empty cells `where` of one line
    (`options[i]`: the tiles that may go in `where[i]`), each with `points`, onto `out`."""
    k = len(where)
    chosen = [0] * k
    line_n = LINE_N

    def rec(i: int, cm: int, sm: int, n: int) -> None:
        last = i == k - 1
        n += 1
        for t in options[i]:
            c2 = cm | CBIT[t]
            s2 = sm | SBIT[t]
            if line_n[c2 << 6 | s2] != n:
                continue
            chosen[i] = t
            if last:
                out.append((points, tuple((*where[j], chosen[j]) for j in range(k))))
            else:
                rec(i + 1, c2, s2, n)

    rec(0, cm, sm, n)


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
    codes = set(hand)
    if not codes:
        return False
    if not cells:
        return True
    for p in anchors(board):
        rcm, rsm, rn = segment(cells, p, DX)
        ccm, csm, cn = segment(cells, p, DY)
        for t in codes:
            if (
                LINE_N[(rcm | CBIT[t]) << 6 | rsm | SBIT[t]] == rn + 1
                and LINE_N[(ccm | CBIT[t]) << 6 | csm | SBIT[t]] == cn + 1
            ):
                return True
    return False


def best_placement(board: Board, hand: Iterable[int]) -> Move | None:
    """The highest-scoring placement (ties: the first generated), or None: a greedy bot."""
    best: Move | None = None
    for move in placements(board, hand):
        if best is None or move[0] > best[0]:
            best = move
    return best


__all__ = [
    "Move",
    "Placed",
    "anchors",
    "best_placement",
    "has_placement",
    "openings",
    "pack",
    "place_action",
    "placements",
]
