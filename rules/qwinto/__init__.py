"""Qwinto (docs/rules.md): three coloured dice, a sheared sheet, answers held per roll."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import Game, Option
from ..registry import register
from .actions import QwintoAction
from .sheet import failed_from_json, render, rows_from_json, score, score_sheet
from .state import QwintoState
from .text import TEXT


def render_view(view: Mapping[str, Any], seat: int, name: str = "") -> str:
    sheet = view["sheets"][seat]
    points = view["scores"][seat] if view["over"] else None
    return render(rows_from_json(sheet["rows"]), failed_from_json(sheet["failed"]), name, points)


GAME = register(
    Game(
        name="qwinto",
        title="Qwinto",
        min_seats=1,
        max_seats=6,
        state_class=QwintoState,
        options=(
            Option(
                "reroll",
                False,
                "the active seat may roll the same dice once more before anyone writes",
            ),
        ),
        presets={"official": {"reroll": True}},
        score_sheet=score_sheet,
        render_view=render_view,
        text=TEXT,
        actions=QwintoAction,
    )
)

__all__ = ["GAME", "QwintoState", "render", "render_view", "score", "score_sheet"]
