"""The bot interface and the registry of bot kinds.

A kind (`random`, `greedy`, `strong`) is a name players and operators choose; each game may
have its own class for a kind. `get_bot(kind, game, seed)` builds the class registered for
that game (or the kind's every-game class), so the server's house bots, `dicehall bot` and
the arena all share one table.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from random import Random
from typing import Any, ClassVar, TypeVar

from ..base import JSON
from ..errors import InvalidOptions


class Bot(ABC):
    """Decides one seat's action from its view and its legal actions.

    `decide` is the only decision method. A bot may keep a cache between calls (a Yamb bot
    plans a whole turn), but never trusts it: everything it needs is in `view`, so a bot
    built in the middle of a game (a reconnect, a house bot taking a seat) plays on.
    """

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


_BOTS: dict[str, dict[str | None, type[Bot]]] = {}
"""kind -> game (None: every game) -> class."""

B = TypeVar("B", bound=type[Bot])


def register(cls: B) -> B:
    """Class decorator: make `cls` the bot of its kind for each of its games."""
    by_game = _BOTS.setdefault(cls.kind, {})
    for game in sorted(cls.games) if cls.games is not None else [None]:
        if game in by_game:
            raise ValueError(f"bot {cls.kind!r} is registered twice for {game or 'every game'}")
        by_game[game] = cls
    return cls


register(RandomBot)


def _class_for(kind: str, game: str) -> type[Bot] | None:
    by_game = _BOTS.get(kind, {})
    return by_game.get(game) or by_game.get(None)


def bot_names(game: str | None = None) -> list[str]:
    """Kinds that can play `game` (None: kinds that exist for at least one game), `random`
    first: it is the default house bot (`add_bots` without a kind, the web client)."""
    kinds = [k for k in _BOTS if game is None or _class_for(k, game) is not None]
    return sorted(kinds, key=lambda k: (k != "random", k))


def get_bot(kind: str, game: str, seed: Any = None) -> Bot:
    cls = _class_for(kind, game)
    if cls is None:
        raise InvalidOptions(f"no bot {kind!r} for {game}; bots: {bot_names(game)}")
    return cls(game, seed)
