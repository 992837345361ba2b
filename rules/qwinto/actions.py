"""Qwinto's actions on the wire (rules/actions.py): `roll` names dice, `enter` a box."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from ..actions import ActionFields, Word

MAX_DICE = 6
MAX_BOX = 9


class QwintoAction(ActionFields, kw_only=True):
    """`roll`: `dice`, colours; `enter`: `row`, a colour, and `box`, 0..9; `reroll`, `pass`."""

    dice: Annotated[list[Word], Meta(max_length=MAX_DICE)] | None = None
    row: Word | None = None
    box: Annotated[int, Meta(ge=0, le=MAX_BOX)] | None = None
