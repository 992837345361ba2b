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
anchors, the kinds each accepts, the points of their lines (the engine's `Frontier`, which
its move generator uses too), and the intervals of a row or column that two to SPAN tiles
could fill (the engine's `line_slots`), each with the kinds its cells take, best first.
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
    COPIES,
    DX,
    DY,
    END_BONUS,
    HAND_SIZE,
    KINDS,
    STRIDE,
    Board,
    largest_set,
    line_points,
    pack,
    tile_json,
)
from ..qwirkle.moves import (
    Frontier,
    Move,
    Placed,
    accepted_kinds,
    kinds_mask,
    line_slots,
    placements,
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


def _row(p: int) -> int:
    """The id of the line through p along DX."""
    return p % STRIDE


def _col(p: int) -> int:
    """The id of the line through p along DY."""
    return STRIDE + p // STRIDE


def _fill(way: tuple[int, ...], have: int) -> bool:
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
        _index(frontier, starts, DX, self.intervals)
        _index(frontier, starts, DY, self.intervals)
        self.intervals.sort(key=_rank, reverse=True)

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
            for line in (_row(p), _col(p)):
                near.setdefault(line, ([], []))[0].append(p)
        for p in changed:
            for line in (_row(p), _col(p)):
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
                _index(frontier, starts, DX if line < STRIDE else DY, fresh)
        fresh.sort(key=_rank, reverse=True)
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
            # `_fill`, unrolled for two and three cells (the hot loop): m0, m1, m2 are the
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
                if _fill(way, have):
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


def _rank(interval: Interval) -> int:
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


def _index(frontier: Frontier, starts: Iterable[int], step: int, out: list[Interval]) -> None:
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
                line = _row(first) if step == DX else _col(first)
                out.append((points, len(empty), ways, line, first - step, last + step))


def best_points(board: Board, hand: Sequence[int]) -> int:
    """The points of the best placement of `hand` on `board` (0 if none)."""
    return Replies(board).best(hand)


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
        if depth <= 1 and (size == 1 or len(set(mine)) < size or largest_set(mine) < size):
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
