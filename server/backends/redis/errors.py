"""How the parts of the Redis backend tell each other that a command did not go through.

None of these reaches a client: the backend turns each into a retry, a takeover or a
protocol error (`unavailable`).
"""

from __future__ import annotations


class Interrupted(Exception):
    """A command did not complete where it was sent."""


class Retry(Interrupted):
    """The command was not run (the room has no reachable owner yet): try again shortly."""


class Fenced(Interrupted):
    """Another process runs the room now: this one must not write it."""


class Gone(Interrupted):
    """The owner a command was sent to lost the room (or never answered): it may have run."""
