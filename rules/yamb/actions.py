"""Yamb's actions on the wire (rules/actions.py): `roll` holding dice, `call`, `write`."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from ..actions import ActionFields, Word

MAX_DICE = 6
MAX_DIE_INDEX = 5


class YambAction(ActionFields, kw_only=True):
    """`roll`: `hold`, dice indexes 0..5; `call`: `row`; `write`: `column`, `row`."""

    hold: (
        Annotated[list[Annotated[int, Meta(ge=0, le=MAX_DIE_INDEX)]], Meta(max_length=MAX_DICE)]
        | None
    ) = None
    row: Word | None = None
    column: Word | None = None
