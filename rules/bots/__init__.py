"""Bot policies: one class per bot, one decision method, no I/O.

They live in rules/ (not clients/) because two callers share them: `dicehall bot` in
clients/ and the server's house bots, and the server never imports clients/. A bot sees
exactly what a seat sees over the wire: its view and its legal actions. Importing this
package registers every kind: `random` (every game), `greedy` and `strong` (per game).
"""

from __future__ import annotations

from . import greedy, qwinto, qwirkle, qwixx, yamb  # noqa: F401  (registration)
from .base import Bot, RandomBot, bot_names, get_bot, register

__all__ = ["Bot", "RandomBot", "bot_names", "get_bot", "register"]
