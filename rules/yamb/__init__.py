"""Yamb: six dice, up to three rolls a turn, a 13 x 6 table to fill (RULES.md, Yamb)."""

from ..base import Game, Option
from ..registry import register
from .state import MODES, YambState
from .table import COLUMNS, ROWS, render_table, score_sheet

GAME = register(
    Game(
        name="yamb",
        title="Yamb",
        min_seats=1,
        max_seats=6,
        state_class=YambState,
        options=(
            Option(
                "mode",
                "turns",
                "turns: seats play in turn; simultaneous: every seat plays each round at once",
                choices=MODES,
            ),
        ),
        score_sheet=score_sheet,
    )
)

__all__ = ["COLUMNS", "GAME", "ROWS", "YambState", "render_table", "score_sheet"]
