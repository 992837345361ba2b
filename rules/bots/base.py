"""The bot interface and the registry of bot kinds."""

from __future__ import annotations

from abc import ABC, abstractmethod
from random import Random
from typing import Any, ClassVar

from ..base import JSON
from ..errors import InvalidOptions


class Bot(ABC):
    """Decides one seat's action from its view and its legal actions."""

    kind: ClassVar[str]
    games: ClassVar[frozenset[str] | None] = None
    """The games it can play; None: every game."""

    def __init__(self, game: str, seed: Any = None) -> None:
        self.game = game
        self.rng = Random(seed)

    @abstractmethod
    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        """One of `legal` (never empty when called)."""


class RandomBot(Bot):
    """Uniform over the legal actions: the load tester's player and the baseline."""

    kind = "random"

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        return legal[self.rng.randrange(len(legal))]


_BOTS: dict[str, type[Bot]] = {RandomBot.kind: RandomBot}


def bot_names(game: str | None = None) -> list[str]:
    return sorted(k for k, b in _BOTS.items() if game is None or b.games is None or game in b.games)


def get_bot(kind: str, game: str, seed: Any = None) -> Bot:
    cls = _BOTS.get(kind)
    if cls is None or (cls.games is not None and game not in cls.games):
        raise InvalidOptions(f"no bot {kind!r} for {game}; bots: {bot_names(game)}")
    return cls(game, seed)
