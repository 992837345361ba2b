"""Qwixx's actions on the wire (rules/actions.py): `mark` a number in a row, or `pass`."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from ..actions import ActionFields, Word

MIN_NUMBER, MAX_NUMBER = 2, 12


class QwixxAction(ActionFields, kw_only=True):
    """`mark`: `row`, a colour, and `number`, 2..12; `pass`."""

    row: Word | None = None
    number: Annotated[int, Meta(ge=MIN_NUMBER, le=MAX_NUMBER)] | None = None
