"""Pig's bots: `greedy` banks at 20 points in the pot, `strong` at what the race needs."""

from __future__ import annotations

from ..base import JSON
from .base import Bot, register


def _bank_at(view: JSON, legal: list[JSON], at: int) -> JSON:
    bank = next(a for a in legal if a["type"] == "bank")
    roll = next((a for a in legal if a.get("count") == 2), bank)
    return bank if view["pot"] >= at else roll


@register
class PigGreedy(Bot):
    kind = "greedy"
    games = frozenset({"pig"})

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        return _bank_at(view, legal, 20)


@register
class PigStrong(Bot):
    kind = "strong"
    games = frozenset({"pig"})

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        me = view["turn"]
        need = view["goal"] - view["scores"][me]
        return _bank_at(view, legal, min(need, 20))
