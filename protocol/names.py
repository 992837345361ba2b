"""What names and chat may hold beyond their length: checked when `hello`, `join`, `create`
and `chat` are decoded (a refusal is `invalid-message`), and by clients before they send.

Names are shown to everyone, in the lobby, at the table and on leaderboards, so they hold
only characters that show. A name with a right-to-left override, a zero-width space or a
house bot's name (`strong-bot-1`) let one player pass for another there (issue 39).

- Every name (`hello.name`, `join.name`, `create.name`, `hello.client`): no character of
  the Unicode categories Cc (controls, C0 and C1), Cf (format: bidi embeddings, overrides,
  isolates and marks, zero-width spaces and joiners, soft hyphens...), Cs (surrogates), Zl
  or Zp (line and paragraph separators). The categories are those of the server's Python
  (`unicodedata.unidata_version`: Unicode 14.0 on Python 3.11).
- A player's display name (`hello.name`, `join.name`) is not of the house bots' form,
  `KIND-bot-N`, nor a house bot's player id, `house:KIND`, in any case, width or spacing
  (compared after NFKC, lower case, and runs of spaces, `_` and `-` made one `-`).
- Chat text: no control character (Cc), no line or paragraph separator (a message is one
  line), and none of the bidi embeddings, overrides and isolates (U+202A-U+202E,
  U+2066-U+2069), which reorder what follows them; the other format characters stay, as
  writing needs them (the zero-width joiner of emoji sequences, the marks of
  right-to-left text).

Look-alike letters of other scripts (a Cyrillic o, U+043E, for a Latin o) are not refused: a
name is not an identity, the player id is (docs/history.md).
"""

from __future__ import annotations

import re
import unicodedata

HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories no name may hold: characters that do not show, or break a line."""

_CHAT_REFUSED = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""What chat text may not hold: Cc, Zl, Zp, and the bidi controls that reorder text."""

_SEPARATORS = re.compile(r"[\s_-]+")
_HOUSE_BOT = re.compile(r"[a-z0-9_.:-]*-bot-[0-9]+|house:.*")
"""The house bots' seat names (`KIND-bot-N`: server/rooms/room.py) and player ids (`house:KIND`),
compared after `_fold`."""


def _describe(char: str) -> str:
    name = unicodedata.name(char, "")  # (controls have none)
    return f"U+{ord(char):04X}" + (f" ({name})" if name else "")


def hidden_character(text: str) -> str | None:
    """Why `text` cannot be a name for what it holds (None: it may be)."""
    for char in text:
        if unicodedata.category(char) in HIDDEN:
            return f"{_describe(char)} is a control or format character, which names may not hold"
    return None


def _fold(name: str) -> str:
    return _SEPARATORS.sub("-", unicodedata.normalize("NFKC", name).lower().strip())


def house_bot_name(name: str) -> bool:
    """Whether `name` would pass for a house bot's (`strong-bot-1`, `Strong Bot 1`,
    `house:strong`)."""
    return _HOUSE_BOT.fullmatch(_fold(name)) is not None


def display_name_problem(name: str) -> str | None:
    """Why `name` cannot be a player's display name (None: it may be)."""
    hidden = hidden_character(name)
    if hidden is not None:
        return hidden
    if house_bot_name(name):
        return f"{name!r} is of the house bots' form (KIND-bot-N, house:KIND); choose another"
    return None


def chat_problem(text: str) -> str | None:
    """Why `text` cannot be said in a room's chat (None: it may be)."""
    found = _CHAT_REFUSED.search(text)
    if found is None:
        return None
    char = found.group()
    return f"{_describe(char)}: chat holds no control characters, line breaks or bidi controls"


def check(field: str, problem: str | None) -> None:
    """Raise the ValueError a message's `__post_init__` turns a problem into (msgspec
    makes it a ValidationError on decode: `invalid-message`)."""
    if problem is not None:
        raise ValueError(f"{field}: {problem}")
