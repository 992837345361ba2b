"""The HTTP API's parameters (path segments and query strings), each parsed once and
strictly: a value its endpoint cannot take is a 400 with a sentence naming the parameter,
never an exception further in.

Why not `str.isdigit()` and `int()`: `isdigit()` accepts "²" and "٣", which `int()` then
refuses (or reads as 3); `int()` refuses a number of more than 4,300 digits; and SQLite
refuses an integer of 2**63 or more. So a number is ASCII digits only, no longer than its
bound, within its bound; an id is the characters ids are made of, no longer than they get.
docs/operations.md ("Limits of the HTTP API") lists every bound.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

Params = Mapping[str, str]
"""A request's path parameters and query string, as one map."""

_DIGITS = re.compile(r"[0-9]+")
GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A stored game's id is its room's (server/backends/base.py: eight URL-safe characters;
`dicehall arena --rated` names its own `arena-RUN-N`), at most the 64 the table keeps."""
PLAYER_ID = re.compile(r"[A-Za-z0-9_:-]{1,64}")
"""A player id (protocol.messages.fields.PlayerId): a random URL-safe id, or `house:KIND`."""
MAX_TIME = 2**63 - 1
"""Unix milliseconds as the database keeps them (a signed 64-bit integer)."""


class BadParameter(Exception):
    """A parameter its endpoint cannot take: the request gets a 400 with this message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def number(params: Params, name: str, low: int, high: int, default: int) -> int:
    """`name` as a whole number from `low` to `high` (`default` when absent)."""
    text = params.get(name)
    if text is None:
        return default
    return _whole(text, name, low, high)


def _is_whole(text: str, low: int, high: int) -> bool:
    # (the length first: int() of thousands of digits costs time before it refuses them)
    return (
        len(text) <= len(str(high)) and bool(_DIGITS.fullmatch(text)) and low <= int(text) <= high
    )


def _whole(text: str, name: str, low: int, high: int) -> int:
    if not _is_whole(text, low, high):
        raise BadParameter(f"{name} must be a whole number from {low} to {high} (digits 0-9)")
    return int(text)


def identifier(params: Params, name: str, pattern: re.Pattern[str], what: str) -> str:
    """`name` (a path parameter: always there) when `pattern` matches all of it."""
    text = params[name]
    if not pattern.fullmatch(text):
        raise BadParameter(f"{name} is not {what}")
    return text


def cursor(params: Params, name: str) -> tuple[int, str] | None:
    """A page's cursor, `MILLISECONDS:GAME_ID` as a page's `next` gives it (None: absent)."""
    text = params.get(name)
    if text is None:
        return None
    at, _, game_id = text.partition(":")
    if GAME_ID.fullmatch(game_id) and _is_whole(at, 0, MAX_TIME):
        return int(at), game_id
    raise BadParameter(f"{name} must be a cursor from a page's `next` (MILLISECONDS:GAME_ID)")


def choice(params: Params, name: str, allowed: frozenset[str], where: str) -> str | None:
    """`name` when it is one of `allowed` (None: absent); `where` says where they are listed."""
    text = params.get(name)
    if text is not None and text not in allowed:
        raise BadParameter(f"{name} {text[:40]!r} is not known: {where} lists them")
    return text
