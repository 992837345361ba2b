"""JSON-shaped data, typed: what a game record, a rules state's map and an answer's body
are made of, and what the server passes on without reading (docs/records.md).

A recursive alias, so that what reads such data narrows each value before it uses it;
msgspec cannot decode to it (it does not resolve the forward references), so a msgspec
Struct's field of such data is typed `object`, which msgspec decodes as anything.
"""

from __future__ import annotations

Json = None | bool | int | float | str | list["Json"] | dict[str, "Json"]
"""One JSON value."""

JsonObject = dict[str, Json]
"""A JSON object: a record, a state's map, an event's wire form."""
