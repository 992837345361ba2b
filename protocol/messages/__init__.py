"""The v1 messages: typed, validated while decoding, and the source of the JSON Schemas."""

from __future__ import annotations

import msgspec


def type_name(cls: type[msgspec.Struct]) -> str:
    """The wire `type` of a message class."""
    tag = cls.__struct_config__.tag
    if not isinstance(tag, str):
        raise TypeError(f"{cls.__name__} is not a tagged message")
    return tag
