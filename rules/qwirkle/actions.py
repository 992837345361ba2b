"""Qwirkle's actions on the wire (rules/actions.py): `place` or `swap` tiles, or `pass`."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from ..actions import ActionFields, Word

MAX_TILES = 6
MAX_COORD = 256
"""108 tiles can never reach further than this from the origin."""

Coord = Annotated[int, Meta(ge=-MAX_COORD, le=MAX_COORD)]


class Tile(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """A tile: `x` and `y` when placed, absent when swapped."""

    color: Word
    shape: Word
    x: Coord | None = None
    y: Coord | None = None


class QwirkleAction(ActionFields, kw_only=True):
    """`place`: `tiles` with their `x`, `y`; `swap`: `tiles` without; `pass`."""

    tiles: Annotated[list[Tile], Meta(max_length=MAX_TILES)] | None = None
