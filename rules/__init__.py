"""Pure game engines: no I/O, no asyncio, no imports from the rest of dicehall.

Importing this package registers every game; look them up with `get_game(name)`.
"""

from . import qwinto, qwirkle, qwixx, yamb  # noqa: F401  (registration)
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
