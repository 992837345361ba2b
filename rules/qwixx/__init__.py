"""Qwixx: two white dice for everyone, coloured dice for the active seat, rows that lock."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import Game, Option
from ..registry import register
from .actions import QwixxAction
from .sheet import parse_sheet, render_sheet, score_sheet
from .state import QwixxState
from .text import TEXT


def render_view(view: Mapping[str, Any], seat: int, name: str = "") -> str:
    _, marks, locks, failed = parse_sheet({"name": name, **view["sheets"][seat]})
    points = view["scores"][seat] if view["over"] else None
    return render_sheet(name, marks, locks, failed, points)


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
        render_view=render_view,
        text=TEXT,
        actions=QwixxAction,
    )
)

__all__ = ["GAME", "QwixxState", "render_view", "score_sheet"]
