"""Pig's actions on the wire (rules/actions.py): `roll` one or two dice, or `bank`."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from ..actions import ActionFields


class PigAction(ActionFields, kw_only=True):
    """`roll`: `count`, how many dice, 1 or 2; `bank`."""

    count: Annotated[int, Meta(ge=1, le=2)] | None = None
