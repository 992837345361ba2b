"""Qwixx: two white dice for everyone, coloured dice for the active seat, rows that lock."""

from __future__ import annotations

from ..base import Game, Option
from ..registry import register
from .sheet import score_sheet
from .state import QwixxState

GAME = register(
    Game(
        name="qwixx",
        title="Qwixx",
        min_seats=1,
        max_seats=6,
        state_class=QwixxState,
        options=(
            Option(
                name="lock_after",
                default=4,
                description="marks a row needs before its last box may be marked (locking it)",
                low=1,
                high=10,
            ),
        ),
        presets={"official": {"lock_after": 5}},
        score_sheet=score_sheet,
    )
)

__all__ = ["GAME", "QwixxState", "score_sheet"]
