"""The Pig game state (docs/rules.md, Pig): roll on for points, or bank them; a 1 loses them.

A turn is the active seat's: it rolls one or two dice (`count`) as often as it likes,
adding their sum to the turn's points, until it banks them or rolls a 1, which ends the
turn with nothing. The game ends when a seat has banked `goal` points, or after ten turns
of every seat.
"""

# mypyc: compiled (a hot module: server/compiled.py)

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import (
    JSON,
    Action,
    Applied,
    Public,
    RuleEvent,
    State,
    TimedOut,
    action_type,
    check_fields,
    field_of,
)
from ..errors import IllegalAction, InvalidState

TURNS_EACH = 10
"""Turns every seat has at most: a game of time-outs (each banks nothing) ends too."""


def render(points: int, name: str, over: bool) -> str:
    """A seat's canonical text: its banked points, final once the game is over."""
    return f"{name}: {points} points" + (" (final)" if over else "")


class PigState(State):
    game_name = "pig"

    def __init__(self) -> None:
        self.points: list[int] = []
        self.turn = 0
        self.turns = 0
        self.pot = 0
        self.pending = 0
        """Dice to roll (the chance pending), 0 when none."""
        self.dice: list[int] = []
        self.win = 0

    @classmethod
    def new(cls, seats: int, options: JSON, seed: bytes) -> PigState:
        state = cls()
        state.seats, state.options, state.seed, state.chance_count = seats, options, seed, 0
        state.points = [0] * seats
        return state

    def to_dict(self) -> JSON:
        keys = ("points", "turn", "turns", "pot", "pending", "dice", "win")
        return {**self._base_dict(), **{k: getattr(self, k) for k in keys}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PigState:
        state = cls()
        state._load_base(data)
        state.points = [int(p) for p in data["points"]]
        state.turn, state.turns, state.pot = int(data["turn"]), int(data["turns"]), int(data["pot"])
        state.pending, state.dice = int(data["pending"]), [int(d) for d in data["dice"]]
        state.win = int(data["win"])
        if len(state.points) != state.seats or not 0 <= state.turn < state.seats:
            raise InvalidState("malformed pig state")
        return state

    def clone(self) -> PigState:
        return PigState.from_dict(self.to_dict())

    def is_over(self) -> bool:
        goal = int(self.options["goal"])
        return max(self.points) >= goal or self.turns >= TURNS_EACH * self.seats

    def actors(self) -> tuple[int, ...]:
        return () if self.is_over() or self.pending else (self.turn,)

    def window(self) -> int:
        return self.win

    def legal_actions(self, seat: int) -> list[JSON]:
        if seat not in self.actors():
            return []
        return [{"type": "roll", "count": 1}, {"type": "roll", "count": 2}, {"type": "bank"}]

    def apply_action(self, seat: object, action: Action) -> list[RuleEvent]:
        actor = self._check_actor(seat)
        if action_type(action, ("roll", "bank")) == "bank":
            check_fields(action, ())
            return self._bank(actor)
        check_fields(action, ("count",))
        count = field_of(action, "count", int)
        if count not in (1, 2):
            raise IllegalAction(f"roll 1 or 2 dice, not {count}", "no-such-count")
        self.pending = count
        return [Applied(actor, {"type": "roll", "count": count})]

    def apply_timeout(self, seat: object) -> list[RuleEvent]:
        actor = self._check_actor(seat)
        return [TimedOut(actor), *self._bank(actor)]

    def _bank(self, seat: int) -> list[RuleEvent]:
        points, self.pot = self.pot, 0
        self.points[seat] += points
        return [Applied(seat, {"type": "bank"}, {"points": points}), *self._next_turn()]

    def _next_turn(self) -> list[RuleEvent]:
        self.turns += 1
        if self.is_over():
            return [Public({"type": "game_over", "scores": self.scores()})]
        self.turn, self.win = (self.turn + 1) % self.seats, self.win + 1
        return [Public({"type": "turn", "seat": self.turn})]

    def chance_pending(self) -> bool:
        return self.pending > 0

    def sample_chance(self) -> JSON:
        return {"dice": self._draw().dice(self.pending)}

    def apply_chance(self, outcome: Mapping[str, Any]) -> list[RuleEvent]:
        dice = outcome.get("dice") if isinstance(outcome, Mapping) else None
        if not self.pending:
            raise IllegalAction("no chance event is pending", "no-chance-pending")
        if (
            not isinstance(dice, list)
            or len(dice) != self.pending
            or any(type(d) is not int or not 1 <= d <= 6 for d in dice)
        ):
            raise IllegalAction(f"a pig roll is {self.pending} dice 1..6", "impossible-outcome")
        self.chance_count, self.pending, self.dice = self.chance_count + 1, 0, list(dice)
        events: list[RuleEvent] = [Public({"type": "rolled", "seat": self.turn, "dice": dice})]
        if 1 in dice:
            self.pot = 0
            return events + self._next_turn()
        self.pot += sum(dice)
        self.win += 1
        return events

    def scores(self) -> list[int]:
        return list(self.points)

    def view(self, seat: int | None) -> JSON:
        return {
            "seats": self.seats,
            "turn": self.turn,
            "pot": self.pot,
            "dice": list(self.dice),
            "scores": self.scores(),
            "goal": self.options["goal"],
            "over": self.is_over(),
        }

    def render(self, seat: int, name: str = "") -> str:
        return render(self.points[seat], name, self.is_over())
