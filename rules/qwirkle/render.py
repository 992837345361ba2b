"""Canonical text of a Qwirkle seat: name, points once over, hand, board with coordinates.

Exact format (docs/games/qwirkle.md):

    Player name: Ann                  Points: 31
    Hand: Rc Rs Bt
        -1  0  1
     -1 .. Gd ..
      0 Rc Rs Rt
      1 .. .. ..

A tile is two characters (board.COLOR_LETTERS + board.SHAPE_LETTERS); `..` is an empty
cell. The grid spans the tiles plus one empty cell on every side (just (0, 0) on an empty
board), x to the right, y downwards. Columns are as wide as the widest x label (at least
2) and separated by one space; row labels are right-aligned to the widest y label.
"""

from __future__ import annotations

from collections.abc import Iterable

from .board import Board, tile_text, unpack

POINTS_COLUMN = 34
"""`Points:` starts here (as in Qwinto), or one space after a longer name."""


def render_hand(tiles: Iterable[int]) -> str:
    """Tile codes as text, in the given order, one space apart."""
    return " ".join(tile_text(t) for t in tiles)


def render_board(board: Board) -> str:
    """The board as a grid with x labels on top and y labels on the left."""
    cells = board.cells
    if cells:
        xy = [unpack(p) for p in cells]
        xs = range(min(x for x, _ in xy) - 1, max(x for x, _ in xy) + 2)
        ys = range(min(y for _, y in xy) - 1, max(y for _, y in xy) + 2)
    else:
        xs = ys = range(0, 1)
    by_xy = {unpack(p): c for p, c in cells.items()}
    w = max(2, len(str(xs[0])), len(str(xs[-1])))
    r = max(len(str(ys[0])), len(str(ys[-1])))
    lines = [" " * r + "".join(" " + str(x).rjust(w) for x in xs)]
    for y in ys:
        row = []
        for x in xs:
            code = by_xy.get((x, y))
            row.append(" " + ("..".rjust(w) if code is None else tile_text(code).rjust(w)))
        lines.append(str(y).rjust(r) + "".join(row))
    return "\n".join(lines)


def render_seat(name: str, points: int | None, hand: Iterable[int], board: Board) -> str:
    """The whole text of one seat (no final newline); `points` is None until the game is over."""
    name = " ".join(name.split())
    head = f"Player name: {name}" if name else "Player name:"
    if points is not None:
        head = head.ljust(max(POINTS_COLUMN, len(head) + 1)) + f"Points: {points}"
    hand_text = render_hand(hand)
    lines = [head, f"Hand: {hand_text}" if hand_text else "Hand:", render_board(board)]
    return "\n".join(lines)
