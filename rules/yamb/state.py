"""Yamb play: turns of up to three rolls of six dice, each turn ending with one cell written.

Mode `turns`: one seat at a time, its whole turn is one window. Mode `simultaneous`: each
round is one shared window in which every seat plays its own turn on its own dice; its
actions apply at once (nothing is secret: all dice are rolled in public), and the round
ends when the last seat has written.
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
from .table import (
    CALL,
    COLUMN_INDEX,
    COLUMNS,
    DOWN,
    EMPTY,
    FREE1,
    HAND,
    NCELLS,
    NCOLS,
    NROWS,
    ROW_INDEX,
    ROWS,
    UP,
    cell_value,
    check_value,
    column_sums,
    column_total,
    render_table,
    row_values,
    table_total,
)

MODES = ("turns", "simultaneous")
MAX_ROLLS = 3
ALL_HELD = 0b111111
_OPEN_END = CALL * NROWS  # down, up, free1, free2: the cells a later roll can still reach
_NO_ROW = -1
_NOBODY = -1

# Every hold after the first roll, canonical (sorted indexes), in increasing bitmask order.
_HOLDS: tuple[tuple[int, ...], ...] = tuple(
    tuple(i for i in range(6) if mask >> i & 1) for mask in range(ALL_HELD)
)
_EMPTY_TABLE = [EMPTY] * NCELLS
_NO_DICE = [0] * 6


def _mask_of(hold: object) -> int:
    """The bitmask of a `hold` field, validated: distinct ints 0..5 (bool is not an int)."""
    if not isinstance(hold, list):
        raise IllegalAction("'hold' must be a list of dice indexes 0..5", "malformed-action")
    mask = 0
    for i in hold:
        if isinstance(i, bool) or not isinstance(i, int):
            raise IllegalAction("'hold' must hold integers 0..5", "malformed-action")
        if not 0 <= i < 6:
            raise IllegalAction(f"there is no die {i}; dice are 0..5", "no-such-die")
        if mask >> i & 1:
            raise IllegalAction(f"die {i} is held twice", "hold-repeat")
        mask |= 1 << i
    return mask


def _holds(mask: int) -> list[int]:
    return [i for i in range(6) if mask >> i & 1]


class YambState(State):
    game_name = "yamb"

    __slots__ = (
        "_end",
        "called",
        "cells",
        "chance_count",
        "dice",
        "held",
        "options",
        "pending",
        "rolls",
        "seats",
        "seed",
        "simultaneous",
        "turn",
        "wrote",
    )

    simultaneous: bool
    turn: int
    """Window counter: the turn number (`turns`) or the round number (`simultaneous`)."""
    cells: list[list[int]]
    dice: list[list[int]]
    """Each seat's six dice as they stand (0s before its first roll of the turn)."""
    rolls: list[int]
    called: list[int]
    """The announced row of the `call` column this turn, or -1."""
    wrote: list[bool]
    """Simultaneous mode: the seat has written its cell this round."""
    pending: int
    """The seat whose roll awaits its chance outcome, or -1."""
    held: int
    """Bitmask of the dice that seat keeps for the pending roll."""
    _end: int

    # --- construction and serialisation -------------------------------------------------

    @classmethod
    def new(cls, seats: int, options: JSON, seed: bytes) -> YambState:
        self = cls()
        self.seats = seats
        self.options = dict(options)
        self.seed = seed
        self.chance_count = 0
        self._setup()
        self.turn = 0
        self.cells = [list(_EMPTY_TABLE) for _ in range(seats)]
        self.dice = [list(_NO_DICE) for _ in range(seats)]
        self.rolls = [0] * seats
        self.called = [_NO_ROW] * seats
        self.wrote = [False] * seats
        self.pending = _NOBODY
        self.held = 0
        return self

    def _setup(self) -> None:
        self.simultaneous = self.options.get("mode", "turns") == "simultaneous"
        self._end = NROWS * NCOLS * (1 if self.simultaneous else self.seats)

    def clone(self) -> YambState:
        other = YambState()
        other.seats = self.seats
        other.options = self.options  # never mutated after construction
        other.seed = self.seed
        other.chance_count = self.chance_count
        other.simultaneous = self.simultaneous
        other._end = self._end
        other.turn = self.turn
        other.cells = [c[:] for c in self.cells]
        other.dice = [d[:] for d in self.dice]
        other.rolls = self.rolls[:]
        other.called = self.called[:]
        other.wrote = self.wrote[:]
        other.pending = self.pending
        other.held = self.held
        return other

    def to_dict(self) -> JSON:
        d = self._base_dict()
        d["turn"] = self.turn
        d["cells"] = [[None if v < 0 else v for v in c] for c in self.cells]
        d["dice"] = [dice[:] for dice in self.dice]
        d["rolls"] = self.rolls[:]
        d["called"] = [None if r < 0 else ROWS[r] for r in self.called]
        d["wrote"] = self.wrote[:]
        d["pending"] = (
            None if self.pending < 0 else {"seat": self.pending, "hold": _holds(self.held)}
        )
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> YambState:
        self = cls()
        self._load_base(data)
        n = self.seats
        if not 1 <= n <= 6:
            raise InvalidState(f"yamb is played by 1 to 6 seats, not {n}")
        if self.options.get("mode") not in MODES or set(self.options) != {"mode"}:
            raise InvalidState(f"yamb options must be {{'mode': one of {list(MODES)}}}")
        self._setup()
        self.turn = _int(data["turn"], "turn", 0, self._end)
        self.cells = [_table(t, s) for s, t in enumerate(_seq(data["cells"], n, "cells"))]
        self.dice = [_dice(d) for d in _seq(data["dice"], n, "dice")]
        self.rolls = [_int(r, "rolls", 0, MAX_ROLLS) for r in _seq(data["rolls"], n, "rolls")]
        self.called = [_row_or_none(r) for r in _seq(data["called"], n, "called")]
        self.wrote = [_bool(w, "wrote") for w in _seq(data["wrote"], n, "wrote")]
        pending = data["pending"]
        if pending is None:
            self.pending, self.held = _NOBODY, 0
        else:
            if not isinstance(pending, Mapping) or set(pending) != {"seat", "hold"}:
                raise InvalidState("'pending' must be null or {'seat', 'hold'}")
            self.pending = _int(pending["seat"], "pending seat", 0, n - 1)
            try:
                self.held = _mask_of(pending["hold"])
            except IllegalAction as exc:
                raise InvalidState(f"pending hold: {exc.message}") from None
        self._check_consistency()
        return self

    def _check_consistency(self) -> None:
        """A loaded state must be one that play can reach, or the engine could get stuck."""
        n = self.seats
        over = self.turn >= self._end
        actors = set() if over else set(self._seat_actors())
        for s in range(n):
            filled = NCELLS - self.cells[s].count(EMPTY)
            if self.simultaneous:
                expected = self.turn + self.wrote[s]
            else:
                expected = self.turn // n + (s < self.turn % n)
                if self.wrote[s]:
                    raise InvalidState("'wrote' is only used in simultaneous mode")
            if filled != expected:
                raise InvalidState(f"seat {s} has {filled} cells filled, expected {expected}")
            rolls, dice, called = self.rolls[s], self.dice[s], self.called[s]
            if (rolls or called >= 0) and s not in actors:
                raise InvalidState(f"seat {s} is not playing a turn now")
            if (rolls == 0) != (dice == _NO_DICE) or (rolls and 0 in dice):
                raise InvalidState(f"seat {s}: dice {dice} do not match {rolls} rolls")
            if called >= 0 and (rolls == 0 or self.cells[s][CALL * NROWS + called] != EMPTY):
                raise InvalidState(f"seat {s}: call of {ROWS[called]!r} is impossible")
        if self.simultaneous and all(self.wrote):
            raise InvalidState("every seat wrote: the round is over")
        if self.pending >= 0:
            s = self.pending
            if s not in actors or self.rolls[s] >= MAX_ROLLS or self.held == ALL_HELD:
                raise InvalidState(f"seat {s} cannot have a roll pending")
            if self.rolls[s] == 0 and self.held:
                raise InvalidState("the first roll of a turn holds no dice")
            if self.rolls[s] and not self._may_roll_again(s):
                raise InvalidState(f"seat {s} would have no cell to write after its roll")
        else:
            for s in actors:
                if not self.legal_actions(s):
                    raise InvalidState(f"seat {s} has no cell it could write")

    # --- whose move ----------------------------------------------------------------------

    def _seat_actors(self) -> tuple[int, ...]:
        if not self.simultaneous:
            return (self.turn % self.seats,)
        return tuple(s for s in range(self.seats) if not self.wrote[s])

    def actors(self) -> tuple[int, ...]:
        if self.pending >= 0 or self.turn >= self._end:
            return ()
        return self._seat_actors()

    def window(self) -> int:
        # No window opens once the game is over: keep the id of the last one.
        return self.turn if self.turn < self._end else self._end - 1

    def _may_roll_again(self, seat: int) -> bool:
        """A later roll must leave a cell to write: the called one or a non-hand, non-call one."""
        return self.called[seat] >= 0 or EMPTY in self.cells[seat][:_OPEN_END]

    def _writable(self, seat: int) -> list[int]:
        """Cell indexes the seat may write now, call column aside (it must be announced)."""
        cells = self.cells[seat]
        out: list[int] = []
        for i in range(DOWN * NROWS, DOWN * NROWS + NROWS):  # down: the first empty cell
            if cells[i] == EMPTY:
                out.append(i)
                break
        for i in range(UP * NROWS + NROWS - 1, UP * NROWS - 1, -1):  # up: the last empty cell
            if cells[i] == EMPTY:
                out.append(i)
                break
        out += [i for i in range(FREE1 * NROWS, CALL * NROWS) if cells[i] == EMPTY]
        if self.rolls[seat] == 1:
            out += [i for i in range(HAND * NROWS, NCELLS) if cells[i] == EMPTY]
        return out

    def legal_actions(self, seat: int) -> list[JSON]:
        if seat not in self.actors():
            return []
        rolls = self.rolls[seat]
        if rolls == 0:
            return [{"type": "roll", "hold": []}]
        out: list[JSON] = []
        if rolls < MAX_ROLLS and self._may_roll_again(seat):
            out = [{"type": "roll", "hold": [*h]} for h in _HOLDS]
        called = self.called[seat]
        if called >= 0:
            out.append({"type": "write", "column": "call", "row": ROWS[called]})
            return out
        cells = self.cells[seat]
        if rolls == 1:
            out += [
                {"type": "call", "row": ROWS[r]}
                for r in range(NROWS)
                if cells[CALL * NROWS + r] == EMPTY
            ]
        out += [
            {"type": "write", "column": COLUMNS[i // NROWS], "row": ROWS[i % NROWS]}
            for i in self._writable(seat)
        ]
        return out

    # --- actions -------------------------------------------------------------------------

    def apply_action(self, seat: object, action: Action) -> list[RuleEvent]:
        seat = self._check_actor(seat)
        kind = action_type(action, ("roll", "call", "write"))
        if kind == "roll":
            check_fields(action, ("hold",))
            mask = _mask_of(field_of(action, "hold", list))
            self._check_roll(seat, mask)
            self.pending, self.held = seat, mask
            return [Applied(seat, {"type": "roll", "hold": _holds(mask)})]
        if kind == "call":
            check_fields(action, ("row",))
            row = _row_of(field_of(action, "row", str))
            self._check_call(seat, row)
            self.called[seat] = row
            return [Applied(seat, {"type": "call", "row": ROWS[row]})]
        check_fields(action, ("column", "row"))
        column = field_of(action, "column", str)
        if column not in COLUMN_INDEX:
            raise IllegalAction(f"no column {column!r}; columns: {list(COLUMNS)}", "no-such-column")
        col = COLUMN_INDEX[column]
        row = _row_of(field_of(action, "row", str))
        self._check_write(seat, col, row)
        return self._write(seat, col, row)

    def _check_roll(self, seat: int, mask: int) -> None:
        rolls = self.rolls[seat]
        if rolls >= MAX_ROLLS:
            raise IllegalAction("three rolls are the most a turn has", "no-rolls-left")
        if rolls == 0 and mask:
            raise IllegalAction("the first roll of a turn rolls all six dice", "hold-first-roll")
        if mask == ALL_HELD:
            raise IllegalAction("holding all six dice leaves nothing to roll", "hold-all")
        if rolls and not self._may_roll_again(seat):
            raise IllegalAction("another roll would leave no cell to write", "must-write")

    def _check_call(self, seat: int, row: int) -> None:
        rolls = self.rolls[seat]
        if rolls == 0:
            raise IllegalAction("a call is announced after the first roll", "not-rolled")
        if self.called[seat] >= 0:
            raise IllegalAction(
                f"{ROWS[self.called[seat]]!r} is already called this turn", "already-called"
            )
        if rolls > 1:
            raise IllegalAction("a call is announced before the second roll", "call-too-late")
        if self.cells[seat][CALL * NROWS + row] != EMPTY:
            raise IllegalAction(f"call cell {ROWS[row]!r} is already written", "cell-filled")

    def _check_write(self, seat: int, col: int, row: int) -> None:
        rolls, called, cells = self.rolls[seat], self.called[seat], self.cells[seat]
        i = col * NROWS + row
        where = f"{COLUMNS[col]} {ROWS[row]}"
        if rolls == 0:
            raise IllegalAction("roll the dice before writing", "not-rolled")
        if called >= 0 and (col != CALL or row != called):
            raise IllegalAction(
                f"{ROWS[called]!r} was called: write in call {ROWS[called]}", "must-write-called"
            )
        if cells[i] != EMPTY:
            raise IllegalAction(f"{where} is already written", "cell-filled")
        if col == CALL and called < 0:
            raise IllegalAction("the call column takes only an announced row", "not-called")
        if col == DOWN and row > 0 and cells[i - 1] == EMPTY:
            raise IllegalAction(f"down {ROWS[row - 1]} comes first", "down-order")
        if col == UP and row < NROWS - 1 and cells[i + 1] == EMPTY:
            raise IllegalAction(f"up {ROWS[row + 1]} comes first", "up-order")
        if col == HAND and rolls != 1:
            raise IllegalAction("the hand column takes only the first roll", "hand-first-roll")

    def _write(self, seat: int, col: int, row: int) -> list[RuleEvent]:
        """Write the cell (already validated), end the seat's turn, open the next window."""
        value = cell_value(self.dice[seat], row)
        self.cells[seat][col * NROWS + row] = value
        self.rolls[seat] = 0
        self.dice[seat] = list(_NO_DICE)
        self.called[seat] = _NO_ROW
        write = {"type": "write", "column": COLUMNS[col], "row": ROWS[row]}
        events: list[RuleEvent] = [Applied(seat, write, {"value": value})]
        if self.simultaneous:
            self.wrote[seat] = True
            if not all(self.wrote):
                return events
            self.wrote = [False] * self.seats
        self.turn += 1
        if self.turn >= self._end:
            events.append(Public({"type": "game_over", "scores": self.scores()}))
        elif self.simultaneous:
            events.append(Public({"type": "round", "round": self.turn + 1}))
        else:
            events.append(Public({"type": "turn", "seat": self.turn % self.seats}))
        return events

    def apply_timeout(self, seat: object) -> list[RuleEvent]:
        """Roll first if the seat has not; else write the best-scoring legal cell.

        Best-scoring: the cell whose value raises the seat's total the most now, ties to
        the first in column order then row order. If only call cells are left, that choice
        is made among them and announced and written at once.
        """
        seat = self._check_actor(seat)
        events: list[RuleEvent] = [TimedOut(seat)]
        if self.rolls[seat] == 0:
            self.pending, self.held = seat, 0
            events.append(Applied(seat, {"type": "roll", "hold": []}))
            return events
        called = self.called[seat]
        if called >= 0:
            return events + self._write(seat, CALL, called)
        cells = self.cells[seat]
        candidates = self._writable(seat) or [
            i for i in range(CALL * NROWS, HAND * NROWS) if cells[i] == EMPTY
        ]
        values = row_values(self.dice[seat])
        best, best_gain = candidates[0], None
        for i in candidates:
            col = i // NROWS
            before = column_total(cells, col)
            cells[i] = values[i % NROWS]
            gain = column_total(cells, col) - before
            cells[i] = EMPTY
            if best_gain is None or gain > best_gain:
                best, best_gain = i, gain
        col, row = divmod(best, NROWS)
        if col == CALL:
            self.called[seat] = row
            events.append(Applied(seat, {"type": "call", "row": ROWS[row]}))
        return events + self._write(seat, col, row)

    # --- chance --------------------------------------------------------------------------

    def chance_pending(self) -> bool:
        return self.pending >= 0

    def sample_chance(self) -> JSON:
        draw = self._draw()
        old, held = self.dice[self.pending], self.held
        dice = [old[i] if held >> i & 1 else draw.die() for i in range(6)]
        return {"seat": self.pending, "dice": dice}

    def apply_chance(self, outcome: Mapping[str, Any]) -> list[RuleEvent]:
        seat = self.pending
        if seat < 0:
            raise IllegalAction("no chance event is pending", "no-chance-pending")
        if not isinstance(outcome, Mapping) or set(outcome) != {"seat", "dice"}:
            raise IllegalAction("a yamb roll is {'seat', 'dice'}", "impossible-outcome")
        if outcome["seat"] != seat or isinstance(outcome["seat"], bool):
            raise IllegalAction(f"the pending roll is seat {seat}'s", "impossible-outcome")
        dice = outcome["dice"]
        if (
            not isinstance(dice, list)
            or len(dice) != 6
            or not all(type(d) is int and 1 <= d <= 6 for d in dice)
        ):
            raise IllegalAction("'dice' must be six values 1..6", "impossible-outcome")
        old, held = self.dice[seat], self.held
        if any(held >> i & 1 and dice[i] != old[i] for i in range(6)):
            raise IllegalAction("a held die changed its value", "impossible-outcome")
        self.dice[seat] = list(dice)
        self.rolls[seat] += 1
        self.pending, self.held = _NOBODY, 0
        self.chance_count += 1
        rolled = {"type": "rolled", "seat": seat, "dice": list(dice), "roll": self.rolls[seat]}
        return [Public(rolled)]

    # --- results and views ---------------------------------------------------------------

    def is_over(self) -> bool:
        return self.turn >= self._end

    def scores(self) -> list[int]:
        return [table_total(c) for c in self.cells]

    def hidden(self, seat: int) -> list[Any]:
        """Nothing: every table and every die is public, in both modes."""
        return []

    def view(self, seat: int | None) -> JSON:
        over = self.is_over()
        n = self.seats
        tables = [self._table_view(s) for s in range(n)]
        return {
            "game": self.game_name,
            "seats": n,
            "options": dict(self.options),
            "you": seat,
            "window": self.window(),
            "round": min(self.turn if self.simultaneous else self.turn // n, NCELLS - 1) + 1,
            "active": None if over or self.simultaneous else self.turn % n,
            "actors": list(self.actors()),
            "pending": (
                None if self.pending < 0 else {"seat": self.pending, "hold": _holds(self.held)}
            ),
            "over": over,
            "scores": [t["total"] for t in tables],
            "winners": self.winners() if over else [],
            "tables": tables,
        }

    def _table_view(self, seat: int) -> JSON:
        cells = self.cells[seat]
        columns: JSON = {}
        sums: JSON = {}
        total = 0
        for col, cname in enumerate(COLUMNS):
            base = col * NROWS
            # Written cells only, as in the `dicehall sheet` format: a missing row is empty.
            columns[cname] = {
                r: v for r, v in zip(ROWS, cells[base : base + NROWS], strict=True) if v >= 0
            }
            s1, s2, s3 = column_sums(cells, col)
            sums[cname] = {"s1": s1, "s2": s2, "s3": s3, "total": s1 + s2 + s3}
            total += s1 + s2 + s3
        rolls = self.rolls[seat]
        return {
            "columns": columns,
            "sums": sums,
            "total": total,
            "rolls": rolls,
            "dice": self.dice[seat][:] if rolls else None,
            "called": None if self.called[seat] < 0 else ROWS[self.called[seat]],
            "done": self.wrote[seat],
        }

    def render(self, seat: int, name: str = "") -> str:
        cells = self.cells[seat]
        return render_table(cells, name, table_total(cells) if self.is_over() else None)


def _row_of(name: str) -> int:
    row = ROW_INDEX.get(name)
    if row is None:
        raise IllegalAction(f"no row {name!r}; rows: {list(ROWS)}", "no-such-row")
    return row


# --- loading helpers (InvalidState on anything play cannot produce) --------------------


def _seq(value: object, n: int, what: str) -> list[Any]:
    if not isinstance(value, list) or len(value) != n:
        raise InvalidState(f"{what!r} must be a list with one entry per seat")
    return value


def _int(value: object, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidState(f"{what!r} must be an integer in {low}..{high}, not {value!r}")
    return value


def _bool(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidState(f"{what!r} must be true or false")
    return value


def _dice(value: object) -> list[int]:
    if not isinstance(value, list) or len(value) != 6:
        raise InvalidState("a seat's dice are a list of six values")
    return [_int(d, "dice", 0, 6) for d in value]


def _row_or_none(value: object) -> int:
    if value is None:
        return _NO_ROW
    if not isinstance(value, str) or value not in ROW_INDEX:
        raise InvalidState(f"'called' must be a row name or null, not {value!r}")
    return ROW_INDEX[value]


def _table(value: object, seat: int) -> list[int]:
    if not isinstance(value, list) or len(value) != NCELLS:
        raise InvalidState(f"seat {seat}: a table is a list of {NCELLS} cells")
    return [
        EMPTY if v is None else check_value(v, i // NROWS, i % NROWS) for i, v in enumerate(value)
    ]
