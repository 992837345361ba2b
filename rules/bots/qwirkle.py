"""The strong Qwirkle bot: greedy, plus what a move leaves in the hand and on the board.

Every legal placement is scored by

    points + LEAVE x synergy(tiles kept) - REPLY x (the next seat's best answer)

The next seat's best answer is measured, not guessed: the bot deals the tiles it cannot
see (bag and other hands, from the view) into a few sample hands for the next seat and
finds that seat's best placement on the board after the move, with the engine's own move
generator. The same samples serve every candidate, so the comparison is fair; once the
bag is empty in a duel the next seat's hand is exactly the unseen tiles and the reply is
exact. Only the best few candidates by points and leave are looked at this closely, which
keeps a decision to a few generator calls.

Synergy counts pairs of kept tiles that could share a line (same colour or same shape, not
the same tile) and punishes duplicates (they never share a line). When even the best
placement is poor, the bot swaps the tiles that do not fit its best colour or shape group.
Emptying the hand with the bag empty ends the game with 6 more: it is weighed as the end.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..base import JSON
from ..qwirkle.board import (
    CBIT,
    COPIES,
    DX,
    DY,
    END_BONUS,
    KINDS,
    LINE_MAX,
    LINE_N,
    QWIRKLE_BONUS,
    SBIT,
    Board,
    largest_set,
    tile_json,
)
from ..qwirkle.moves import Move, Placed, anchors, best_placement, placements
from .base import Bot, register
from .greedy import qwirkle_match
from .views import qwirkle_board, qwirkle_hand

LEAVE = 0.6
"""Points per unit of synergy of the tiles kept."""
REPLY = 1.0
"""How much of the next seat's expected best reply a move is charged."""
CANDIDATES = 6
"""Placements examined with sampled replies (at most)."""
CLOSE = 8.0
"""Only placements within this many points of the best are examined that closely."""
ENDGAME_CANDIDATES = 12
"""Placements searched two replies deep once the bag is empty."""
SAMPLES = 10
"""Sample hands of the next seat per decision."""


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


def _segment(cells: dict[int, int], p: int, d: int) -> tuple[int, int, int]:
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


def _points(n: int) -> int:
    if n < 2:
        return 0
    return n + QWIRKLE_BONUS if n == LINE_MAX else n


class Replies:
    """Best placements of many hands on one board: what depends on the board only (its
    anchors, which kinds each anchor takes, the points of its lines) is computed once."""

    def __init__(self, board: Board) -> None:
        self.cells = cells = board.cells
        self.anchors = anchors(board) if cells else []
        self.takes: dict[int, int] = {}
        """Per anchor: bitmask of the tile kinds its row and column both accept."""
        self.pts_row: dict[int, int] = {}
        self.pts_col: dict[int, int] = {}
        line_n = LINE_N
        for p in self.anchors:
            rcm, rsm, rn = _segment(cells, p, DX)
            ccm, csm, cn = _segment(cells, p, DY)
            rn += 1
            cn += 1
            mask = 0
            for t in range(KINDS):
                if (
                    line_n[(rcm | CBIT[t]) << 6 | rsm | SBIT[t]] == rn
                    and line_n[(ccm | CBIT[t]) << 6 | csm | SBIT[t]] == cn
                ):
                    mask |= 1 << t
            self.takes[p] = mask
            self.pts_row[p] = _points(rn)
            self.pts_col[p] = _points(cn)

    def best(self, hand: Sequence[int]) -> int:
        """Points of the best placement of `hand` (0 if none): equal to
        `rules.qwirkle.best_placement(board, hand)[0]`, which the tests check. It walks
        the engine generator's intervals without listing placements: an interval that
        cannot beat the best so far is skipped before any tile is tried in it."""
        codes = sorted(set(hand))
        if not codes:
            return 0
        if not self.cells:
            k = largest_set(codes)
            return 1 if k == 1 else _points(k)
        best = 0
        fits: dict[int, list[int]] = {}
        takes = self.takes
        pts_row = self.pts_row
        pts_col = self.pts_col
        for p in self.anchors:
            mask = takes[p]
            fit = [t for t in codes if mask >> t & 1]
            fits[p] = fit
            if fit and pts_row[p] + pts_col[p] > best:
                best = pts_row[p] + pts_col[p]
        most = largest_set(codes)
        if most >= 2:
            best = _best_line(self.cells, codes, self.anchors, DX, fits, pts_col, most, best)
            best = _best_line(self.cells, codes, self.anchors, DY, fits, pts_row, most, best)
        return best


def best_points(board: Board, hand: Sequence[int]) -> int:
    """The points of the best placement of `hand` on `board` (0 if none)."""
    return Replies(board).best(hand)


def _best_line(
    cells: dict[int, int],
    codes: list[int],
    anc: list[int],
    d: int,
    fit: dict[int, list[int]],
    perp_points: dict[int, int],
    most: int,
    best: int,
) -> int:
    """The engine's interval walk along d (rules/qwirkle/moves.py `_lines`), for the best
    points only."""
    line_n = LINE_N
    seen: set[int] = set()
    for p in anc:
        if not fit[p]:
            continue
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
                if k < 2 or k > most:
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
                if line_n[cm << 6 | sm] != n:
                    continue
                points = _points(total)
                for q in empty:
                    points += perp_points.get(q, 0)
                if points <= best:
                    continue
                if _fits([fit.get(q, codes) for q in empty], cm, sm, n):
                    best = points
    return best


def _fits(options: list[list[int]], cm: int, sm: int, n: int) -> bool:
    """Whether distinct tiles from `options` (one list per empty cell) complete the line."""
    line_n = LINE_N
    k = len(options)

    def rec(i: int, cm: int, sm: int, n: int) -> bool:
        n += 1
        for t in options[i]:
            c2 = cm | CBIT[t]
            s2 = sm | SBIT[t]
            if line_n[c2 << 6 | s2] != n:
                continue
            if i == k - 1 or rec(i + 1, c2, s2, n):
                return True
        return False

    return rec(0, cm, sm, n)


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
        if seats == 2 and bag == 0:
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
        samples = self._samples(board, hand, their_hand)
        floor = ranked[0][0] - CLOSE
        best: tuple[float, Placed] | None = None
        for own, _, tiles in ranked[:CANDIDATES]:
            if own < floor:
                break
            after = board.copy()
            after.put(tiles)
            replies = Replies(after)
            reply = sum(replies.best(s) for s in samples) / len(samples)
            worth = own - REPLY * reply
            if best is None or worth > best[0]:
                best = (worth, tiles)
        assert best is not None
        return qwirkle_match(legal, best[1])

    def _endgame(self, view: JSON, board: Board, hand: list[int], moves: list[Move]) -> Placed:
        """Bag empty, two seats: the other hand is exactly the unseen tiles. Each candidate
        is followed by the other seat's best reply and this seat's best answer to it,
        counting the 6 for going out and the end it brings; the best final margin wins."""
        me: int = view["you"]
        lead = view["scores"][me] - view["scores"][1 - me]
        theirs = unseen_tiles(board, hand)
        ranked = sorted(moves, key=lambda m: -m[0])[:ENDGAME_CANDIDATES]
        best: tuple[float, Placed] | None = None
        for points, tiles in ranked:
            kept = remaining(hand, tiles)
            margin = float(lead + points)
            if not kept:
                margin += END_BONUS  # the game ends: this margin is final
            else:
                after = board.copy()
                after.put(tiles)
                reply = best_placement(after, theirs)
                if reply is not None:
                    margin -= reply[0]
                    after.put(reply[1])
                    if len(reply[1]) == len(theirs):
                        margin -= END_BONUS  # they go out: final
                        reply = None
                        kept = []
                if kept:
                    answer = best_placement(after, kept)
                    if answer is not None:
                        margin += answer[0] + (END_BONUS if len(answer[1]) == len(kept) else 0)
            if best is None or margin > best[0]:
                best = (margin, tiles)
        assert best is not None
        return best[1]

    def _samples(self, board: Board, hand: Sequence[int], size: int) -> list[list[int]]:
        """Hands the next seat may hold, dealt from the tiles this seat cannot see."""
        pool = unseen_tiles(board, hand)
        size = min(size, len(pool))
        return [self.rng.sample(pool, size) for _ in range(SAMPLES)]

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
