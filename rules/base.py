"""The one interface every game offers (after OpenSpiel's State and boardgame.io's playerView).

A game is a `Game` (static facts: name, seat range, options, presets) that makes `State`s.
A state moves forward three ways, and only through these:

- `apply_action(seat, action)`: a seat's answer in the current turn window;
- `apply_chance(outcome)`: a roll or a draw, when `chance_pending()`; the state proposes
  its own with `sample_chance()` (derived from its seed, see rules/fair.py), a replayed
  record may impose a written one;
- `apply_timeout(seat)`: the default docs/rules.md gives a seat whose window ran out.

Windows: `actors()` are the seats that still owe an answer in window `window()`. Several
seats answer the same roll at once; their answers are held until the last one is in (or
timed out) and then applied together. A new window id means a new deadline.

Every mutator validates first and raises `IllegalAction` (with a stable `rule` name)
leaving the state exactly as it was.

Each mutator returns what happened as a list of typed events (`RuleEvent`): `Applied` (a
seat's action took effect), `TimedOut` (a seat's window ran out: its default follows),
`Answered` (a seat answered a shared window, what it chose hidden until the window
resolves), `Public` (any other event of the game, as everyone sees it) and `Private` (one
event as its own seat sees it and as everyone else does). `wire()` gives an event's JSON,
which is what the server sends as it is: `Private.wire()` is the public form; its seat is
sent `mine.wire()` instead.

An answer held back: `apply_action` returns `[Answered(seat, held=True)]` alone exactly
when the answer is in, the window stays open with the same id, and nobody else can see
anything change but who has answered (`held_answer` reads it). The server keeps that
event back, unnumbered, until the window resolves, so a shared window costs one commit
rather than one per answer (server/rooms/room.py); tests/rules/test_conformance.py holds every
game to it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from .actions import ActionFields
from .errors import IllegalAction, InvalidOptions, InvalidState
from .fair import Draw, commitment, new_seed
from .text import DEFAULT, Presentation

Action = Mapping[str, Any]
JSON = dict[str, Any]

S = TypeVar("S", bound="State")


# --- events ---------------------------------------------------------------------------
# Plain classes rather than dataclasses, as every act builds a few: compiled, one costs a
# third of what its dict does, a dataclass twice and a frozen one five times the dict; in
# pure Python a frozen dataclass costs four times the dict, a plain class under two. Nothing
# changes an event once made.


class _Event:
    """What every event shares: equality and a repr by its fields (tests compare them)."""

    __slots__ = ()

    def fields(self) -> tuple[object, ...]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and isinstance(other, _Event)
            and other.fields() == self.fields()
        )

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self.fields()!r}"


class Public(_Event):
    """An event of the game's own (a roll, a turn, the end) that every member sees as it
    is: `data` is its wire JSON, "type" first."""

    __slots__ = ("data",)

    def __init__(self, data: JSON) -> None:
        self.data = data

    def fields(self) -> tuple[object, ...]:
        return (self.data,)

    def wire(self) -> JSON:
        return self.data


class Applied(_Event):
    """`seat`'s `action` took effect, in canonical form; `extra` adds what it scored
    (Qwirkle's points and qwirkles, Yamb's value) after the action on the wire."""

    __slots__ = ("action", "extra", "seat")

    def __init__(self, seat: int, action: JSON, extra: JSON | None = None) -> None:
        self.seat = seat
        self.action = action
        self.extra = extra

    def fields(self) -> tuple[object, ...]:
        return (self.seat, self.action, self.extra)

    def wire(self) -> JSON:
        out: JSON = {"type": "applied", "seat": self.seat, "action": self.action}
        if self.extra:
            out.update(self.extra)
        return out


class TimedOut(_Event):
    """`seat`'s window ran out; the events of its default (docs/rules.md) follow."""

    __slots__ = ("seat",)

    def __init__(self, seat: int) -> None:
        self.seat = seat

    def fields(self) -> tuple[object, ...]:
        return (self.seat,)

    def wire(self) -> JSON:
        return {"type": "timeout", "seat": self.seat}


class Answered(_Event):
    """`seat` answered a shared window (Qwinto, Qwixx); what it chose stays hidden until
    the window resolves, when an `Applied` per seat says it. `held`: the answer changed
    nothing else anyone can see and the window stays open, same id (the module
    docstring's held-back answer); not when it resolved the window or opened a new one."""

    __slots__ = ("held", "seat")

    def __init__(self, seat: int, held: bool = False) -> None:
        self.seat = seat
        self.held = held

    def fields(self) -> tuple[object, ...]:
        return (self.seat, self.held)

    def wire(self) -> JSON:
        return {"type": "answered", "seat": self.seat}


class Private(_Event):
    """One event told two ways: `seat` sees `mine` (Qwirkle: the tiles it drew), every
    other member `public` (how many). Both go out under one seq."""

    __slots__ = ("mine", "public", "seat")

    def __init__(self, seat: int, mine: Public | Applied, public: Public | Applied) -> None:
        self.seat = seat
        self.mine = mine
        self.public = public

    def fields(self) -> tuple[object, ...]:
        return (self.seat, self.mine, self.public)

    def wire(self) -> JSON:
        """What everyone but `seat` sees."""
        return self.public.wire()


RuleEvent = Public | Applied | TimedOut | Answered | Private


def held_answer(events: list[RuleEvent]) -> Answered | None:
    """The `Answered` of an answer held back (`apply_action` returned it alone, `held`),
    or None: see the module docstring."""
    if len(events) == 1:
        event = events[0]
        if isinstance(event, Answered) and event.held:
            return event
    return None


def as_wire(events: Iterable[RuleEvent], seat: int | None = None) -> list[JSON]:
    """The events' JSON as `seat` sees them (None: a spectator), for tools and tests; the
    room sends both forms of a `Private` itself."""
    return [
        e.mine.wire() if isinstance(e, Private) and e.seat == seat else e.wire() for e in events
    ]


@dataclass(frozen=True)
class Option:
    """One game option: a bool, an int in [low, high], or a choice of strings."""

    name: str
    default: bool | int | str
    description: str
    low: int | None = None
    high: int | None = None
    choices: tuple[str, ...] = ()

    def check(self, value: object) -> bool | int | str:
        if isinstance(self.default, bool):
            if not isinstance(value, bool):
                raise InvalidOptions(f"option {self.name!r} must be true or false")
            return value
        if isinstance(self.default, int):
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidOptions(f"option {self.name!r} must be an integer")
            if (self.low is not None and value < self.low) or (
                self.high is not None and value > self.high
            ):
                raise InvalidOptions(
                    f"option {self.name!r} must be between {self.low} and {self.high}"
                )
            return value
        if not isinstance(value, str) or value not in self.choices:
            raise InvalidOptions(f"option {self.name!r} must be one of {list(self.choices)}")
        return value

    def describe(self) -> JSON:
        out: JSON = {"name": self.name, "default": self.default, "description": self.description}
        if self.low is not None:
            out["min"] = self.low
        if self.high is not None:
            out["max"] = self.high
        if self.choices:
            out["choices"] = list(self.choices)
        return out


@dataclass(frozen=True)
class Game:
    """Static facts about a game and the factory of its states."""

    name: str
    title: str
    min_seats: int
    max_seats: int
    state_class: type[State]
    options: tuple[Option, ...] = ()
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    score_sheet: Callable[[Any], tuple[int, str]] | None = None
    """Scores and draws a hand-filled sheet given as JSON (`dicehall sheet`)."""
    render_view: Callable[[Mapping[str, Any], int, str], str] | None = None
    """`render(seat, name)` from `view(seat)` alone: clients draw canonical sheets with it."""
    text: Presentation = DEFAULT
    """How the game reads at a terminal (rules/NAME/text.py): legend, dice, move numbers."""
    actions: type[ActionFields] = ActionFields
    """The schema of its actions on the wire (rules/NAME/actions.py; rules/actions.py): the
    server checks every `act` against it. The default takes a `type` and nothing else."""

    def resolve_options(
        self, options: Mapping[str, Any] | None = None, preset: str | None = None
    ) -> JSON:
        """Defaults, then the preset, then explicit options; everything validated."""
        if not isinstance(options, Mapping | None):
            raise InvalidOptions("options must be a map")
        by_name = {o.name: o for o in self.options}
        out: JSON = {o.name: o.default for o in self.options}
        if preset is not None:
            if preset not in self.presets:
                raise InvalidOptions(
                    f"{self.name} has no preset {preset!r}; presets: {sorted(self.presets)}"
                )
            out.update(self.presets[preset])
        for key, value in (options or {}).items():
            if key not in by_name:
                raise InvalidOptions(
                    f"{self.name} has no option {key!r}; options: {sorted(by_name)}"
                )
            out[key] = by_name[key].check(value)
        return out

    def check_seats(self, seats: object) -> int:
        if isinstance(seats, bool) or not isinstance(seats, int):
            raise InvalidOptions("the number of seats must be an integer")
        if not self.min_seats <= seats <= self.max_seats:
            raise InvalidOptions(
                f"{self.name} is played by {self.min_seats} to {self.max_seats} seats, not {seats}"
            )
        return seats

    def new_state(
        self,
        seats: object,
        options: Mapping[str, Any] | None = None,
        seed: bytes | None = None,
        preset: str | None = None,
    ) -> State:
        n = self.check_seats(seats)
        opts = self.resolve_options(options, preset)
        return self.state_class.new(n, opts, seed if seed is not None else new_seed())

    def state_from_dict(self, data: Mapping[str, Any]) -> State:
        try:
            if data.get("game") != self.name:
                raise InvalidState(f"not a {self.name} state")
            return self.state_class.from_dict(data)
        except InvalidState:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise InvalidState(f"malformed {self.name} state: {exc!r}") from exc

    def describe(self) -> JSON:
        return {
            "name": self.name,
            "title": self.title,
            "min_seats": self.min_seats,
            "max_seats": self.max_seats,
            "options": [o.describe() for o in self.options],
            "presets": {k: dict(v) for k, v in self.presets.items()},
        }


class State(ABC):
    """The authoritative state of one game. See the module docstring for the contract."""

    game_name: ClassVar[str]

    seats: int
    options: JSON
    seed: bytes
    chance_count: int

    # --- construction and serialisation -------------------------------------------------

    @classmethod
    @abstractmethod
    def new(cls: type[S], seats: int, options: JSON, seed: bytes) -> S:
        """A fresh game; may start with chance pending (the first roll or the deal)."""

    @abstractmethod
    def to_dict(self) -> JSON:
        """A JSON-able dict that `from_dict` turns back into an equal state."""

    @classmethod
    @abstractmethod
    def from_dict(cls: type[S], data: Mapping[str, Any]) -> S: ...

    @abstractmethod
    def clone(self: S) -> S:
        """An independent copy (bots search on clones)."""

    def _base_dict(self) -> JSON:
        return {
            "game": self.game_name,
            "seats": self.seats,
            "options": dict(self.options),
            "seed": self.seed.hex(),
            "chance_count": self.chance_count,
        }

    def _load_base(self, data: Mapping[str, Any]) -> None:
        self.seats = int(data["seats"])
        self.options = dict(data["options"])
        self.seed = bytes.fromhex(data["seed"])
        self.chance_count = int(data["chance_count"])

    def commitment(self) -> str:
        return commitment(self.seed)

    # --- whose move ----------------------------------------------------------------------

    @abstractmethod
    def actors(self) -> tuple[int, ...]:
        """Seats that still owe an answer in the current window (empty on chance or over)."""

    @abstractmethod
    def window(self) -> int:
        """Id of the current turn window; it changes exactly when a new window opens."""

    @abstractmethod
    def legal_actions(self, seat: int) -> list[JSON]:
        """Every legal action of `seat` now, in canonical form (empty if it may not act)."""

    def legal_kinds(self, seat: int) -> list[str]:
        return action_kinds(self.legal_actions(seat))

    @abstractmethod
    def apply_action(self, seat: object, action: Action) -> list[RuleEvent]: ...

    @abstractmethod
    def apply_timeout(self, seat: object) -> list[RuleEvent]:
        """Apply the rules' default (docs/rules.md) for an actor whose window ran out.

        May leave chance pending (a Yamb seat that never rolled gets its roll first); the
        driver resolves it and, while the seat is still an actor of the same window, calls
        this again.
        """

    # --- chance --------------------------------------------------------------------------

    @abstractmethod
    def chance_pending(self) -> bool: ...

    @abstractmethod
    def sample_chance(self) -> JSON:
        """The outcome the seed gives for the pending chance event; changes nothing."""

    @abstractmethod
    def apply_chance(self, outcome: Mapping[str, Any]) -> list[RuleEvent]:
        """Apply a chance outcome (validated: it must be a possible one)."""

    def resolve_chance(self) -> tuple[JSON, list[RuleEvent]]:
        outcome = self.sample_chance()
        return outcome, self.apply_chance(outcome)

    def _draw(self) -> Draw:
        if not self.chance_pending():
            raise IllegalAction("no chance event is pending", "no-chance-pending")
        return Draw(self.seed, self.chance_count)

    # --- results and views ---------------------------------------------------------------

    @abstractmethod
    def is_over(self) -> bool: ...

    @abstractmethod
    def scores(self) -> list[int]:
        """Current score of every seat (final once the game is over)."""

    def winners(self) -> list[int]:
        """Seats that share first place; games with tie-breaks override this."""
        s = self.scores()
        best = max(s)
        return [i for i, v in enumerate(s) if v == best]

    @abstractmethod
    def view(self, seat: int | None) -> JSON:
        """What `seat` may know (None: a spectator); never another seat's hidden info."""

    def hidden(self, seat: int) -> list[Any]:
        """JSON values of `seat` that nobody else may see now (a held answer, a hand)."""
        return []

    @abstractmethod
    def render(self, seat: int, name: str = "") -> str:
        """The canonical text sheet of `seat` (docs/rules.md), with points once the game is over."""

    # --- helpers for subclasses --------------------------------------------------------

    def _check_actor(self, seat: object) -> int:
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.seats:
            raise IllegalAction(f"there is no seat {seat!r}", "no-such-seat")
        if self.is_over():
            raise IllegalAction("the game is over", "game-over")
        if self.chance_pending():
            raise IllegalAction("the dice have not been rolled yet", "chance-pending")
        if seat not in self.actors():
            raise IllegalAction(f"seat {seat} may not act now", "not-your-turn")
        return seat

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.to_dict() == other.to_dict()

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]


def action_kinds(actions: Iterable[JSON]) -> list[str]:
    """The kinds (`type`s) among `actions`, sorted: `State.legal_kinds` of a seat whose
    legal actions are known already (a driver that has the list needs no second one)."""
    return sorted({a["type"] for a in actions})


def is_map(value: object) -> bool:
    """`isinstance(value, Mapping)`, asked of a dict first: an action is checked on every
    act, and the ABC's check is a Python call where a dict's is one C test (half a per
    cent of a loaded server's samples, docs/benchmarks/journal.md, "Cheaper acts")."""
    return isinstance(value, (dict, Mapping))  # (in this order)


def field_of(action: Action, key: str, kind: type, rule: str = "malformed-action") -> Any:
    """Read a required field of the given exact type (bool is not an int)."""
    if not is_map(action):
        raise IllegalAction("an action must be a map", rule)
    if key not in action:
        raise IllegalAction(f"the action needs a {key!r} field", rule)
    value = action[key]
    if kind is int and isinstance(value, bool):
        raise IllegalAction(f"{key!r} must be an integer", rule)
    if not isinstance(value, kind):
        raise IllegalAction(f"{key!r} must be of type {kind.__name__}", rule)
    return value


def action_type(action: Action, allowed: Iterable[str]) -> str:
    if not is_map(action):
        raise IllegalAction("an action must be a map with a 'type'", "malformed-action")
    kind = action.get("type")
    if not isinstance(kind, str):
        raise IllegalAction("an action must have a string 'type'", "malformed-action")
    allowed = tuple(allowed)
    if kind not in allowed:
        raise IllegalAction(
            f"unknown action type {kind!r}; this game takes {list(allowed)}", "unknown-action"
        )
    return kind


def check_fields(action: Action, allowed: Iterable[str]) -> None:
    extra = set(action) - {"type", *allowed}
    if extra:
        raise IllegalAction(f"unexpected fields {sorted(extra)}", "malformed-action")
