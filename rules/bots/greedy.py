"""The greedy baseline of every game: the legal action that raises the seat's score most now.

"Now" means the score the engine would show right after the action: a mark, an entry, a
written cell or a placement; a failed throw costs its 5 points at once. Actions that
score nothing by themselves (choosing dice, rolling, announcing a call, swapping) are
worth 0. Ties are broken uniformly at random with the bot's seeded RNG, so the baseline
has no hidden strategy in its tie-breaks. The strong bots are measured against it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..base import JSON
from ..qwinto.sheet import COLOUR_INDEX as QWINTO_ROW
from ..qwinto.sheet import score as qwinto_score
from ..qwirkle.board import tile_code
from ..qwirkle.moves import place_action, placements
from ..qwixx.sheet import BOX as QWIXX_BOX
from ..qwixx.sheet import LAST_BOX as QWIXX_LAST
from ..yamb.table import COLUMN_INDEX, EMPTY, NROWS, ROW_INDEX, cell_value, column_total
from .base import Bot, register
from .views import qwinto_sheet, qwirkle_board, qwirkle_hand, yamb_cells


def _best(legal: list[JSON], gains: Sequence[float], pick: Callable[[int], int]) -> JSON:
    top = max(gains)
    tied = [i for i, g in enumerate(gains) if g == top]
    return legal[tied[pick(len(tied))]]


@register
class QwixxGreedy(Bot):
    """A mark is worth the points it adds to its row (a lock adds two marks)."""

    kind = "greedy"
    games = frozenset({"qwixx"})

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        me = view["you"]
        rows = view["sheets"][me]["rows"]
        gains: list[float] = []
        for action in legal:
            if action["type"] != "mark":
                gains.append(0)
                continue
            count = len(rows[action["row"]])
            box = QWIXX_BOX[_qwixx_row(action["row"])][action["number"]]
            gains.append(2 * count + 3 if box == QWIXX_LAST else count + 1)
        return _best(legal, gains, self.rng.randrange)


def _qwixx_row(colour: str) -> int:
    return ("red", "yellow", "green", "blue").index(colour)


@register
class QwintoGreedy(Bot):
    """An entry is worth the change of the sheet's score; the active seat's pass costs 5."""

    kind = "greedy"
    games = frozenset({"qwinto"})

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        me = view["you"]
        sheet = qwinto_sheet(view, me)
        base = qwinto_score(sheet, 0)
        gains: list[float] = []
        for action in legal:
            kind = action["type"]
            if kind == "enter":
                r, b = QWINTO_ROW[action["row"]], action["box"]
                sheet[r][b] = view["sum"]
                gains.append(qwinto_score(sheet, 0) - base)
                sheet[r][b] = 0
            elif kind == "pass" and view["active"] == me:
                gains.append(-5)
            else:
                gains.append(0)
        return _best(legal, gains, self.rng.randrange)


@register
class YambGreedy(Bot):
    """A written cell is worth the change of its column's total; rolls and calls nothing."""

    kind = "greedy"
    games = frozenset({"yamb"})

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        me = view["you"]
        cells = yamb_cells(view, me)
        dice = view["tables"][me]["dice"]
        gains: list[float] = []
        for action in legal:
            if action["type"] != "write":
                gains.append(0)
                continue
            col = COLUMN_INDEX[action["column"]]
            row = ROW_INDEX[action["row"]]
            before = column_total(cells, col)
            cells[col * NROWS + row] = cell_value(dice, row)
            gains.append(column_total(cells, col) - before)
            cells[col * NROWS + row] = EMPTY
        return _best(legal, gains, self.rng.randrange)


@register
class QwirkleGreedy(Bot):
    """The highest-scoring placement; without one, a random swap (or the pass)."""

    kind = "greedy"
    games = frozenset({"qwirkle"})

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        board = qwirkle_board(view)
        moves = placements(board, qwirkle_hand(view))
        if not moves:
            return legal[self.rng.randrange(len(legal))]
        top = max(points for points, _ in moves)
        tied = [tiles for points, tiles in moves if points == top]
        return qwirkle_match(legal, tied[self.rng.randrange(len(tied))])


def qwirkle_match(legal: list[JSON], tiles: tuple[tuple[int, int, int], ...]) -> JSON:
    """The element of `legal` that places exactly `tiles` (legal lists them as generated)."""
    wanted = place_action(tiles)
    for action in legal:
        if action == wanted:
            return action
    key = sorted((t["x"], t["y"], tile_code(t["color"], t["shape"])) for t in wanted["tiles"])
    for action in legal:
        if action["type"] == "place" and key == sorted(
            (t["x"], t["y"], tile_code(t["color"], t["shape"])) for t in action["tiles"]
        ):
            return action
    raise ValueError("the placement is not among the legal actions")
