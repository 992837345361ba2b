"""A token bucket with an injected clock, so rate limiting is tested without sleeping."""

from __future__ import annotations

from enum import Enum
from typing import Final


class Admission(Enum):
    ALLOW = "allow"
    LIMIT = "limit"
    """Over the rate: refuse this message, keep the connection."""
    CLOSE = "close"
    """Far over the rate (a flood): close the connection."""


_ALLOW: Final = Admission.ALLOW
_LIMIT: Final = Admission.LIMIT
_CLOSE: Final = Admission.CLOSE
"""(The members as module constants, for every message of every client: a lookup on an
enum class costs five times a plain attribute's; docs/contributing.md, "Hot paths".)"""


class TokenBucket:
    """`burst` tokens refilled at `rate` per second; each message takes one.

    The bucket may run into debt down to -`burst`: messages in debt are refused, and the
    debt only shrinks while the client slows down, so a client that ignores the refusals
    soon passes the floor and is closed (its debt stops at -`burst` - 1), while one that
    backs off recovers.
    """

    __slots__ = ("_burst", "_last", "_rate", "_tokens")

    def __init__(self, rate: float, burst: int, now: float) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate and burst must be positive")
        self._rate = rate
        self._burst = float(burst)  # (a float: `tokens = burst` below stays one float)
        self._tokens = float(burst)
        self._last = now

    @property
    def tokens(self) -> float:
        return self._tokens

    def take(self, now: float) -> Admission:
        # (comparisons, not min and max: this runs for every message of every client)
        tokens = self._tokens
        if now > self._last:
            tokens += (now - self._last) * self._rate
            self._last = now
        burst = self._burst
        if tokens > burst:
            tokens = burst
        tokens -= 1.0
        if tokens >= 0:
            self._tokens = tokens
            return _ALLOW
        # (a flood past the floor stays at it: what a closed client owes grows no further)
        floor = -burst - 1.0
        self._tokens = tokens if tokens > floor else floor
        if tokens >= -burst:
            return _LIMIT
        return _CLOSE
