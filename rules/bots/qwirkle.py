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

from ..base import JSON
from ..qwirkle.board import HAND_SIZE, tile_json
from ..qwirkle.moves import Move, Placed, placements
from .base import Bot, register
from .greedy import qwirkle_match
from .qwirkle_endgame import endgame
from .qwirkle_replies import Replies, best_points
from .qwirkle_tiles import best_group, remaining, synergy, unseen_tiles
from .views import qwirkle_board, qwirkle_hand

__all__ = ["QwirkleStrong", "Replies", "best_points", "unseen_tiles"]

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
            return qwirkle_match(legal, endgame(view, board, hand, moves))
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
