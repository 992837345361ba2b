"""Yamb: six dice, up to three rolls a turn, a 13 x 6 table to fill (docs/rules.md, Yamb)."""

from collections.abc import Mapping
from typing import Any

from ..base import Game, Option
from ..registry import register
from .actions import YambAction
from .state import MODES, YambState
from .table import COLUMNS, ROWS, cells_from_sheet, render_table, score_sheet
from .text import TEXT


def render_view(view: Mapping[str, Any], seat: int, name: str = "") -> str:
    _, cells = cells_from_sheet({"name": name, "columns": view["tables"][seat]["columns"]})
    points = view["scores"][seat] if view["over"] else None
    return render_table(cells, name, points)


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
        render_view=render_view,
        text=TEXT,
        actions=YambAction,
    )
)

__all__ = ["COLUMNS", "GAME", "ROWS", "YambState", "render_table", "render_view", "score_sheet"]
