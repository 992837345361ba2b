"""Qwirkle at a terminal: tiles as letters, the others' hidden hands as one line each.

Placements are countless, so they have no fixed number (the default: numbered in the
order first listed in a window).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..text import Action, Presentation, Render, View
from .board import COLOR_LETTERS, COLORS, SHAPE_LETTERS, SHAPES


def tile_text(tile: Mapping[str, Any]) -> str:
    """A tile as the sheet prints it (`Rt`), with its cell when it has one."""
    text = COLOR_LETTERS[COLORS.index(tile["color"])] + SHAPE_LETTERS[SHAPES.index(tile["shape"])]
    return text + (f"@{tile['x']},{tile['y']}" if "x" in tile else "")


class QwirkleText(Presentation):
    legend = (
        "Legend: a tile is colour + shape: R red, O orange, Y yellow, G green, B blue,\n"
        "P purple; c circle, s square, d diamond, t star, l clover, x cross; .. is empty.\n"
        "Place as `place Rt@3,0` (x across, y down)."
    )

    def turns(self, options: Mapping[str, Any]) -> bool:
        return False  # nobody's turn while the tiles are dealt

    def sheets(
        self, view: View, names: Sequence[str], seat: int | None, render: Render
    ) -> list[str]:
        """The seat's own sheet; the others' hands are hidden, so a line each."""
        out = []
        for s in range(int(view.get("seats", len(names)))):
            name = names[s] if s < len(names) else f"seat {s}"
            if s != seat:
                hand = view.get("hand_sizes", [0] * (s + 1))[s]
                out.append(f"{name}: {view['scores'][s]} points, {hand} tiles in hand")
            else:
                out.append(render(view, s, name))
        return out

    def describe(self, action: Action) -> str | None:
        kind = action.get("type")
        if kind in ("place", "swap") and "tiles" in action:
            return f"{kind} " + " ".join(tile_text(t) for t in action["tiles"])
        if kind == "swap" and "count" in action:
            return f"swap {action['count']} tiles"
        return None

    def event_text(self, event: Mapping[str, Any], who: str) -> str | None:
        kind = event.get("type")
        if kind == "start":
            return f"{who} starts: a first line of {event.get('size')} tiles"
        if kind == "bonus":
            return f"{who} emptied the hand: +{event.get('points')}"
        if kind == "drew" and isinstance(event.get("tiles"), list):
            tiles = " ".join(tile_text(t) for t in event["tiles"])
            return f"{who} drew {tiles}; {event.get('bag')} left in the bag"
        if kind == "drew":
            return f"{who} drew {event.get('count')} tiles; {event.get('bag')} left in the bag"
        return None


TEXT = QwirkleText()
