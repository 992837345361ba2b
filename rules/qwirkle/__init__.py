"""Qwirkle (docs/rules.md): 108 tiles, hidden hands of 6, the bag as chance, 1 to 4 seats.

Bots: `QwirkleState.placements(seat)` lists every legal placement with its points,
`best_placement(board, hand)` is the greedy choice, `place_action(tiles)` turns a
placement into its wire action and `score_placement(board, tiles)` scores any placement.
"""

from collections.abc import Mapping
from typing import Any

from ..base import Game
from ..registry import register
from .actions import QwirkleAction
from .board import (
    COLORS,
    SHAPES,
    Board,
    check_placement,
    largest_set,
    score_placement,
    tile_code,
    tile_json,
)
from .moves import Move, best_placement, has_placement, place_action, placements
from .render import render_board, render_hand, render_seat
from .state import QwirkleState
from .text import TEXT


def render_view(view: Mapping[str, Any], seat: int, name: str = "") -> str:
    """Only a seat's own view holds its hand: render the seat whose view this is."""
    if view["you"] != seat:
        raise ValueError("a Qwirkle sheet shows a hand: render it from that seat's own view")
    board = Board.from_tiles(
        (t["x"], t["y"], tile_code(t["color"], t["shape"])) for t in view["board"]
    )
    hand = [tile_code(t["color"], t["shape"]) for t in view["hand"]]
    points = view["scores"][seat] if view["over"] else None
    return render_seat(name, points, hand, board)


GAME = register(
    Game(
        name="qwirkle",
        title="Qwirkle",
        min_seats=1,
        max_seats=4,
        state_class=QwirkleState,
        render_view=render_view,
        text=TEXT,
        actions=QwirkleAction,
    )
)

__all__ = [
    "COLORS",
    "GAME",
    "SHAPES",
    "Board",
    "Move",
    "QwirkleState",
    "best_placement",
    "check_placement",
    "has_placement",
    "largest_set",
    "place_action",
    "placements",
    "render_board",
    "render_hand",
    "score_placement",
    "tile_code",
    "tile_json",
]
