"""Games by name. Each game module registers itself when rules/ is imported."""

from __future__ import annotations

from .base import Game
from .errors import UnknownGame
from .text import DEFAULT, Presentation

_GAMES: dict[str, Game] = {}


def register(game: Game) -> Game:
    if game.name in _GAMES:
        raise ValueError(f"game {game.name!r} is registered twice")
    _GAMES[game.name] = game
    return game


def get_game(name: str) -> Game:
    try:
        return _GAMES[name]
    except (KeyError, TypeError):
        raise UnknownGame(f"no game {name!r}; games: {game_names()}") from None


def presentation(name: str) -> Presentation:
    """The game's presentation (`Game.text`); the default for a game not known."""
    game = _GAMES.get(name)
    return game.text if game is not None else DEFAULT


def game_names() -> list[str]:
    return sorted(_GAMES)


def all_games() -> list[Game]:
    return [_GAMES[n] for n in game_names()]
