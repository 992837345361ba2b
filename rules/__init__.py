"""Pure game engines: no I/O, no asyncio, no imports from the rest of dicehall.

Importing this package registers every game; look them up with `get_game(name)`.
"""

from . import qwinto, qwirkle, qwixx, yamb  # noqa: F401  (registration)
from .base import JSON, Action, Event, Game, Option, State, action_kinds
from .errors import (
    EndlessGame,
    IllegalAction,
    InvalidOptions,
    InvalidState,
    RecordError,
    RulesError,
    UnknownGame,
)
from .registry import all_games, game_names, get_game

__all__ = [
    "JSON",
    "Action",
    "EndlessGame",
    "Event",
    "Game",
    "IllegalAction",
    "InvalidOptions",
    "InvalidState",
    "Option",
    "RecordError",
    "RulesError",
    "State",
    "UnknownGame",
    "action_kinds",
    "all_games",
    "game_names",
    "get_game",
]
