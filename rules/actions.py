"""What a game's actions may look like on the wire: each game declares its own schema.

An action is a map with a `type` (an action word) and the fields of its game. A game says
which fields, of which types and within which bounds, in a msgspec Struct that subclasses
`ActionFields` (rules/NAME/actions.py) and is given to its `Game` as `actions=`. The
protocol carries an action as a plain map; the server checks each `act` against the room's
game's Struct before the engine sees it (`wire_action`), so that a new game, with fields no
other game has, needs no change outside its own folder. The Struct checks shapes only
(types, lengths, ranges); the engine still judges the action's legality.

The constraints live in the types so that one conversion checks them all, and a game's page
(docs/games/NAME.md) names every field.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Meta

MAX_WORD = 32
"""The longest action word (`type`, colours, rows...): the protocol's words' bound
(protocol/limits.py, `MAX_WORD`)."""

Word = Annotated[str, Meta(min_length=1, max_length=MAX_WORD)]
"""A word of an action: a row, a column, a colour (the engine checks which ones exist)."""


class ActionFields(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """The fields every game's actions have: `type` alone, enough for a game whose actions
    carry nothing else. A game with fields subclasses it, each field optional (`None`):
    which fields an action type needs is the engine's to say (`illegal-action`), as an
    unknown field or a wrong type is the schema's."""

    type: Word


def wire_action(schema: type[ActionFields], action: object) -> dict[str, Any]:
    """`action` checked against a game's `schema`, as the plain map its engine takes (fields
    absent or null left out). Raises `msgspec.ValidationError` saying where it is wrong."""
    out: dict[str, Any] = msgspec.to_builtins(msgspec.convert(action, schema))
    return out


def action_fields(schema: type[ActionFields]) -> list[str]:
    """The names of the fields a game's actions may have, `type` first."""
    return [f.encode_name for f in msgspec.structs.fields(schema)]
