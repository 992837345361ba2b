"""What our RESP connections (resp.py, sentinel.py) send and get, typed."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import hiredis

Arg = bytes | str | int | float
"""A part of a command, as hiredis packs it."""

Reply = bytes | int | None | list["Reply"]
"""A reply as hiredis parses it (RESP2): a string (bulk or simple) as bytes, an integer,
nil, or an array of replies. An error reply is a `ResponseError`: raised, never returned."""

pack = cast(Callable[[tuple[Arg, ...]], bytes], hiredis.pack_command)
"""A command in RESP. (hiredis's stub types the command as a one-element tuple; any
number of parts is meant.)"""
