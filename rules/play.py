"""Drive a state to its end offline: chance from the state's own seed, actions from a chooser.

Used by the demo, the conformance tests, benchmarks and (later) the arena; the server drives
states itself because it waits on real seats and deadlines.
"""

from __future__ import annotations

from collections.abc import Callable
from random import Random

from .base import JSON, Action, State
from .errors import EndlessGame

Chooser = Callable[[State, int], Action | None]
"""Returns the seat's action, or None to let its window time out."""


def step(state: State, choose: Chooser, log: list[JSON] | None = None) -> None:
    """Advance by one chance outcome, one action or one time-out."""
    if state.chance_pending():
        outcome, _ = state.resolve_chance()
        if log is not None:
            log.append({"chance": outcome})
        return
    seat = state.actors()[0]
    action = choose(state, seat)
    if action is None:
        state.apply_timeout(seat)
        if log is not None:
            log.append({"seat": seat, "timeout": True})
    else:
        state.apply_action(seat, action)
        if log is not None:
            log.append({"seat": seat, "action": dict(action)})


def play_out(
    state: State, choose: Chooser, log: list[JSON] | None = None, max_steps: int = 1_000_000
) -> int:
    """Play until the game is over; returns the number of steps taken."""
    steps = 0
    while not state.is_over():
        if steps >= max_steps:
            raise EndlessGame(f"{state.game_name} did not end within {max_steps} steps")
        step(state, choose, log)
        steps += 1
    return steps


def random_chooser(rng: Random) -> Chooser:
    """Uniform over the legal actions of the seat."""

    def choose(state: State, seat: int) -> Action:
        return rng.choice(state.legal_actions(seat))

    return choose
