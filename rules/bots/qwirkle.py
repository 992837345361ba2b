"""The strong Qwirkle bot: greedy, plus what a move leaves in the hand and on the board.

A placement is worth

    points + LEAVE x synergy(tiles kept) - REPLY x (the next seat's expected best reply)
           + OWN x (this seat's expected best next placement)

Both expectations are measured on the board after the move, not guessed. The bot deals
the tiles it cannot see (the bag and the other hands, known from the view) into sample
hands for the next seat, and into sample refills of its own kept tiles (as many as the
bag can give), and finds each hand's best placement. The same samples serve every
candidate, so candidates are compared on the same luck. The own term is what values a
leave on the board: tiles that fit a spot the move opens, a line only this seat can
finish. Only the best few candidates by points and synergy are examined that closely.

`Replies` makes this affordable. What depends on the board alone is computed once: the
anchors, the kinds each accepts, the points of their lines, and the intervals of a row or
column that two to SPAN tiles could fill, each with the kinds its cells take, best first.
A hand then needs its best single tile and the first interval it can fill (Hall's
condition on the cells' kinds); `after` derives the board after a candidate, recomputing
only the anchors and intervals the candidate touches. Its results equal the engine's
`best_placement` and `placements` (the tests check it).

Synergy counts pairs of kept tiles that could share a line (same colour or same shape),
minus duplicates (they never can), above what as many random tiles would give.

Once the bag is empty in a duel the other hand is exactly the unseen tiles, so the bot
searches: each candidate, the other seat's best-scoring reply (what the greedy baseline
plays), its own answers, and so on, deepening the best candidates while a fixed budget
lasts (counted in work, not time, so decisions repeat), with the 6 points and the end
of going out; a finished game's result counts above any margin. Without any placement
it swaps the tiles outside its biggest colour or shape group.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..base import JSON
from ..qwirkle.board import (
    CBIT,
    COPIES,
    DX,
    DY,
    END_BONUS,
    HAND_SIZE,
    KINDS,
    LINE_MAX,
    LINE_N,
    SBIT,
    STRIDE,
    Board,
    line_points,
    pack,
    tile_json,
    unpack,
)
from ..qwirkle.moves import (
    Move,
    Placed,
    anchors,
    fill_line,
    line_slots,
    openings,
    placements,
    segment,
)
from .base import Bot, register
from .greedy import qwirkle_match
from .views import qwirkle_board, qwirkle_hand

LEAVE = 0.15
"""Points per unit of synergy of the tiles kept."""
REPLY = 1.0
"""How much of the next seat's expected best reply a move is charged."""
OWN = 0.8
"""How much of this seat's own expected best next placement a move is credited with."""
SAMPLES = 16
"""Sample hands of the next seat, and sample refills of this seat's hand, per decision."""
CANDIDATES = 10
"""Placements examined with sampled replies (at most)."""
CLOSE = 12.0
"""Only placements within this many points of the best are examined that closely."""
ENDGAME_CANDIDATES = 12
"""Placements searched (with every way out) once the bag is empty."""
ENDGAME_DEPTH = 3
"""Own moves searched after each of them, at most."""
ENDGAME_WIDTH = 4
"""Candidates searched again one own move deeper (the best so far)."""
ENDGAME_INNER = 4
"""Placements searched (with every way out) at the deeper own moves."""
ENDGAME_NODES = 250
"""Endgame search budget: a hand's placements cost a unit per tile."""
SURE = 1000.0
"""What a finished game's win (or loss) is worth above any margin."""


PAIR_CHANCE = 10 / 35
"""Chance that two random tiles could share a line (same colour or shape, not equal)."""


def synergy(hand: Sequence[int]) -> float:
    """Pairs of kept tiles that could share a line, minus duplicates, above what as many
    random tiles would give (so keeping more tiles is not a merit in itself)."""
    n = len(hand)
    total = -PAIR_CHANCE * n * (n - 1) / 2
    for i in range(n):
        a = hand[i]
        for j in range(i + 1, n):
            b = hand[j]
            if a == b:
                total -= 1.0
            elif a // 6 == b // 6 or a % 6 == b % 6:
                total += 1.0
    return total


def unseen_counts(board: Board, hand: Sequence[int]) -> list[int]:
    """Per kind, the copies this seat cannot see (in the bag or in other hands)."""
    counts = [COPIES] * KINDS
    for code in board.cells.values():
        counts[code] -= 1
    for code in hand:
        counts[code] -= 1
    return [max(0, c) for c in counts]


def unseen_tiles(board: Board, hand: Sequence[int]) -> list[int]:
    """The tiles this seat cannot see, as one multiset."""
    counts = unseen_counts(board, hand)
    return [code for code in range(KINDS) for _ in range(counts[code])]


_ACCEPTS: dict[tuple[int, int, int], int] = {}


def _accepts(cm: int, sm: int, n: int) -> int:
    """Bitmask of the kinds that extend a line of n tiles with these masks by one."""
    key = (cm, sm, n)
    mask = _ACCEPTS.get(key)
    if mask is None:
        mask = 0
        for t in range(KINDS):
            if LINE_N[(cm | CBIT[t]) << 6 | sm | SBIT[t]] == n + 1:
                mask |= 1 << t
        _ACCEPTS[key] = mask
    return mask


ALL_KINDS = (1 << KINDS) - 1
COLOUR_KINDS: tuple[int, ...] = tuple(sum(1 << (c * 6 + s) for s in range(6)) for c in range(6))
SHAPE_KINDS: tuple[int, ...] = tuple(sum(1 << (c * 6 + s) for c in range(6)) for s in range(6))

Interval = tuple[int, int, tuple[tuple[int, ...], ...], int, int, int]
"""(points, tiles it takes, ways, line id, lo, hi) of a stretch of one line that a
placement of two or more tiles could fill. A way is one choice of the line's shared colour
or shape, as the kinds each empty cell may then take (its row and column both stay
valid); distinct kinds of one way always make a valid line, so a hand fills the stretch
if it holds distinct tiles, one per cell, of one way. lo .. hi are the cells the stretch
depends on: itself and the empty cell at each end."""
SPAN = 4
"""Intervals are listed for placements of up to this many tiles; a hand that could place
more in one line gets those longer placements from a walk (rare)."""
_SUBSETS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(
        tuple(i for i in range(k) if bits >> i & 1)
        for bits in range(1, 1 << k)
        if bin(bits).count("1") >= 2
    )
    for k in range(SPAN + 1)
)
"""Per cell count: the index sets of two or more cells that Hall's condition checks."""


def _row(p: int) -> int:
    """The id of the line through p along DX."""
    return p % STRIDE


def _col(p: int) -> int:
    """The id of the line through p along DY."""
    return STRIDE + p // STRIDE


def _largest(codes: Iterable[int]) -> int:
    """`largest_set` of distinct codes."""
    colours = [0] * 6
    shapes = [0] * 6
    for t in codes:
        colours[t // 6] += 1
        shapes[t % 6] += 1
    return max(max(colours), max(shapes))


def _fill(way: tuple[int, ...], have: int) -> bool:
    """Whether distinct kinds of `have` fill the cells of `way`, one each (Hall's condition:
    every set of cells accepts at least as many kinds as it has cells)."""
    m0 = way[0] & have
    if not m0:
        return False
    m1 = way[1] & have
    if not m1:
        return False
    k = len(way)
    if k == 2:
        return m0 != m1 or m0 & (m0 - 1) != 0
    m2 = way[2] & have
    if not m2:
        return False
    if k == 3:
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
    for subset in _SUBSETS[k]:
        union = 0
        for i in subset:
            union |= masks[i]
        if union.bit_count() < len(subset):
            return False
    return True


class Replies:
    """Best placements of many hands on one board.

    What depends on the board only is computed once: its anchors, the kinds each anchor
    accepts, the points of its lines, and every interval of a row or column that two or
    more tiles could fill (the intervals the engine's generator walks), with the kinds
    each of its cells may take, sorted by the points they would score. A hand then needs
    its best single tile and the first interval, best first, that it can fill. `after`
    derives the board after a placement, recomputing only what the placement touches.
    """

    __slots__ = ("board", "cells", "intervals", "lines", "pts_col", "pts_row", "single", "takes")

    def __init__(self, board: Board, *, lines: bool = True, derived: bool = False) -> None:
        self.board = board
        self.cells = cells = board.cells
        self.takes: dict[int, int] = {}
        """Per anchor: bitmask of the tile kinds its row and column both accept."""
        self.pts_row: dict[int, int] = {}
        self.pts_col: dict[int, int] = {}
        self.single: list[tuple[int, int]] = []
        """(points of a tile there, anchor), best first."""
        self.intervals: list[Interval] = []
        self.lines = lines
        """Whether `single` and `intervals` are computed (`best` needs them)."""
        if derived or not cells:
            return
        for p in anchors(board):
            self._anchor(p)
        if not lines:
            return
        pts_row = self.pts_row
        pts_col = self.pts_col
        self.single = [(pts_row[p] + pts_col[p], p) for p, mask in self.takes.items() if mask]
        self.single.sort(reverse=True)
        spans: dict[int, tuple[int, int]] = {}
        for p in self.takes:
            for line in (_row(p), _col(p)):
                lo, hi = spans.get(line, (p, p))
                spans[line] = (min(lo, p), max(hi, p))
        for line, (lo, hi) in spans.items():
            if line < STRIDE:
                _scan(cells, self.takes, DX, pts_col, lo - 5 * DX, hi, None, self.intervals)
            else:
                _scan(cells, self.takes, DY, pts_row, lo - 5 * DY, hi, None, self.intervals)
        self.intervals.sort(key=_first, reverse=True)

    def _anchor(self, p: int) -> None:
        cells = self.cells
        rcm, rsm, rn = segment(cells, p, DX)
        ccm, csm, cn = segment(cells, p, DY)
        self.takes[p] = _accepts(rcm, rsm, rn) & _accepts(ccm, csm, cn)
        self.pts_row[p] = line_points(rn + 1)
        self.pts_col[p] = line_points(cn + 1)

    def after(self, placed: Sequence[tuple[int, int, int]], *, lines: bool = True) -> Replies:
        """The same for the board after `placed`. Only the anchors at the ends of the lines
        through a placed tile change (call them and the placed cells touched), and only
        the intervals whose cells or end cells include a touched one. Without `lines`,
        the anchors only: enough for `moves` and `after`, not for `best`."""
        cells = dict(self.cells)
        new: list[int] = []
        for x, y, code in placed:
            p = pack(x, y)
            cells[p] = code
            new.append(p)
        board = Board(cells)
        if not self.cells:
            return Replies(board, lines=lines and self.lines)
        out = Replies(board, derived=True)
        changed: set[int] = set()
        for q in new:
            for step in (DX, -DX, DY, -DY):
                r = q + step
                while r in cells:
                    r += step
                changed.add(r)
        takes = out.takes = dict(self.takes)
        pts_row = out.pts_row = dict(self.pts_row)
        pts_col = out.pts_col = dict(self.pts_col)
        for q in new:
            takes.pop(q, None)
            pts_row.pop(q, None)
            pts_col.pop(q, None)
        for p in changed:
            out._anchor(p)
        if not lines or not self.lines:
            out.lines = False
            return out
        touched = changed.union(new)
        single = [item for item in self.single if item[1] not in touched]
        single.extend((pts_row[p] + pts_col[p], p) for p in changed if takes[p])
        single.sort(reverse=True)
        out.single = single
        near: dict[int, list[int]] = {}
        for p in touched:
            near.setdefault(_row(p), []).append(p)
            near.setdefault(_col(p), []).append(p)
        fresh: list[Interval] = []
        for iv in self.intervals:
            hits = near.get(iv[3])
            if hits is not None:
                lo = iv[4]
                hi = iv[5]
                if any(lo <= g <= hi for g in hits):
                    continue
            fresh.append(iv)
        for line, hits in near.items():
            lo = min(hits)
            hi = max(hits)
            if line < STRIDE:
                _scan(cells, takes, DX, pts_col, lo - 6 * DX, hi + DX, hits, fresh)
            else:
                _scan(cells, takes, DY, pts_row, lo - 6 * DY, hi + DY, hits, fresh)
        fresh.sort(key=_first, reverse=True)
        out.intervals = fresh
        return out

    def best(self, hand: Sequence[int]) -> int:
        """Points of the best placement of `hand` (0 if none): equal to
        `rules.qwirkle.best_placement(board, hand)[0]`, which the tests check."""
        assert self.lines, "best needs the lines"
        codes = set(hand)
        if not codes:
            return 0
        most = _largest(codes)
        if not self.cells:
            return 1 if most == 1 else line_points(most)
        have = 0
        for t in codes:
            have |= 1 << t
        best = 0
        takes = self.takes
        for points, p in self.single:
            if takes[p] & have:
                best = points
                break
        for points, k, ways, _, _, _ in self.intervals:
            if points <= best:
                break
            if k > most:
                continue
            for way in ways:  # `_fill`, unrolled for two and three cells: the hot loop
                m0 = way[0] & have
                if not m0:
                    continue
                m1 = way[1] & have
                if not m1:
                    continue
                if k == 2:
                    if m0 != m1 or m0 & (m0 - 1):
                        break
                    continue
                m2 = way[2] & have
                if not m2:
                    continue
                if k == 3:
                    if (
                        (m0 | m1 | m2).bit_count() >= 3
                        and (m0 | m1).bit_count() >= 2
                        and (m0 | m2).bit_count() >= 2
                        and (m1 | m2).bit_count() >= 2
                    ):
                        break
                    continue
                if _fill(way, have):
                    break
            else:
                continue  # no way fills it
            best = points
            break
        if most > SPAN:
            return self._long(sorted(codes), most, best)
        return best

    def moves(self, hand: Sequence[int]) -> list[Move]:
        """Every placement of `hand` with its points, as `rules.qwirkle.placements` gives
        them (in another order) but from the board facts computed once."""
        codes = sorted(set(hand))
        if not codes:
            return []
        if not self.cells:
            return openings(codes)
        fits, starts = self._fits(codes)
        out: list[Move] = []
        for p in starts:
            x, y = unpack(p)
            points = self.pts_row[p] + self.pts_col[p]
            out.extend((points, ((x, y, t),)) for t in fits[p])
        most = _largest(codes)
        if most >= 2:
            _walk(self.cells, codes, starts, DX, fits, self.pts_col, most, 0, out)
            _walk(self.cells, codes, starts, DY, fits, self.pts_row, most, 0, out)
        return out

    def best_move(self, hand: Sequence[int]) -> Move | None:
        """A placement of `hand` with the most points, or None: what the greedy baseline
        plays (up to its choice between equals)."""
        codes = sorted(set(hand))
        if not codes:
            return None
        if not self.cells:
            return max(openings(codes), key=_first_of_move)
        fits, starts = self._fits(codes)
        found: list[Move] = []
        best = 0
        for p in starts:
            points = self.pts_row[p] + self.pts_col[p]
            if not found or points > best:
                best = points
                found[:] = [(points, ((*unpack(p), fits[p][0]),))]
        most = _largest(codes)
        if most >= 2:
            best = _walk(self.cells, codes, starts, DX, fits, self.pts_col, most, best, None, found)
            _walk(self.cells, codes, starts, DY, fits, self.pts_row, most, best, None, found)
        return found[0] if found else None

    def _long(self, codes: list[int], most: int, best: int) -> int:
        """The best of `best` and the placements of more than SPAN tiles in one line: the
        engine generator's walk for this hand, filling only the intervals of that many
        cells that could beat `best`."""
        fits, starts = self._fits(codes)
        least = SPAN + 1
        best = _walk(self.cells, codes, starts, DX, fits, self.pts_col, most, best, least=least)
        return _walk(self.cells, codes, starts, DY, fits, self.pts_row, most, best, least=least)

    def _fits(self, codes: list[int]) -> tuple[dict[int, list[int]], list[int]]:
        """Per anchor, the kinds of `codes` it takes; and the anchors that take some."""
        have = 0
        for t in codes:
            have |= 1 << t
        fits: dict[int, list[int]] = {}
        starts: list[int] = []
        none: list[int] = []
        for p, mask in self.takes.items():
            if mask & have:
                fits[p] = [t for t in codes if mask >> t & 1]
                starts.append(p)
            else:
                fits[p] = none
        return fits, starts


def _first(item: Interval) -> int:
    return item[0]


_WAYS: dict[tuple[tuple[int, ...], int, int], tuple[tuple[int, ...], ...]] = {}
"""Memo of `_ways` for lines of at most one tile (the same stretches recur all game)."""
WAYS_MEMO = 1 << 16
"""The memo is emptied when it holds this many entries."""


def _ways(masks: list[int], cm: int, sm: int, n: int) -> tuple[tuple[int, ...], ...]:
    """The ways to fill cells that take `masks` in a line holding n tiles with these
    colour and shape masks: by its colour or by its shape (both open for one tile or none)."""
    if n >= 2:
        return (tuple(masks),)
    key = (tuple(masks), cm, sm)
    out = _WAYS.get(key)
    if out is not None:
        return out
    if n == 1:
        colours = cm
        shapes = sm
    else:
        colours = shapes = 63
        for m in masks:
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
    for c in range(6):
        if colours >> c & 1:
            way = tuple(m & COLOUR_KINDS[c] for m in masks)
            if all(way):
                ways.append(way)
    for s in range(6):
        if shapes >> s & 1:
            way = tuple(m & SHAPE_KINDS[s] for m in masks)
            if all(way):
                ways.append(way)
    out = tuple(ways)
    if len(_WAYS) >= WAYS_MEMO:
        _WAYS.clear()
    _WAYS[key] = out
    return out


def _scan(
    cells: dict[int, int],
    takes: dict[int, int],
    d: int,
    perp_points: dict[int, int],
    first: int,
    last: int,
    hits: list[int] | None,
    out: list[Interval],
) -> None:
    """The intervals along d (one line) whose first cell a runs from `first` to `last`:
    the stretches a .. b of at most 6 cells with empty cells just outside, 2 to SPAN
    empty cells, an anchor among them, tiles that form a valid line and cells that each
    take some kind the line accepts. These are exactly the intervals the engine's
    generator walks (rules/qwirkle/moves.py `line_slots`) that some hand could fill. With
    `hits`, only the intervals whose cells or end cells include one of them."""
    line_n = LINE_N
    line = _row(first) if d == DX else _col(first)
    for a in range(first, last + d, d):
        if a - d in cells:
            continue
        cm = sm = n = k = perp = 0
        anchored = False
        empty: list[int] = []
        b = a
        for length in range(1, LINE_MAX + 1):
            c = cells.get(b)
            if c is None:
                mask = takes.get(b)
                if mask is None:
                    mask = ALL_KINDS
                elif not mask:
                    break
                else:
                    anchored = True
                k += 1
                if k > SPAN:
                    break
                empty.append(mask)
                perp += perp_points.get(b, 0)
            else:
                cm |= CBIT[c]
                sm |= SBIT[c]
                n += 1
                if line_n[cm << 6 | sm] != n:
                    break
            if k >= 2 and anchored and b + d not in cells:
                wanted = hits is None
                if hits is not None:
                    for g in hits:
                        if a - d <= g <= b + d:
                            wanted = True
                            break
                if wanted:
                    fit = _accepts(cm, sm, n)
                    masks = [m & fit for m in empty]
                    if all(masks):
                        ways = _ways(masks, cm, sm, n)
                        if ways:
                            out.append((line_points(length) + perp, k, ways, line, a - d, b + d))
            b += d


def best_points(board: Board, hand: Sequence[int]) -> int:
    """The points of the best placement of `hand` on `board` (0 if none)."""
    return Replies(board).best(hand)


def _walk(
    cells: dict[int, int],
    codes: list[int],
    anc: list[int],
    d: int,
    fit: dict[int, list[int]],
    perp_points: dict[int, int],
    most: int,
    best: int,
    out: list[Move] | None = None,
    found: list[Move] | None = None,
    least: int = 2,
) -> int:
    """The placements of `line_slots` along d for one hand: the best points (a stretch
    that cannot beat the best so far is never filled), and in `found` a placement that
    scores them if it beats `best`; or with `out`, every placement."""
    for points, empty, cm, sm, n in line_slots(cells, codes, anc, d, fit, most, least):
        for q in empty:
            points += perp_points.get(q, 0)
        if out is not None:
            options = [fit.get(q, codes) for q in empty]
            fill_line([unpack(q) for q in empty], options, cm, sm, n, points, out)
        elif points > best:
            chosen = _assign([fit.get(q, codes) for q in empty], cm, sm, n)
            if chosen is not None:
                best = points
                if found is not None:
                    tiles = tuple((*unpack(q), t) for q, t in zip(empty, chosen, strict=True))
                    found[:] = [(points, tiles)]
    return best


def _assign(options: list[list[int]], cm: int, sm: int, n: int) -> list[int] | None:
    """Distinct tiles from `options` (one list per empty cell) that complete the line, if
    there are any."""
    line_n = LINE_N
    k = len(options)
    chosen = [0] * k

    def rec(i: int, cm: int, sm: int, n: int) -> bool:
        n += 1
        for t in options[i]:
            c2 = cm | CBIT[t]
            s2 = sm | SBIT[t]
            if line_n[c2 << 6 | s2] != n:
                continue
            chosen[i] = t
            if i == k - 1 or rec(i + 1, c2, s2, n):
                return True
        return False

    return chosen if rec(0, cm, sm, n) else None


def remaining(hand: Sequence[int], tiles: Sequence[tuple[int, int, int]]) -> list[int]:
    rest = list(hand)
    for _, _, code in tiles:
        rest.remove(code)
    return rest


def best_group(hand: Sequence[int]) -> list[int]:
    """The tiles of the biggest colour or shape group (distinct tiles), to keep on a swap."""
    groups: list[list[int]] = []
    kinds = sorted(set(hand))
    for c in range(6):
        groups.append([t for t in kinds if t // 6 == c])
    for s in range(6):
        groups.append([t for t in kinds if t % 6 == s])
    return max(groups, key=len)


def _final(margin: float) -> float:
    """A finished game's margin, with a win or a loss above any estimate."""
    if margin > 0:
        return margin + SURE
    return margin - SURE if margin < 0 else margin


def _shortlist(moves: list[Move], size: int, n: int) -> list[Move]:
    """The n highest-scoring moves, and every move that empties a hand of `size` tiles;
    of the placements of the same tiles on the same cells (in another order), only one."""
    ranked = sorted(moves, key=_first_of_move, reverse=True)
    out: list[Move] = []
    seen: set[tuple[frozenset[tuple[int, int]], tuple[int, ...]]] = set()
    for move in ranked:
        tiles = move[1]
        if len(out) >= n and len(tiles) != size:
            continue
        key = (frozenset((x, y) for x, y, _ in tiles), tuple(sorted(c for _, _, c in tiles)))
        if key not in seen:
            seen.add(key)
            out.append(move)
    return out


class _Spent(Exception):
    """The endgame search used up its budget."""


class _Search:
    """The duel with the bag empty, the other seat playing its best-scoring placement (as
    the greedy baseline does). Generating a hand's placements costs a unit of the budget
    per tile, so the search stops at the same point on every machine. What a deeper
    iteration finds again (a position after the same moves, a hand's placements there)
    is remembered, and costs nothing the second time."""

    def __init__(self, budget: int) -> None:
        self.left = budget
        self.children: dict[tuple[int, Placed], Replies] = {}
        self.found: dict[tuple[int, tuple[int, ...]], Move | None] = {}
        self.lists: dict[tuple[int, tuple[int, ...]], list[Move]] = {}

    def after(self, board: Replies, tiles: Placed) -> Replies:
        key = (id(board), tiles)
        child = self.children.get(key)
        if child is None:
            child = self.children[key] = board.after(tiles, lines=False)
        return child

    def moves(self, board: Replies, hand: list[int]) -> list[Move]:
        key = (id(board), tuple(hand))
        moves = self.lists.get(key)
        if moves is None:
            self.spend(len(hand))
            moves = self.lists[key] = board.moves(hand)
        return moves

    def best(self, board: Replies, hand: list[int]) -> Move | None:
        key = (id(board), tuple(hand))
        if key in self.found:
            return self.found[key]
        self.spend(len(hand))
        move = self.found[key] = board.best_move(hand)
        return move

    def spend(self, units: int) -> None:
        self.left -= units
        if self.left < 0:
            raise _Spent

    def theirs(
        self,
        board: Replies,
        mine: list[int],
        theirs: list[int],
        margin: float,
        depth: int,
        passed: bool,
    ) -> float:
        """The other seat: its best-scoring placement, or a pass; then this seat."""
        reply = self.best(board, theirs)
        if reply is None:
            if passed:
                return _final(margin)  # every seat passed: the game is over
            return self.mine(board, mine, theirs, margin, depth, True)
        margin -= reply[0]
        if len(reply[1]) == len(theirs):
            return _final(margin - END_BONUS)
        after = self.after(board, reply[1])
        return self.mine(after, mine, remaining(theirs, reply[1]), margin, depth, False)

    def mine(
        self,
        board: Replies,
        mine: list[int],
        theirs: list[int],
        margin: float,
        depth: int,
        passed: bool,
    ) -> float:
        """This seat: the best of its shortlisted placements, `depth` of its own moves deep
        (at the last, its best points, with the 6 and the end of going out)."""
        size = len(mine)
        if depth <= 1 and (size == 1 or len(set(mine)) < size or _largest(mine) < size):
            move = self.best(board, mine)  # its best move, and a single tile goes out
            if move is not None:
                if size == 1:
                    return _final(margin + move[0] + END_BONUS)
                return margin + move[0]
            moves: list[Move] = []
        else:
            moves = self.moves(board, mine)
        if not moves:
            if passed:
                return _final(margin)
            return self.theirs(board, mine, theirs, margin, depth - 1, True)
        if depth <= 1:
            points, out = max(
                (m[0] + END_BONUS, True) if len(m[1]) == size else (m[0], False) for m in moves
            )
            return _final(margin + points) if out else margin + points
        best = -2 * SURE
        for points, tiles in _shortlist(moves, size, ENDGAME_INNER):
            kept = remaining(mine, tiles)
            if kept:
                after = self.after(board, tiles)
                value = self.theirs(after, kept, theirs, margin + points, depth - 1, False)
            else:
                value = _final(margin + points + END_BONUS)
            best = max(best, value)
        return best


def _first_of_move(move: Move) -> int:
    return move[0]


def _first_of_pair(item: tuple[float, int]) -> float:
    return item[0]


@register
class QwirkleStrong(Bot):
    """Points, leave and the next seat's best reply (sampled, or exact at the end)."""

    kind = "strong"
    games = frozenset({"qwirkle"})

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        board = qwirkle_board(view)
        hand = qwirkle_hand(view)
        moves = placements(board, hand)
        bag: int = view["bag"]
        if not moves:
            return self._swap_or_pass(legal, hand, bag)
        if not board.cells:
            return self._opening(legal, hand, moves)
        seats: int = view["seats"]
        if (
            seats == 2
            and bag == 0
            and len(unseen_tiles(board, hand)) == view["hand_sizes"][1 - view["you"]]
        ):
            return qwirkle_match(legal, self._endgame(view, board, hand, moves))
        ranked = sorted(
            (
                (points + LEAVE * synergy(remaining(hand, tiles)), points, tiles)
                for points, tiles in moves
            ),
            key=lambda item: item[0],
            reverse=True,
        )
        if seats == 1:
            return qwirkle_match(legal, ranked[0][2])
        their_hand = view["hand_sizes"][(view["you"] + 1) % seats]
        pool = unseen_tiles(board, hand)
        samples = [self.rng.sample(pool, min(their_hand, len(pool))) for _ in range(SAMPLES)]
        refills = [self.rng.sample(pool, min(6, len(pool))) for _ in range(SAMPLES)]
        floor = ranked[0][0] - CLOSE
        base = Replies(board)
        best: tuple[float, Placed] | None = None
        for own, _, tiles in ranked[:CANDIDATES]:
            if own < floor:
                break
            replies = base.after(tiles)
            reply = sum(replies.best(s) for s in samples) / SAMPLES
            kept = remaining(hand, tiles)
            need = min(HAND_SIZE - len(kept), bag)
            mine = sum(replies.best(kept + r[:need]) for r in refills) / SAMPLES
            worth = own - REPLY * reply + OWN * mine
            if best is None or worth > best[0]:
                best = (worth, tiles)
        assert best is not None
        return qwirkle_match(legal, best[1])

    def _endgame(self, view: JSON, board: Board, hand: list[int], moves: list[Move]) -> Placed:
        """Bag empty, two seats: the other hand is exactly the unseen tiles (a hand-made
        position that left tiles out goes the sampled way instead). Each candidate is
        followed by the other seat's best-scoring reply and this seat's best answers,
        one own move deep, then (iterative deepening) the best few candidates deeper
        while the node budget lasts; counting the 6 for going out and the end it brings,
        the best margin wins, and a finished game's sign counts above any margin."""
        me: int = view["you"]
        lead = view["scores"][me] - view["scores"][1 - me]
        theirs = unseen_tiles(board, hand)
        base = Replies(board, lines=False)
        search = _Search(ENDGAME_NODES)
        candidates = _shortlist(moves, len(hand), ENDGAME_CANDIDATES)
        order = list(range(len(candidates)))
        best = 0
        for depth in range(1, ENDGAME_DEPTH + 1):
            values: list[tuple[float, int]] = []
            try:
                for i in order:
                    points, tiles = candidates[i]
                    kept = remaining(hand, tiles)
                    if kept:
                        after = search.after(base, tiles)
                        value = search.theirs(after, kept, theirs, lead + points, depth, False)
                    else:
                        value = _final(lead + points + END_BONUS)
                    values.append((value, i))
            except _Spent:
                if depth > 1 or not values:
                    break  # keep the last complete depth
            values.sort(key=_first_of_pair, reverse=True)
            best = values[0][1]
            order = sorted(i for _, i in values[:ENDGAME_WIDTH])
        return candidates[best][1]

    def _opening(self, legal: list[JSON], hand: list[int], moves: list[Move]) -> JSON:
        """Every opening scores the same: keep the best leave."""
        best: tuple[float, Placed] | None = None
        for _, tiles in moves:
            worth = synergy(remaining(hand, tiles))
            if best is None or worth > best[0]:
                best = (worth, tiles)
        assert best is not None
        return qwirkle_match(legal, best[1])

    def _swap_or_pass(self, legal: list[JSON], hand: list[int], bag: int) -> JSON:
        """No placement: swap what does not fit the best colour or shape group; else pass."""
        give = list(hand)
        for code in best_group(hand):
            give.remove(code)
        give = sorted(give[:bag])
        if give:
            wanted = [tile_json(c) for c in give]
            for action in legal:
                if action["type"] == "swap" and action["tiles"] == wanted:
                    return action
        return next((a for a in legal if a["type"] in ("pass", "swap")), legal[0])
