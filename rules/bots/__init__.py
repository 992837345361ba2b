"""Bot policies: one class per bot, one decision method, no I/O.

They live in rules/ (not clients/) because two callers share them: `dicehall bot` in
clients/ and the server's house bots, and the server never imports clients/. A bot sees
exactly what a seat sees over the wire: its view and its legal actions. Importing this
package registers every kind: `random` (every game), `greedy` and `strong` (per game, in
rules/bots/NAME.py for the game NAME: found rather than named, so that a new game's bots
need no line here).
"""

from __future__ import annotations

import importlib
import pkgutil

from ..registry import game_names
from . import greedy  # noqa: F401  (registration)
from .base import Bot, RandomBot, bot_names, get_bot, register


def _import_bots() -> None:
    for found in pkgutil.iter_modules(__path__):
        if found.name in game_names():
            importlib.import_module(f"{__name__}.{found.name}")  # (registers its bots)


_import_bots()

__all__ = ["Bot", "RandomBot", "bot_names", "get_bot", "register"]
