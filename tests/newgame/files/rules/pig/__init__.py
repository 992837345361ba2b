"""Pig (docs/rules.md): roll one or two dice on for points, or bank them; a 1 loses them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import Game, Option
from ..registry import register
from .actions import PigAction
from .state import PigState, render
from .text import TEXT


def render_view(view: Mapping[str, Any], seat: int, name: str = "") -> str:
    return render(view["scores"][seat], name, view["over"])


GAME = register(
    Game(
        name="pig",
        title="Pig",
        min_seats=2,
        max_seats=6,
        state_class=PigState,
        options=(Option("goal", 30, "the points that end the game", low=10, high=100),),
        presets={"short": {"goal": 20}},
        render_view=render_view,
        text=TEXT,
        actions=PigAction,
    )
)

__all__ = ["GAME", "PigState", "render_view"]
