"""How Pig reads at a terminal (rules/text.py): the dice of the last roll and the pot."""

from __future__ import annotations

from collections.abc import Sequence

from ..text import Presentation, View


class PigText(Presentation):
    legend = "A 1 loses the turn's pot; `bank` keeps it."

    def dice_line(self, view: View, seat: int | None, held: Sequence[int] = ()) -> str | None:
        dice = view.get("dice") or []
        return f"{' '.join(map(str, dice))}  (pot {view.get('pot', 0)})" if dice else None


TEXT = PigText()
