"""The Qwinto game state: turn phases, held answers, chance and views (docs/rules.md, Qwinto).

A turn runs: "choose" (the active seat picks dice) -> chance "roll" -> with option
`reroll`, "confirm" (the active seat rerolls once or answers) -> "answer" (every seat that
has not answered yet). Answers are held as small ints and applied together when the last
one is in, so one seat's choice never shows before the window closes.
"""

# mypyc: compiled (a hot module: server/compiled.py)

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

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
    BOXES,
    COLOUR_INDEX,
    COLOURS,
    MAX_FAILED,
    Sheet,
    check_legal,
    empty_sheet,
    entry_error,
    failed_from_json,
    full_rows,
    open_boxes,
    render,
    rows_from_json,
    rows_to_json,
    score,
)

CHOOSE = "choose"
ROLL = "roll"
CONFIRM = "confirm"
ANSWER = "answer"
OVER = "over"
PHASES = (CHOOSE, ROLL, CONFIRM, ANSWER, OVER)

NO_ANSWER = -2
PASS = -1
"""Held answers: NO_ANSWER, PASS, or row * BOXES + box for an entry."""

ALL_DICE = (0, 1, 2)
SUBSETS: tuple[tuple[int, ...], ...] = ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2))
ACTION_TYPES = ("roll", "reroll", "enter", "pass")


def _held_to_json(code: int) -> JSON | None:
    return None if code == NO_ANSWER else _answer_json(code)


def _answer_json(code: int) -> JSON:
    """A given answer (a pass or an entry) as its action."""
    if code == PASS:
        return {"type": "pass"}
    r, b = divmod(code, BOXES)
    return {"type": "enter", "row": COLOURS[r], "box": b}


class QwintoState(State):
    """One Qwinto game; sheets are public, only held answers are hidden."""

    game_name: ClassVar[str] = "qwinto"

    __slots__ = (
        "active",
        "chance_count",
        "dice",
        "failed",
        "held",
        "options",
        "phase",
        "reroll_option",
        "rerolled",
        "seats",
        "seed",
        "sheets",
        "total",
        "values",
        "win",
    )

    active: int
    dice: tuple[int, ...]
    failed: list[int]
    held: list[int]
    phase: str
    reroll_option: bool
    rerolled: bool
    sheets: list[Sheet]
    total: int
    values: tuple[int, ...]
    win: int

    # --- construction and serialisation -------------------------------------------------

    @classmethod
    def new(cls, seats: int, options: JSON, seed: bytes) -> QwintoState:
        self = cls()
        self.seats = seats
        self.options = dict(options)
        self.seed = seed
        self.chance_count = 0
        self.reroll_option = bool(options.get("reroll", False))
        self.sheets = [empty_sheet() for _ in range(seats)]
        self.failed = [0] * seats
        self.held = [NO_ANSWER] * seats
        self.active = 0
        self.phase = CHOOSE
        self.dice = ()
        self.values = ()
        self.total = 0
        self.rerolled = False
        self.win = 0
        return self

    def clone(self) -> QwintoState:
        c = QwintoState()
        c.seats = self.seats
        c.options = self.options
        c.seed = self.seed
        c.chance_count = self.chance_count
        c.reroll_option = self.reroll_option
        c.sheets = [[row[:] for row in sheet] for sheet in self.sheets]
        c.failed = self.failed[:]
        c.held = self.held[:]
        c.active = self.active
        c.phase = self.phase
        c.dice = self.dice
        c.values = self.values
        c.total = self.total
        c.rerolled = self.rerolled
        c.win = self.win
        return c

    def to_dict(self) -> JSON:
        data = self._base_dict()
        data.update(
            active=self.active,
            phase=self.phase,
            window=self.win,
            dice=[COLOURS[i] for i in self.dice],
            roll=self._roll_json(),
            rerolled=self.rerolled,
            held=[_held_to_json(h) for h in self.held],
            sheets=[
                {"rows": rows_to_json(sheet), "failed": f}
                for sheet, f in zip(self.sheets, self.failed, strict=True)
            ],
        )
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QwintoState:
        self = cls()
        self._load_base(data)
        n = self.seats
        if not 1 <= n <= 6:
            raise InvalidState(f"qwinto is played by 1 to 6 seats, not {n}")
        reroll = self.options.get("reroll")
        if set(self.options) != {"reroll"} or not isinstance(reroll, bool):
            raise InvalidState("qwinto options must be exactly {'reroll': bool}")
        self.reroll_option = reroll
        self.phase = data["phase"]
        if self.phase not in PHASES:
            raise InvalidState(f"unknown phase {self.phase!r}")
        # (Checked before they are stored: a compiled build turns a bool stored as an int
        # into an int, and an int into a bool, before anything can look at them.)
        active, window, rerolled = data["active"], data["window"], data["rerolled"]
        for key, value in (("active", active), ("window", window)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise InvalidState(f"{key!r} must be of type int")
        if not isinstance(rerolled, bool):
            raise InvalidState("'rerolled' must be of type bool")
        self.active, self.win, self.rerolled = active, window, rerolled
        if not 0 <= self.active < n:
            raise InvalidState(f"no active seat {self.active}")
        if self.rerolled and not reroll:
            raise InvalidState("a reroll was used but the option is off")

        dice = data["dice"]
        if not isinstance(dice, list) or any(c not in COLOURS for c in dice):
            raise InvalidState("'dice' must be a list of colours")
        self.dice = tuple(sorted({COLOUR_INDEX[c] for c in dice}))
        if len(self.dice) != len(dice) or [COLOURS[i] for i in self.dice] != dice:
            raise InvalidState("'dice' must list distinct colours in order red, yellow, blue")
        if (self.phase == CHOOSE) != (not self.dice):
            raise InvalidState("dice are chosen exactly when the turn is past 'choose'")
        roll = data["roll"]
        if self.phase in (CONFIRM, ANSWER, OVER) and self.dice:
            if not isinstance(roll, Mapping) or list(roll) != list(dice):
                raise InvalidState("'roll' must give a value for every chosen die")
            values = tuple(roll[c] for c in dice)
            if any(
                isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 6 for v in values
            ):
                raise InvalidState("die values must be 1..6")
            self.values = values
        elif roll is not None:
            raise InvalidState("'roll' must be null before the dice are rolled")
        else:
            self.values = ()
        self.total = sum(self.values)

        sheets = data["sheets"]
        if not isinstance(sheets, list) or len(sheets) != n:
            raise InvalidState("'sheets' must hold one sheet per seat")
        self.sheets = []
        self.failed = []
        for s, entry in enumerate(sheets):
            where = f"sheet of seat {s}"
            if not isinstance(entry, Mapping) or set(entry) != {"rows", "failed"}:
                raise InvalidState(f"{where}: must be {{'rows', 'failed'}}")
            sheet = rows_from_json(entry["rows"], where)
            check_legal(sheet, where)
            self.sheets.append(sheet)
            self.failed.append(failed_from_json(entry["failed"], where))

        held = data["held"]
        if not isinstance(held, list) or len(held) != n:
            raise InvalidState("'held' must hold one entry per seat")
        self.held = [self._held_from_json(s, h) for s, h in enumerate(held)]
        if self.phase != ANSWER and any(h != NO_ANSWER for h in self.held):
            raise InvalidState("answers are held only in the answer window")
        if self.phase == ANSWER and NO_ANSWER not in self.held:
            raise InvalidState("an answer window with every answer in should have resolved")
        over = any(
            f >= MAX_FAILED or full_rows(sh) >= 2
            for sh, f in zip(self.sheets, self.failed, strict=True)
        )
        if over != (self.phase == OVER):
            raise InvalidState(
                "the game is over exactly when a seat has 4 failed throws or 2 full rows"
            )
        return self

    def _held_from_json(self, seat: int, value: object) -> int:
        if value is None:
            return NO_ANSWER
        if value == {"type": "pass"}:
            return PASS
        if not isinstance(value, Mapping) or set(value) != {"type", "row", "box"}:
            raise InvalidState(f"held answer of seat {seat} is malformed")
        row, box = value["row"], value["box"]
        if (
            value["type"] != "enter"
            or row not in COLOURS
            or isinstance(box, bool)
            or not isinstance(box, int)
            or not 0 <= box < BOXES
        ):
            raise InvalidState(f"held answer of seat {seat} is malformed")
        r = COLOUR_INDEX[row]
        if r not in self.dice or entry_error(self.sheets[seat], r, box, self.total) is not None:
            raise InvalidState(f"held answer of seat {seat} is not legal")
        index: int = r * BOXES + box
        return index

    def _roll_json(self) -> JSON | None:
        if not self.values:
            return None
        return {COLOURS[i]: v for i, v in zip(self.dice, self.values, strict=True)}

    # --- whose move ----------------------------------------------------------------------

    def actors(self) -> tuple[int, ...]:
        phase = self.phase
        if phase == ANSWER:
            return tuple(s for s, h in enumerate(self.held) if h == NO_ANSWER)
        if phase in (CHOOSE, CONFIRM):
            return (self.active,)
        return ()

    def window(self) -> int:
        return self.win

    def _may_act(self, seat: int) -> bool:
        phase = self.phase
        if phase == ANSWER:
            return 0 <= seat < self.seats and self.held[seat] == NO_ANSWER
        return phase in (CHOOSE, CONFIRM) and seat == self.active

    def legal_actions(self, seat: int) -> list[JSON]:
        if isinstance(seat, bool) or not isinstance(seat, int) or not self._may_act(seat):
            return []
        if self.phase == CHOOSE:
            return [{"type": "roll", "dice": [COLOURS[i] for i in sub]} for sub in SUBSETS]
        sheet = self.sheets[seat]
        n = self.total
        out: list[JSON] = []
        for r in self.dice:
            colour = COLOURS[r]
            for b in open_boxes(sheet, r, n):
                out.append({"type": "enter", "row": colour, "box": b})
        out.append({"type": "pass"})
        if self.phase == CONFIRM:
            out.append({"type": "reroll"})
        return out

    def apply_action(self, seat: object, action: Action) -> list[RuleEvent]:
        seat = self._check_actor(seat)
        kind = action_type(action, ACTION_TYPES)
        phase = self.phase
        if kind == "roll":
            if phase != CHOOSE:
                raise IllegalAction("the dice were already chosen this turn", "wrong-phase")
            check_fields(action, ("dice",))
            return self._roll(seat, _parse_dice(action))
        if kind == "reroll":
            check_fields(action, ())
            if not self.reroll_option:
                raise IllegalAction("rerolling is off in this game", "reroll-off")
            if phase != CONFIRM:
                if self.rerolled:
                    raise IllegalAction("the dice were already rolled again", "reroll-used")
                raise IllegalAction("there is nothing to roll again yet", "wrong-phase")
            self.rerolled = True
            self.phase = ROLL
            self.values = ()
            self.total = 0
            return [Applied(seat, {"type": "reroll"})]
        if phase == CHOOSE:
            raise IllegalAction("choose and roll the dice first", "wrong-phase")
        if kind == "pass":
            check_fields(action, ())
            return self._answer(seat, PASS)
        check_fields(action, ("row", "box"))
        row = field_of(action, "row", str)
        r = COLOUR_INDEX.get(row)
        if r is None:
            raise IllegalAction(f"there is no row {row!r}; rows: {list(COLOURS)}", "no-such-row")
        box = field_of(action, "box", int)
        if not 0 <= box < BOXES:
            raise IllegalAction(f"box must be 0..{BOXES - 1}, not {box}", "no-such-box")
        if r not in self.dice:
            raise IllegalAction(f"the {row} die was not rolled", "row-not-rolled")
        error = entry_error(self.sheets[seat], r, box, self.total)
        if error is not None:
            raise IllegalAction(*error)
        return self._answer(seat, r * BOXES + box)

    def apply_timeout(self, seat: object) -> list[RuleEvent]:
        seat = self._check_actor(seat)
        events: list[RuleEvent] = [TimedOut(seat)]
        if self.phase == CHOOSE:
            events += self._roll(seat, ALL_DICE)
        else:
            events += self._answer(seat, PASS)
        return events

    def _roll(self, seat: int, dice: tuple[int, ...]) -> list[RuleEvent]:
        self.dice = dice
        self.phase = ROLL
        return [Applied(seat, {"type": "roll", "dice": [COLOURS[i] for i in dice]})]

    def _answer(self, seat: int, code: int) -> list[RuleEvent]:
        self.held[seat] = code
        # the active seat's answer to a roll it could roll again opens everyone's window
        opened = self.phase == CONFIRM
        if opened:
            self.phase = ANSWER
            self.win += 1
        if NO_ANSWER not in self.held:
            return [Answered(seat), *self._resolve()]
        return [Answered(seat, held=not opened)]

    def _resolve(self) -> list[RuleEvent]:
        """Apply every held answer of the roll at once, then penalty, end check, next turn."""
        events: list[RuleEvent] = []
        n = self.total
        active = self.active
        entered = self.held[active] >= 0
        for s in range(self.seats):
            code = self.held[s]
            if code >= 0:
                r, b = divmod(code, BOXES)
                self.sheets[s][r][b] = n
            events.append(Applied(s, _answer_json(code)))
            self.held[s] = NO_ANSWER
        if not entered:
            self.failed[active] += 1
            events.append(Public({"type": "failed_throw", "seat": active}))
        if any(
            f >= MAX_FAILED or full_rows(sheet) >= 2
            for sheet, f in zip(self.sheets, self.failed, strict=True)
        ):
            self.phase = OVER
            events.append(Public({"type": "game_over", "scores": self.scores()}))
            return events
        self.active = (active + 1) % self.seats
        self.phase = CHOOSE
        self.dice = ()
        self.values = ()
        self.total = 0
        self.rerolled = False
        self.win += 1
        events.append(Public({"type": "turn", "seat": self.active}))
        return events

    # --- chance --------------------------------------------------------------------------

    def chance_pending(self) -> bool:
        return self.phase == ROLL

    def sample_chance(self) -> JSON:
        draw = self._draw()
        return {"dice": {COLOURS[i]: draw.die() for i in self.dice}}

    def apply_chance(self, outcome: Mapping[str, Any]) -> list[RuleEvent]:
        if self.phase != ROLL:
            raise IllegalAction("no roll is due", "no-chance-pending")
        rolled = outcome.get("dice") if isinstance(outcome, Mapping) else None
        names = [COLOURS[i] for i in self.dice]
        if (
            not isinstance(outcome, Mapping)
            or set(outcome) != {"dice"}
            or not isinstance(rolled, Mapping)
            or set(rolled) != set(names)
        ):
            raise IllegalAction(
                f"the outcome must be {{'dice': {{colour: 1..6}}}} for exactly {names}",
                "impossible-outcome",
            )
        values = tuple(rolled[c] for c in names)
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 6:
                raise IllegalAction(f"a die shows 1..6, not {v!r}", "impossible-outcome")
        self.values = values
        self.total = sum(values)
        self.chance_count += 1
        self.phase = CONFIRM if self.reroll_option and not self.rerolled else ANSWER
        self.win += 1
        return [Public({"type": "rolled", "dice": dict(zip(names, values, strict=True))})]

    # --- results and views ---------------------------------------------------------------

    def is_over(self) -> bool:
        return self.phase == OVER

    def scores(self) -> list[int]:
        return [score(sheet, f) for sheet, f in zip(self.sheets, self.failed, strict=True)]

    def hidden(self, seat: int) -> list[JSON]:
        """A seat's held answer while its window is open; everything else is public."""
        if self.phase != ANSWER or not 0 <= seat < self.seats:
            return []
        answer = _held_to_json(self.held[seat])
        return [] if answer is None else [answer]

    def view(self, seat: int | None) -> JSON:
        over = self.phase == OVER
        view: JSON = {
            "game": self.game_name,
            "seats": self.seats,
            "options": dict(self.options),
            "you": seat,
            "phase": self.phase,
            "window": self.win,
            "active": self.active,
            "actors": list(self.actors()),
            "dice": [COLOURS[i] for i in self.dice],
            "roll": self._roll_json(),
            "sum": self.total if self.values else None,
            "rerolled": self.rerolled,
            "answered": [s for s, h in enumerate(self.held) if h != NO_ANSWER],
            "answer": None,
            "sheets": [
                {"rows": rows_to_json(sheet), "failed": f}
                for sheet, f in zip(self.sheets, self.failed, strict=True)
            ],
            "scores": self.scores(),
            "over": over,
            "winners": self.winners() if over else [],
        }
        if seat is not None and 0 <= seat < self.seats:
            view["answer"] = _held_to_json(self.held[seat])
        return view

    def render(self, seat: int, name: str = "") -> str:
        sheet, failed = self.sheets[seat], self.failed[seat]
        points = score(sheet, failed) if self.phase == OVER else None
        return render(sheet, failed, name, points)


def _parse_dice(action: Action) -> tuple[int, ...]:
    dice = field_of(action, "dice", list)
    if not dice:
        raise IllegalAction("roll at least one die", "no-dice")
    chosen: set[int] = set()
    for colour in dice:
        if not isinstance(colour, str):
            raise IllegalAction(f"a die is named by its colour, not {colour!r}", "malformed-action")
        i = COLOUR_INDEX.get(colour)
        if i is None:
            raise IllegalAction(
                f"there is no {colour!r} die; dice: {list(COLOURS)}", "no-such-colour"
            )
        if i in chosen:
            raise IllegalAction(f"the {colour} die is named twice", "duplicate-die")
        chosen.add(i)
    return tuple(sorted(chosen))
