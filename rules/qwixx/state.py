"""The Qwixx game state: a roll, a shared white window, then the active seat's colour window.

Everything is plain ints and lists so that bots can clone and search cheaply: a seat's
row is a bitmask of boxes (see sheet.py), locks and closed rows are 4-bit masks, the dice
are a list of six ints (0 for a die that left the game).
"""

# mypyc: compiled (a hot module: server/compiled.py)

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from ..base import (
    JSON,
    Action,
    Answered,
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
from .sheet import (
    BOX,
    COLOURS,
    LAST_BOX,
    MAX_FAILED,
    NUMBER,
    ROW_OF,
    render_sheet,
    row_numbers,
    score,
)

DICE: tuple[str, ...] = ("white1", "white2", "red", "yellow", "green", "blue")

ROLL, WHITE, COLOUR, OVER = 0, 1, 2, 3
PHASES: tuple[str, ...] = ("roll", "white", "colour", "over")

_KINDS = ("mark", "pass")
_MARK_FIELDS = ("row", "number")
_NO_FIELDS: tuple[str, ...] = ()

# The canonical mark actions, built once: MARKS[row][number]. legal_actions hands out
# fresh copies so that callers may keep or change them.
_MARKS: tuple[tuple[JSON, ...], ...] = tuple(
    tuple({"type": "mark", "row": COLOURS[r], "number": n} for n in range(13)) for r in range(4)
)
_PASS: JSON = {"type": "pass"}


def _die_key_set(closed: int) -> frozenset[str]:
    return frozenset(d for i, d in enumerate(DICE) if i < 2 or not closed >> (i - 2) & 1)


# The exact key set of a roll for every mask of closed rows.
_ROLL_KEYS: tuple[frozenset[str], ...] = tuple(_die_key_set(m) for m in range(16))


class QwixxState(State):
    """One Qwixx game; see docs/games/qwixx.md for the wire format and the choices made."""

    game_name = "qwixx"

    __slots__ = (
        "_active",
        "_active_marked",
        "_closed",
        "_dice",
        "_failed",
        "_held",
        "_lock_after",
        "_locks",
        "_marks",
        "_phase",
        "_window",
        "chance_count",
        "options",
        "seats",
        "seed",
    )

    _active: int
    _active_marked: bool
    _closed: int
    _dice: list[int]
    _failed: list[int]
    _held: list[JSON | None]
    _lock_after: int
    _locks: list[int]
    _marks: list[list[int]]
    _phase: int
    _window: int

    # --- construction and serialisation -------------------------------------------------

    @classmethod
    def new(cls, seats: int, options: JSON, seed: bytes) -> QwixxState:
        self = cls()
        self.seats = seats
        self.options = dict(options)
        self.seed = seed
        self.chance_count = 0
        self._lock_after = int(options["lock_after"])
        self._active = 0
        self._active_marked = False
        self._closed = 0
        self._dice = []
        self._failed = [0] * seats
        self._held = [None] * seats
        self._locks = [0] * seats
        self._marks = [[0, 0, 0, 0] for _ in range(seats)]
        self._phase = ROLL
        self._window = 0
        return self

    def clone(self) -> QwixxState:
        other = QwixxState()
        other.seats = self.seats
        other.options = dict(self.options)
        other.seed = self.seed
        other.chance_count = self.chance_count
        other._lock_after = self._lock_after
        other._active = self._active
        other._active_marked = self._active_marked
        other._closed = self._closed
        other._dice = self._dice[:]
        other._failed = self._failed[:]
        other._held = self._held[:]  # held actions are never mutated, only replaced
        other._locks = self._locks[:]
        other._marks = [m[:] for m in self._marks]
        other._phase = self._phase
        other._window = self._window
        return other

    def to_dict(self) -> JSON:
        d = self._base_dict()
        d["phase"] = PHASES[self._phase]
        d["active"] = self._active
        d["window"] = self._window
        d["dice"] = self._dice_dict()
        d["marks"] = [{COLOURS[r]: row_numbers(r, m[r]) for r in range(4)} for m in self._marks]
        d["locked"] = [_colours(lk) for lk in self._locks]
        d["failed"] = list(self._failed)
        d["closed"] = _colours(self._closed)
        d["held"] = [None if a is None else dict(a) for a in self._held]
        d["active_marked"] = self._active_marked
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QwixxState:
        self = cls()
        self._load_base(data)
        n = self.seats
        if not 1 <= n <= 6:
            raise InvalidState("qwixx has 1 to 6 seats")
        self._lock_after = _int_in(self.options.get("lock_after"), 1, 10, "option lock_after")
        phase = data["phase"]
        if phase not in PHASES:
            raise InvalidState(f"unknown qwixx phase {phase!r}")
        self._phase = PHASES.index(phase)
        self._active = _int_in(data["active"], 0, n - 1, "active")
        self._window = _int_in(data["window"], 0, None, "window")
        self._closed = _colour_mask(data["closed"], "closed")
        marks = data["marks"]
        locked = data["locked"]
        failed = data["failed"]
        held = data["held"]
        for name, value in (("marks", marks), ("locked", locked), ("failed", failed)):
            if not isinstance(value, list) or len(value) != n:
                raise InvalidState(f"qwixx {name} must be a list with one entry per seat")
        if not isinstance(held, list) or len(held) != n:
            raise InvalidState("qwixx held must be a list with one entry per seat")
        self._marks = [_row_masks(m) for m in marks]
        self._locks = [_colour_mask(lk, "locked") for lk in locked]
        self._failed = [_int_in(f, 0, MAX_FAILED, "failed") for f in failed]
        for s in range(n):
            for r in range(4):
                if self._locks[s] >> r & 1 and not self._marks[s][r] >> LAST_BOX & 1:
                    raise InvalidState(f"seat {s} locked {COLOURS[r]} without its last box")
        self._active_marked = data["active_marked"]
        if not isinstance(self._active_marked, bool):
            raise InvalidState("qwixx active_marked must be true or false")
        dice = data["dice"]
        if self._phase in (WHITE, COLOUR):
            if not isinstance(dice, Mapping) or not _valid_roll(dice, self._closed):
                raise InvalidState("qwixx dice do not match the dice in play")
            self._dice = [dice.get(k, 0) for k in DICE]
        elif dice is None:
            self._dice = []
        elif self._phase == OVER and isinstance(dice, Mapping) and _valid_last_roll(dice):
            self._dice = [dice.get(k, 0) for k in DICE]  # the roll that ended the game
        else:
            raise InvalidState("qwixx dice must be null while a roll is pending")
        if self._phase == WHITE and None not in held:
            raise InvalidState("qwixx white window with every answer in was not resolved")
        self._held = [None] * n
        for s, a in enumerate(held):
            if a is None:
                continue
            if self._phase != WHITE:
                raise InvalidState("qwixx answers are held only in the white window")
            # A held answer was validated when it arrived; re-validate it against the
            # state it was given in (the sheets do not change while answers are held).
            try:
                self._held[s] = self._parse(s, a)[0]
            except IllegalAction as exc:
                raise InvalidState(f"qwixx held answer of seat {s}: {exc.message}") from exc
        return self

    def _dice_dict(self) -> JSON | None:
        if not self._dice:
            return None
        return {k: v for k, v in zip(DICE, self._dice, strict=True) if v}

    # --- whose move ----------------------------------------------------------------------

    def actors(self) -> tuple[int, ...]:
        if self._phase == WHITE:
            return tuple([s for s, held in enumerate(self._held) if held is None])
        if self._phase == COLOUR:
            return (self._active,)
        return ()

    def window(self) -> int:
        return self._window

    def legal_actions(self, seat: int) -> list[JSON]:
        phase = self._phase
        if phase == WHITE:
            if not 0 <= seat < self.seats or self._held[seat] is not None:
                return []
            out = [dict(_MARKS[r][n]) for r, n in self._white_marks(seat)]
        elif phase == COLOUR and seat == self._active:
            out = [dict(_MARKS[r][n]) for r, n in self._colour_marks()]
        else:
            return []
        out.append({"type": "pass"})
        return out

    def _markable(self, seat: int, row: int, number: int) -> bool:
        mask = self._marks[seat][row]
        box = BOX[row][number]
        if box < mask.bit_length():
            return False
        return box != LAST_BOX or mask.bit_count() >= self._lock_after

    def _white_marks(self, seat: int) -> list[tuple[int, int]]:
        total = self._dice[0] + self._dice[1]
        closed = self._closed
        return [
            (r, total) for r in range(4) if not closed >> r & 1 and self._markable(seat, r, total)
        ]

    def _colour_marks(self) -> list[tuple[int, int]]:
        dice = self._dice
        w1, w2 = dice[0], dice[1]
        closed = self._closed
        seat = self._active
        out: list[tuple[int, int]] = []
        for r in range(4):
            c = dice[2 + r]
            if closed >> r & 1 or not c:
                continue
            a, b = w1 + c, w2 + c
            if (a > b) == (r < 2):  # left to right on the sheet
                a, b = b, a
            if self._markable(seat, r, a):
                out.append((r, a))
            if b != a and self._markable(seat, r, b):
                out.append((r, b))
        return out

    # --- actions -------------------------------------------------------------------------

    def _parse(self, seat: int, action: Action) -> tuple[JSON, int, int]:
        """Validates `action` completely; returns (canonical action, row, box), row -1
        for a pass. Changes nothing."""
        kind = action_type(action, _KINDS)
        if kind == "pass":
            check_fields(action, _NO_FIELDS)
            return {"type": "pass"}, -1, -1
        check_fields(action, _MARK_FIELDS)
        colour = field_of(action, "row", str)
        number = field_of(action, "number", int)
        row = ROW_OF.get(colour, -1)
        if row < 0:
            raise IllegalAction(f"there is no row {colour!r}; rows: {list(COLOURS)}", "no-such-row")
        if not 2 <= number <= 12:
            raise IllegalAction(f"there is no box {number} on a Qwixx row", "no-such-box")
        if self._closed >> row & 1:
            raise IllegalAction(f"the {colour} row is closed", "row-closed")
        dice = self._dice
        if self._phase == WHITE:
            if number != dice[0] + dice[1]:
                raise IllegalAction(
                    f"in the white window only the white sum {dice[0] + dice[1]} may be marked",
                    "not-white-sum",
                )
        else:
            c = dice[2 + row]
            if number != dice[0] + c and number != dice[1] + c:
                raise IllegalAction(
                    f"{number} is not a white die plus the {colour} die "
                    f"({dice[0] + c} or {dice[1] + c})",
                    "not-colour-sum",
                )
        mask = self._marks[seat][row]
        box = BOX[row][number]
        if box < mask.bit_length():
            raise IllegalAction(
                f"{number} is not to the right of the last mark in the {colour} row",
                "not-right-of-last-mark",
            )
        if box == LAST_BOX and mask.bit_count() < self._lock_after:
            raise IllegalAction(
                f"the last box of the {colour} row needs {self._lock_after} marks in the row "
                f"first ({mask.bit_count()} so far)",
                "lock-too-early",
            )
        return {"type": "mark", "row": colour, "number": number}, row, box

    def apply_action(self, seat: object, action: Action) -> list[RuleEvent]:
        actor = self._check_answering(seat)
        move, row, box = self._parse(actor, action)
        return self._answer(actor, move, row, box, [])

    def apply_timeout(self, seat: object) -> list[RuleEvent]:
        actor = self._check_answering(seat)
        return self._answer(actor, {"type": "pass"}, -1, -1, [TimedOut(actor)])

    def _check_answering(self, seat: object) -> int:
        """`_check_actor`, but a seat that already answered the white roll is told so
        rather than that it is not its turn."""
        if (
            self._phase == WHITE
            and _is_int(seat)
            and 0 <= seat < self.seats
            and self._held[seat] is not None
        ):
            raise IllegalAction(f"seat {seat} has already answered this roll", "already-answered")
        return self._check_actor(seat)

    def _answer(
        self, seat: int, move: JSON, row: int, box: int, events: list[RuleEvent]
    ) -> list[RuleEvent]:
        if self._phase == WHITE:
            self._held[seat] = move
            if None in self._held:
                events.append(Answered(seat, held=True))
            else:
                events.append(Answered(seat))
                self._resolve_white(events)
            return events
        events.append(Applied(seat, move))
        if row >= 0:
            self._active_marked = True
            if self._mark(seat, row, box, events):
                self._close(1 << row, events)
        if self._closed.bit_count() >= 2:
            self._finish(events)
        else:
            self._end_turn(events)
        return events

    def _mark(self, seat: int, row: int, box: int, events: list[RuleEvent]) -> bool:
        """Marks a box; True when that locked the row."""
        self._marks[seat][row] |= 1 << box
        if box != LAST_BOX:
            return False
        self._locks[seat] |= 1 << row
        events.append(Public({"type": "locked", "seat": seat, "row": COLOURS[row]}))
        return True

    def _resolve_white(self, events: list[RuleEvent]) -> None:
        """All answers are in: apply them together, in seat order. A lock made here closes
        its row only afterwards, so every seat answered the same open sheet."""
        held = self._held
        newly = 0
        for s in range(self.seats):
            move = held[s]
            assert move is not None
            events.append(Applied(s, move))
            if move["type"] == "mark":
                row = ROW_OF[move["row"]]
                if self._mark(s, row, BOX[row][move["number"]], events):
                    newly |= 1 << row
        active_move = held[self._active]
        assert active_move is not None
        self._active_marked = active_move["type"] == "mark"
        self._held = [None] * self.seats
        self._close(newly, events)
        if self._closed.bit_count() >= 2:
            self._finish(events)
        elif self._colour_marks():
            self._phase = COLOUR
            self._window += 1
        else:
            self._end_turn(events)

    def _close(self, rows: int, events: list[RuleEvent]) -> None:
        fresh = rows & ~self._closed
        if not fresh:
            return
        self._closed |= fresh
        for r in range(4):
            if fresh >> r & 1:
                self._dice[2 + r] = 0  # the die leaves the game at once
                events.append(Public({"type": "row_closed", "row": COLOURS[r]}))

    def _end_turn(self, events: list[RuleEvent]) -> None:
        active = self._active
        if not self._active_marked:
            self._failed[active] += 1
            events.append(Public({"type": "failed_throw", "seat": active}))
            if self._failed[active] >= MAX_FAILED:
                self._finish(events)
                return
        self._active = (active + 1) % self.seats
        self._active_marked = False
        self._phase = ROLL
        self._dice = []
        events.append(Public({"type": "turn", "seat": self._active}))

    def _finish(self, events: list[RuleEvent]) -> None:
        self._phase = OVER
        events.append(Public({"type": "game_over", "scores": self.scores()}))

    # --- chance --------------------------------------------------------------------------

    def chance_pending(self) -> bool:
        return self._phase == ROLL

    def sample_chance(self) -> JSON:
        draw = self._draw()
        keys = _ROLL_KEYS[self._closed]
        return {"dice": {k: draw.die() for k in DICE if k in keys}}

    def apply_chance(self, outcome: Mapping[str, Any]) -> list[RuleEvent]:
        if self._phase != ROLL:
            raise IllegalAction("no roll is pending", "no-chance-pending")
        if not isinstance(outcome, Mapping) or set(outcome) != {"dice"}:
            raise IllegalAction("a Qwixx roll is {'dice': {die: value}}", "impossible-outcome")
        dice = outcome["dice"]
        if not isinstance(dice, Mapping) or not _valid_roll(dice, self._closed):
            keys = sorted(_ROLL_KEYS[self._closed], key=DICE.index)
            raise IllegalAction(
                f"a Qwixx roll gives exactly the dice {keys}, each 1 to 6", "impossible-outcome"
            )
        self._dice = [dice.get(k, 0) for k in DICE]
        self.chance_count += 1
        self._phase = WHITE
        self._window += 1
        return [Public({"type": "rolled", "dice": {k: dice[k] for k in DICE if k in dice}})]

    # --- results and views ---------------------------------------------------------------

    def is_over(self) -> bool:
        return self._phase == OVER

    def scores(self) -> list[int]:
        return [score(self._marks[s], self._locks[s], self._failed[s]) for s in range(self.seats)]

    def hidden(self, seat: int) -> list[JSON]:
        """A seat's held answer is secret until the white window resolves."""
        if self._phase == WHITE and 0 <= seat < self.seats:
            move = self._held[seat]
            if move is not None:
                return [dict(move)]
        return []

    def view(self, seat: int | None) -> JSON:
        held = self._held
        out: JSON = {
            "game": self.game_name,
            "seats": self.seats,
            "you": seat,
            "options": dict(self.options),
            "phase": PHASES[self._phase],
            "active": self._active,
            "window": self._window,
            "dice": self._dice_dict(),
            "actors": list(self.actors()),
            "answered": [s for s in range(self.seats) if held[s] is not None],
            "closed": _colours(self._closed),
            "sheets": [
                {
                    "rows": {COLOURS[r]: row_numbers(r, self._marks[s][r]) for r in range(4)},
                    "locked": _colours(self._locks[s]),
                    "failed": self._failed[s],
                }
                for s in range(self.seats)
            ],
            "scores": self.scores(),
            "over": self._phase == OVER,
        }
        mine = held[seat] if seat is not None and 0 <= seat < self.seats else None
        out["answer"] = None if mine is None else dict(mine)
        return out

    def render(self, seat: int, name: str = "") -> str:
        points = (
            score(self._marks[seat], self._locks[seat], self._failed[seat])
            if self._phase == OVER
            else None
        )
        return render_sheet(name, self._marks[seat], self._locks[seat], self._failed[seat], points)


# --- helpers for from_dict ---------------------------------------------------------------


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_in(value: object, low: int, high: int | None, what: str) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < low
        or (high is not None and value > high)
    ):
        raise InvalidState(f"qwixx {what} out of range: {value!r}")
    return value


def _colours(mask: int) -> list[str]:
    return [COLOURS[r] for r in range(4) if mask >> r & 1]


def _colour_mask(value: object, what: str) -> int:
    if not isinstance(value, list):
        raise InvalidState(f"qwixx {what} must be a list of colours")
    mask = 0
    for colour in value:
        if not isinstance(colour, str) or colour not in ROW_OF or mask >> ROW_OF[colour] & 1:
            raise InvalidState(f"qwixx {what}: bad colour {colour!r}")
        mask |= 1 << ROW_OF[colour]
    return mask


def _row_masks(value: object) -> list[int]:
    if not isinstance(value, Mapping) or set(value) != set(COLOURS):
        raise InvalidState("qwixx marks must map every colour to a list of numbers")
    masks = [0, 0, 0, 0]
    for r, colour in enumerate(COLOURS):
        numbers = value[colour]
        if not isinstance(numbers, list):
            raise InvalidState(f"qwixx marks of {colour} must be a list")
        for n in numbers:
            if not _is_int(n) or not 2 <= n <= 12 or masks[r] >> BOX[r][n] & 1:
                raise InvalidState(f"qwixx marks of {colour}: bad number {n!r}")
            masks[r] |= 1 << BOX[r][n]
    return masks


def _valid_last_roll(dice: Mapping[Any, Any]) -> bool:
    keys = set(dice)
    if not {"white1", "white2"} <= keys or not keys <= set(DICE):
        return False
    return all(_is_int(v) and 1 <= v <= 6 for v in dice.values())


def _valid_roll(dice: Mapping[Any, Any], closed: int) -> bool:
    if set(dice) != _ROLL_KEYS[closed]:
        return False
    return all(_is_int(v) and 1 <= v <= 6 for v in dice.values())


__all__ = ["DICE", "NUMBER", "PHASES", "QwixxState"]
