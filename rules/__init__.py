"""Pure game engines: no I/O, no asyncio, no imports from the rest of dicehall.

Importing this package registers every game: each folder rules/NAME/ but bots/ is a game's
package, imported here, found rather than named, so that a new game's folder is the whole
of its engine (docs/contributing.md, "Adding a game"). Look games up with `get_game(name)`.
"""

import importlib
import pkgutil

from .actions import ActionFields, wire_action
from .base import (
    JSON,
    Action,
    Answered,
    Applied,
    Game,
    Option,
    Private,
    Public,
    RuleEvent,
    State,
    TimedOut,
    action_kinds,
    as_wire,
    held_answer,
)
from .errors import (
    EndlessGame,
    IllegalAction,
    InvalidOptions,
    InvalidState,
    RecordError,
    RulesError,
    UnknownGame,
)
from .registry import all_games, game_names, get_game, presentation
from .text import Presentation, Tally

NOT_GAMES = frozenset({"bots"})
"""The packages of rules/ that are not games."""


def _import_games() -> None:
    for found in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if found.ispkg and found.name not in NOT_GAMES:
            importlib.import_module(f"{__name__}.{found.name}")  # (registers the game)


_import_games()

__all__ = [
    "JSON",
    "Action",
    "ActionFields",
    "Answered",
    "Applied",
    "EndlessGame",
    "Game",
    "IllegalAction",
    "InvalidOptions",
    "InvalidState",
    "Option",
    "Presentation",
    "Private",
    "Public",
    "RecordError",
    "RuleEvent",
    "RulesError",
    "State",
    "Tally",
    "TimedOut",
    "UnknownGame",
    "action_kinds",
    "all_games",
    "as_wire",
    "game_names",
    "get_game",
    "held_answer",
    "presentation",
    "wire_action",
]
