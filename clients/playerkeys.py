"""Player keys kept between runs of `dicehall play`, one per server.

A player key is who you are to a server (docs/protocol.md, "identity"): the first `hello`
gets one, and sending it again makes every later game yours, on every process of that
deployment. Keys are per deployment, so they are kept by the server's origin
(`ws://host:port`), in the user's state directory
(`$XDG_STATE_HOME/dicehall/player-keys.json`), readable by the user only: whoever holds a
key plays as that player.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from urllib.parse import urlsplit

from .seatstore import read_private, state_dir, write_private


def origin(url: str) -> str:
    """`ws://host:port` of a WebSocket URL: what a key belongs to (a deployment serves
    all its paths; a browser keeps one key per origin too)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class PlayerKeyStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / "player-keys.json"

    def get(self, server: str) -> str | None:
        return read_private(self.path).get(origin(server))

    def put(self, server: str, key: str) -> None:
        keys = read_private(self.path)
        if keys.get(origin(server)) == key:
            return
        keys[origin(server)] = key
        with contextlib.suppress(OSError):  # a read-only home costs the next run its identity
            write_private(self.path, keys)

    def forget(self, server: str) -> None:
        keys = read_private(self.path)
        if keys.pop(origin(server), None) is not None:
            with contextlib.suppress(OSError):
                write_private(self.path, keys)
