"""The strong Qwirkle bot's endgame: once the bag is empty in a duel the other hand is
known, so instead of sampling it the bot searches the moves that remain, within a budget
counted in work (not time) so that its decisions repeat on any machine."""

from __future__ import annotations

from ..base import JSON
from ..qwirkle.board import END_BONUS, Board, largest_set
from ..qwirkle.moves import Move, Placed
from .qwirkle_replies import Replies
from .qwirkle_tiles import remaining, unseen_tiles

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


def endgame(view: JSON, board: Board, hand: list[int], moves: list[Move]) -> Placed:
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
