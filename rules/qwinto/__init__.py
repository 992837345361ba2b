"""Qwinto (RULES.md): three coloured dice, a sheared sheet, answers held per roll."""

from __future__ import annotations

from ..base import Game, Option
from ..registry import register
from .sheet import render, score, score_sheet
from .state import QwintoState

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
    )
)

__all__ = ["GAME", "QwintoState", "render", "score", "score_sheet"]
