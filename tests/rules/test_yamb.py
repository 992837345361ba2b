"""Yamb (docs/rules.md, Yamb): scoring, legality, forced cases, time-outs, modes, text, sheets."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from random import Random
from typing import Any

import pytest

from dicehall.rules import (
    Applied,
    IllegalAction,
    InvalidOptions,
    InvalidState,
    Public,
    TimedOut,
    as_wire,
)
from dicehall.rules.base import JSON
from dicehall.rules.yamb import GAME, YambState, score_sheet
from dicehall.rules.yamb.table import (
    COLUMN_INDEX,
    COLUMNS,
    EMPTY,
    NROWS,
    ROW_INDEX,
    ROWS,
    cell_value,
    column_sums,
    table_total,
)

SEED = bytes(range(32))


def new(seats: int = 1, mode: str = "turns") -> YambState:
    state = GAME.new_state(seats, {"mode": mode}, seed=SEED)
    assert isinstance(state, YambState)
    return state


def idx(column: str, row: str) -> int:
    return COLUMN_INDEX[column] * NROWS + ROW_INDEX[row]


def roll(state: YambState, seat: int, dice: Sequence[int], hold: Sequence[int] = ()) -> None:
    """Roll through the public API with an explicit chance outcome."""
    state.apply_action(seat, {"type": "roll", "hold": list(hold)})
    state.apply_chance({"seat": seat, "dice": list(dice)})


def write(state: YambState, seat: int, column: str, row: str) -> list[JSON]:
    """Write a cell; the events as members see them."""
    return as_wire(state.apply_action(seat, {"type": "write", "column": column, "row": row}))


def preset(state: YambState, cells: Mapping[tuple[str, str], int]) -> None:
    """Set a one-seat table directly: the cells given, every other one filled.

    Filler is the lowest value a row can hold: 0, or 6 for min and max.
    """
    assert state.seats == 1 and state.rolls[0] == 0
    table = [6 if i % NROWS in (ROW_INDEX["min"], ROW_INDEX["max"]) else 0 for i in range(78)]
    for (column, row), value in cells.items():
        table[idx(column, row)] = value
    state.cells[0] = table
    state.turn = len(table) - table.count(EMPTY)
    assert GAME.state_from_dict(state.to_dict()) == state


def empty_cells(*cells: tuple[str, str]) -> dict[tuple[str, str], int]:
    return dict.fromkeys(cells, EMPTY)


def refused(state: YambState, seat: int, action: Any, rule: str) -> None:
    before = state.to_dict()
    with pytest.raises(IllegalAction) as err:
        state.apply_action(seat, action)
    assert err.value.rule == rule, err.value.message
    assert state.to_dict() == before


def writes(state: YambState, seat: int = 0) -> list[tuple[str, str]]:
    return [(a["column"], a["row"]) for a in state.legal_actions(seat) if a["type"] == "write"]


def kinds(state: YambState, seat: int = 0) -> set[str]:
    return {a["type"] for a in state.legal_actions(seat)}


# --- cell values ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dice", "row", "value"),
    [
        ([3, 3, 1, 5, 3, 6], "3", 9),
        ([3, 3, 1, 5, 3, 6], "1", 1),
        ([3, 3, 1, 5, 3, 6], "2", 0),
        ([6, 6, 6, 6, 6, 6], "6", 36),
        ([3, 3, 1, 5, 3, 6], "min", 21),
        ([3, 3, 1, 5, 3, 6], "max", 21),
        ([6, 1, 5, 2, 4, 3], "kenta", 61),
        ([1, 2, 3, 4, 5, 5], "kenta", 0),
        # full: three of a and two of another b, the (a, b) scoring most
        ([4, 4, 4, 6, 6, 6], "full", 56),  # 6 6 6 + 4 4 + 30 beats 4 4 4 + 6 6 + 30 = 54
        ([3, 3, 3, 2, 2, 2], "full", 43),  # 9 + 4 + 30 beats 6 + 6 + 30
        ([1, 1, 1, 6, 6, 2], "full", 45),
        ([6, 6, 6, 6, 5, 5], "full", 58),  # three of the four 6s + 5 5
        ([5, 5, 5, 5, 6, 6], "full", 57),
        ([5, 5, 5, 5, 5, 5], "full", 0),  # two of *another* number
        ([2, 2, 2, 2, 2, 3], "full", 0),
        ([6, 6, 6, 1, 2, 3], "full", 0),
        # poker: four of one number + 40
        ([6, 6, 6, 6, 6, 1], "poker", 64),
        ([2, 2, 2, 2, 5, 5], "poker", 48),
        ([3, 3, 3, 3, 3, 3], "poker", 52),
        ([5, 5, 5, 6, 6, 6], "poker", 0),
        # yamb: five of one number + 50
        ([4, 4, 4, 4, 4, 1], "yamb", 70),
        ([6, 6, 6, 6, 6, 6], "yamb", 80),
        ([1, 1, 1, 1, 2, 2], "yamb", 0),
        # royal: six of one number + 60
        ([2, 2, 2, 2, 2, 2], "royal", 72),
        ([6, 6, 6, 6, 6, 6], "royal", 96),
        ([6, 6, 6, 6, 6, 5], "royal", 0),
    ],
)
def test_cell_values(dice: list[int], row: str, value: int) -> None:
    assert cell_value(dice, ROW_INDEX[row]) == value


def column(values: Mapping[str, int], col: str = "free1") -> list[int]:
    cells = [EMPTY] * (NROWS * len(COLUMNS))
    for row, v in values.items():
        cells[idx(col, row)] = v
    return cells


def test_s1_bonus_from_60() -> None:
    # 3 + 8 + 12 + 16 + 20 + 24 = 83 >= 60: +30
    earns = column({"1": 3, "2": 8, "3": 12, "4": 16, "5": 20, "6": 24})
    assert column_sums(earns, COLUMN_INDEX["free1"]) == (113, 0, 0)
    exactly = column({"3": 12, "4": 16, "5": 20, "6": 12})
    assert column_sums(exactly, COLUMN_INDEX["free1"])[0] == 60 + 30
    short = column({"3": 12, "4": 16, "5": 20, "6": 6, "1": 5})
    assert column_sums(short, COLUMN_INDEX["free1"])[0] == 59


def test_s2_may_be_negative_and_waits_for_its_three_cells() -> None:
    cells = column({"1": 4, "min": 25, "max": 18})
    assert column_sums(cells, COLUMN_INDEX["free1"]) == (4, (18 - 25) * 4, 0)
    assert table_total(cells) == 4 - 28
    for missing in ("1", "min", "max"):
        partial = column({k: v for k, v in {"1": 4, "min": 10, "max": 30}.items() if k != missing})
        assert column_sums(partial, COLUMN_INDEX["free1"])[1] == 0
    assert column_sums(column({"1": 0, "min": 10, "max": 30}), COLUMN_INDEX["free1"])[1] == 0


def test_s3_and_column_total() -> None:
    cells = column({"kenta": 61, "full": 58, "poker": 0, "yamb": 75, "royal": 66}, "up")
    assert column_sums(cells, COLUMN_INDEX["up"]) == (0, 0, 260)
    cells[idx("down", "royal")] = 96
    assert table_total(cells) == 356


# --- the canonical text and dicehall sheet --------------------------------------------

SHEET: JSON = {
    "name": "Jane Doe",
    "columns": {
        "down": {"1": 3, "2": 6, "3": 9, "4": 12, "5": 15, "6": 18, "min": 10, "max": 30,
                 "kenta": 61, "full": 58, "poker": 0, "yamb": 75, "royal": 0},
        "up": {"1": 1, "2": 4, "3": 6, "4": 8, "5": 10, "6": 12, "min": 25, "max": 20,
               "kenta": 0, "full": 43, "poker": 56, "yamb": 0, "royal": 0},
        "free1": {"1": 5, "2": 10, "3": 15, "4": 16, "5": 10, "6": 6, "min": 8, "max": 28,
                  "kenta": 61, "full": 0, "poker": 64, "yamb": 80, "royal": 96},
        "free2": {"2": 2, "6": 30, "min": 12, "max": 33, "full": 45, "kenta": None},
        "call": {"yamb": 0, "royal": 66},
        "hand": {"1": 0, "4": 20, "min": 7, "max": 35, "poker": 44},
    },
}  # fmt: skip

# down: S1 63 + 30 = 93, S2 (30 - 10) x 3 = 60, S3 194 -> 347
# up: S1 41, S2 (20 - 25) x 1 = -5, S3 99 -> 135
# free1: S1 62 + 30 = 92, S2 20 x 5 = 100, S3 301 -> 493
# free2: S1 32, S2 0 (no "1" yet), S3 45 -> 77; call 66; hand: S1 20, S2 28 x 0, S3 44 -> 64
SHEET_TEXT = """\
Player name: Jane Doe          Points: 1182
      | down|   up|free1|free2| call| hand|
------+-----+-----+-----+-----+-----+-----+
1     |    3|    1|    5|     |     |    0|
2     |    6|    4|   10|    2|     |     |
3     |    9|    6|   15|     |     |     |
4     |   12|    8|   16|     |     |   20|
5     |   15|   10|   10|     |     |     |
6     |   18|   12|    6|   30|     |     |
S1    |   93|   41|   92|   32|    0|   20|
------+-----+-----+-----+-----+-----+-----+
min   |   10|   25|    8|   12|     |    7|
max   |   30|   20|   28|   33|     |   35|
S2    |   60|   -5|  100|    0|    0|    0|
------+-----+-----+-----+-----+-----+-----+
kenta |   61|    0|   61|     |     |     |
full  |   58|   43|    0|   45|     |     |
poker |    0|   56|   64|     |     |   44|
yamb  |   75|    0|   80|     |    0|     |
royal |    0|    0|   96|     |   66|     |
S3    |  194|   99|  301|   45|   66|   44|
------+-----+-----+-----+-----+-----+-----+
Total |  347|  135|  493|   77|   66|   64|
------+-----+-----+-----+-----+-----+-----+
Score: 1182"""


def test_score_sheet_hand_worked() -> None:
    assert score_sheet(SHEET) == (1182, SHEET_TEXT)
    assert GAME.score_sheet is score_sheet


def test_sheet_name_is_optional_and_long_names_push_points() -> None:
    score, text = score_sheet({"columns": {"hand": {"royal": 66}}})
    assert score == 66
    assert text.splitlines()[0] == "Player name:                   Points: 66"
    long = "A Very Long Player Name Indeed"
    _, text = score_sheet({"name": long, "columns": {}})
    assert text.splitlines()[0] == f"Player name: {long} Points: 0"


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ([], "must be a map"),
        ({"columns": {}, "extra": 1}, "unexpected keys"),
        ({"name": 3, "columns": {}}, "'name'"),
        ({"name": "x"}, "'columns'"),
        ({"columns": {"left": {}}}, "unknown column 'left'"),
        ({"columns": {"down": []}}, "column 'down'"),
        ({"columns": {"down": {"7": 7}}}, "unknown row '7'"),
        ({"columns": {"down": {"3": 10}}}, "column 'down' row '3': 10"),
        ({"columns": {"down": {"3": 21}}}, "row '3': 21"),
        ({"columns": {"down": {"3": True}}}, "must be an integer"),
        ({"columns": {"down": {"3": "9"}}}, "must be an integer"),
        ({"columns": {"up": {"min": 0}}}, "6..36"),
        ({"columns": {"up": {"max": 37}}}, "6..36"),
        ({"columns": {"up": {"kenta": 60}}}, "0, 61"),
        ({"columns": {"up": {"full": 31}}}, "row 'full': 31"),
        ({"columns": {"up": {"full": 35}}}, "row 'full': 35"),  # 3a + 2b = 5 only with a = b
        ({"columns": {"up": {"poker": 46}}}, "row 'poker'"),
        ({"columns": {"up": {"yamb": 56}}}, "row 'yamb'"),
        ({"columns": {"up": {"royal": 97}}}, "row 'royal'"),
        ({"columns": {"up": {"6": -6}}}, "row '6'"),
    ],
)
def test_score_sheet_refuses_impossible_sheets(data: Any, needle: str) -> None:
    with pytest.raises(InvalidState) as err:
        score_sheet(data)
    assert needle in err.value.message


def test_render_of_a_game_on_and_over() -> None:
    state = new()
    text = state.render(0)
    lines = text.splitlines()
    assert lines[0] == "Player name:"
    assert lines[3] == "1     |     |     |     |     |     |     |"
    assert lines[9] == "S1    |    0|    0|    0|    0|    0|    0|"
    assert lines[-1] == "Score: 0"
    assert len(lines) == 25 and not text.endswith("\n")
    assert all(line == line.rstrip() for line in lines)
    assert state.render(0, "  Jane \t Doe ").splitlines()[0] == "Player name: Jane Doe"

    # the same table as SHEET, reached as the last cell of a one-seat game
    full: dict[tuple[str, str], int] = {}
    for c, rows in SHEET["columns"].items():
        full.update({(c, r): v for r, v in rows.items() if v is not None})
    preset(state, full)
    assert state.is_over()
    over = state.render(0, "Jane Doe")
    assert over.splitlines()[0] == f"Player name: Jane Doe          Points: {state.scores()[0]}"
    assert over.splitlines()[-1] == f"Score: {state.scores()[0]}"


# --- turn structure and legality -------------------------------------------------------


def test_first_roll_rolls_all_six() -> None:
    state = new()
    assert state.legal_actions(0) == [{"type": "roll", "hold": []}]
    refused(state, 0, {"type": "roll", "hold": [0]}, "hold-first-roll")
    refused(state, 0, {"type": "write", "column": "free1", "row": "1"}, "not-rolled")
    refused(state, 0, {"type": "call", "row": "1"}, "not-rolled")
    events = state.apply_action(0, {"type": "roll", "hold": []})
    assert events == [Applied(0, {"type": "roll", "hold": []})]
    assert state.chance_pending() and state.actors() == ()
    refused(state, 0, {"type": "roll", "hold": []}, "chance-pending")


@pytest.mark.parametrize(
    ("action", "rule"),
    [
        ({"type": "roll"}, "malformed-action"),
        ({"type": "roll", "hold": "01"}, "malformed-action"),
        ({"type": "roll", "hold": [True]}, "malformed-action"),
        ({"type": "roll", "hold": [1.0]}, "malformed-action"),
        ({"type": "roll", "hold": [6]}, "no-such-die"),
        ({"type": "roll", "hold": [-1]}, "no-such-die"),
        ({"type": "roll", "hold": [2, 2]}, "hold-repeat"),
        ({"type": "roll", "hold": [0, 1, 2, 3, 4, 5]}, "hold-all"),
        ({"type": "roll", "hold": [], "dice": 1}, "malformed-action"),
        ({"type": "write", "column": "free1"}, "malformed-action"),
        ({"type": "write", "column": "free3", "row": "1"}, "no-such-column"),
        ({"type": "write", "column": "free1", "row": 1}, "malformed-action"),
        ({"type": "write", "column": "free1", "row": "seven"}, "no-such-row"),
        ({"type": "call", "row": "chance"}, "no-such-row"),
        ({"type": "pass"}, "unknown-action"),
        ("roll", "malformed-action"),
    ],
)
def test_malformed_actions_change_nothing(action: Any, rule: str) -> None:
    state = new()
    roll(state, 0, [1, 2, 3, 4, 5, 6])
    refused(state, 0, action, rule)


def test_held_dice_keep_their_values() -> None:
    state = new()
    roll(state, 0, [1, 2, 3, 4, 5, 6])
    state.apply_action(0, {"type": "roll", "hold": [2, 0]})
    assert state.to_dict()["pending"] == {"seat": 0, "hold": [0, 2]}
    sample = state.sample_chance()
    assert sample == state.sample_chance()  # pure
    assert sample["seat"] == 0 and sample["dice"][0] == 1 and sample["dice"][2] == 3
    before = state.to_dict()
    for bad in (
        {"seat": 0, "dice": [2, 2, 3, 4, 5, 6]},  # die 0 was held at 1
        {"seat": 0, "dice": [1, 2, 4, 4, 5, 6]},  # die 2 was held at 3
        {"seat": 1, "dice": [1, 2, 3, 4, 5, 6]},
        {"seat": True, "dice": [1, 2, 3, 4, 5, 6]},
        {"seat": 0, "dice": [1, 2, 3, 4, 5]},
        {"seat": 0, "dice": [1, 2, 3, 4, 5, 7]},
        {"seat": 0, "dice": [1, 2, 3, 4, 5, True]},
        {"seat": 0, "dice": [1, 2, 3, 4, 5, 6], "roll": 2},
        {"dice": [1, 2, 3, 4, 5, 6]},
        [1, 2, 3, 4, 5, 6],
    ):
        with pytest.raises(IllegalAction) as err:
            state.apply_chance(bad)  # type: ignore[arg-type]
        assert err.value.rule == "impossible-outcome"
        assert state.to_dict() == before
    events = state.apply_chance({"seat": 0, "dice": [1, 6, 3, 6, 6, 6]})
    assert events == [Public({"type": "rolled", "seat": 0, "dice": [1, 6, 3, 6, 6, 6], "roll": 2})]
    assert state.chance_count == 2


def test_no_chance_pending_is_refused() -> None:
    state = new()
    with pytest.raises(IllegalAction) as err:
        state.apply_chance({"seat": 0, "dice": [1, 1, 1, 1, 1, 1]})
    assert err.value.rule == "no-chance-pending"
    with pytest.raises(IllegalAction):
        state.sample_chance()


def test_three_rolls_at_most() -> None:
    state = new()
    roll(state, 0, [1, 2, 3, 4, 5, 6])
    roll(state, 0, [1, 2, 3, 4, 5, 5], hold=[0, 1, 2, 3, 4])
    roll(state, 0, [5, 5, 3, 4, 5, 5], hold=[2, 3, 4, 5])
    assert kinds(state) == {"write"}
    refused(state, 0, {"type": "roll", "hold": []}, "no-rolls-left")
    assert write(state, 0, "free1", "5")[0]["value"] == 20


def test_legal_actions_after_the_first_roll() -> None:
    state = new()
    roll(state, 0, [1, 2, 3, 4, 5, 6])
    legal = state.legal_actions(0)
    rolls = [a for a in legal if a["type"] == "roll"]
    assert len(rolls) == 63 and {"type": "roll", "hold": [0, 2, 5]} in rolls
    assert [a["row"] for a in legal if a["type"] == "call"] == list(ROWS)
    w = writes(state)
    assert ("down", "1") in w and ("down", "2") not in w
    assert ("up", "royal") in w and ("up", "yamb") not in w
    assert all((c, r) in w for c in ("free1", "free2", "hand") for r in ROWS)
    assert not any(c == "call" for c, _ in w)
    assert len(w) == 1 + 1 + 13 * 3
    for action in legal:
        state.clone().apply_action(0, action)


def test_down_fills_top_to_bottom() -> None:
    state = new()
    roll(state, 0, [1, 1, 2, 3, 4, 5])
    refused(state, 0, {"type": "write", "column": "down", "row": "2"}, "down-order")
    refused(state, 0, {"type": "write", "column": "down", "row": "royal"}, "down-order")
    assert write(state, 0, "down", "1")[0]["value"] == 2
    roll(state, 0, [2, 2, 2, 3, 4, 5])
    assert [r for c, r in writes(state) if c == "down"] == ["2"]
    write(state, 0, "down", "2")
    assert state.cells[0][idx("down", "2")] == 6
    roll(state, 0, [2, 2, 2, 3, 4, 5])
    refused(state, 0, {"type": "write", "column": "down", "row": "2"}, "cell-filled")


def test_up_fills_bottom_to_top() -> None:
    state = new()
    roll(state, 0, [6, 6, 6, 6, 6, 6])
    refused(state, 0, {"type": "write", "column": "up", "row": "1"}, "up-order")
    refused(state, 0, {"type": "write", "column": "up", "row": "yamb"}, "up-order")
    assert write(state, 0, "up", "royal")[0]["value"] == 96
    roll(state, 0, [6, 6, 6, 6, 6, 1])
    assert [r for c, r in writes(state) if c == "up"] == ["yamb"]
    assert write(state, 0, "up", "yamb")[0]["value"] == 80


def test_free_columns_take_any_row_and_any_cell_may_take_a_zero() -> None:
    state = new()
    roll(state, 0, [1, 2, 3, 4, 5, 5])
    assert write(state, 0, "free1", "yamb")[0]["value"] == 0
    roll(state, 0, [1, 2, 3, 4, 5, 5])
    assert write(state, 0, "free2", "3")[0]["value"] == 3
    roll(state, 0, [1, 2, 3, 4, 5, 5])
    assert write(state, 0, "free2", "6")[0]["value"] == 0
    roll(state, 0, [1, 1, 1, 1, 1, 1])
    assert write(state, 0, "free1", "max")[0]["value"] == 6


def test_hand_only_straight_after_the_first_roll() -> None:
    state = new()
    roll(state, 0, [4, 4, 4, 4, 2, 2])
    assert write(state, 0, "hand", "poker")[0]["value"] == 56
    roll(state, 0, [4, 4, 4, 4, 2, 2])
    roll(state, 0, [4, 4, 4, 4, 4, 2], hold=[0, 1, 2, 3])
    assert not any(c == "hand" for c, _ in writes(state))
    refused(state, 0, {"type": "write", "column": "hand", "row": "yamb"}, "hand-first-roll")


def test_call_announced_after_the_first_roll_then_written_there() -> None:
    state = new()
    roll(state, 0, [5, 5, 5, 1, 2, 3])
    refused(state, 0, {"type": "write", "column": "call", "row": "yamb"}, "not-called")
    events = state.apply_action(0, {"type": "call", "row": "yamb"})
    assert events == [Applied(0, {"type": "call", "row": "yamb"})]
    refused(state, 0, {"type": "call", "row": "poker"}, "already-called")
    refused(state, 0, {"type": "write", "column": "free1", "row": "yamb"}, "must-write-called")
    refused(state, 0, {"type": "write", "column": "call", "row": "poker"}, "must-write-called")
    legal = state.legal_actions(0)
    assert [a for a in legal if a["type"] != "roll"] == [
        {"type": "write", "column": "call", "row": "yamb"}
    ]
    roll(state, 0, [5, 5, 5, 5, 2, 3], hold=[0, 1, 2])
    roll(state, 0, [5, 5, 5, 5, 5, 3], hold=[0, 1, 2, 3])
    assert state.view(None)["tables"][0]["called"] == "yamb"
    assert write(state, 0, "call", "yamb")[0]["value"] == 75
    # the call is spent with the turn
    roll(state, 0, [5, 5, 5, 1, 2, 3])
    refused(state, 0, {"type": "call", "row": "yamb"}, "cell-filled")
    refused(state, 0, {"type": "write", "column": "call", "row": "yamb"}, "cell-filled")


def test_a_failed_call_writes_zero() -> None:
    state = new()
    roll(state, 0, [1, 2, 3, 4, 5, 5])
    state.apply_action(0, {"type": "call", "row": "kenta"})
    roll(state, 0, [1, 2, 3, 4, 5, 5], hold=[0, 1, 2, 3, 4])
    roll(state, 0, [1, 2, 3, 4, 5, 4], hold=[0, 1, 2, 3, 4])
    assert state.legal_actions(0) == [{"type": "write", "column": "call", "row": "kenta"}]
    assert write(state, 0, "call", "kenta")[0]["value"] == 0


def test_call_only_before_the_second_roll() -> None:
    state = new()
    roll(state, 0, [1, 2, 3, 4, 5, 5])
    roll(state, 0, [1, 2, 3, 4, 5, 6], hold=[0, 1, 2, 3, 4])
    assert "call" not in kinds(state)
    refused(state, 0, {"type": "call", "row": "kenta"}, "call-too-late")


def test_only_call_cells_left_forces_an_announcement() -> None:
    state = new()
    preset(state, empty_cells(("call", "full"), ("call", "royal")))
    roll(state, 0, [3, 3, 3, 2, 2, 1])
    assert state.legal_actions(0) == [
        {"type": "call", "row": "full"},
        {"type": "call", "row": "royal"},
    ]
    refused(state, 0, {"type": "roll", "hold": [0, 1, 2]}, "must-write")
    state.apply_action(0, {"type": "call", "row": "full"})
    assert kinds(state) == {"roll", "write"}
    roll(state, 0, [3, 3, 3, 2, 2, 6], hold=[0, 1, 2, 3, 4])
    assert write(state, 0, "call", "full")[0]["value"] == 43


def test_only_hand_cells_left_forces_a_write_after_the_first_roll() -> None:
    state = new()
    preset(state, empty_cells(("hand", "1"), ("hand", "kenta")))
    roll(state, 0, [1, 2, 3, 4, 5, 6])
    assert state.legal_actions(0) == [
        {"type": "write", "column": "hand", "row": "1"},
        {"type": "write", "column": "hand", "row": "kenta"},
    ]
    refused(state, 0, {"type": "roll", "hold": []}, "must-write")
    assert write(state, 0, "hand", "kenta")[0]["value"] == 61


def test_hand_and_call_cells_left_allow_either_but_no_roll() -> None:
    state = new()
    preset(state, empty_cells(("hand", "1"), ("call", "1")))
    roll(state, 0, [1, 1, 3, 4, 5, 6])
    assert state.legal_actions(0) == [
        {"type": "call", "row": "1"},
        {"type": "write", "column": "hand", "row": "1"},
    ]
    state.apply_action(0, {"type": "call", "row": "1"})
    roll(state, 0, [1, 1, 1, 1, 5, 6], hold=[0, 1])
    assert write(state, 0, "call", "1")[0]["value"] == 4


def test_a_roll_is_legal_while_an_open_cell_remains() -> None:
    state = new()
    preset(state, empty_cells(("hand", "1"), ("up", "2")))
    roll(state, 0, [1, 1, 3, 4, 5, 6])
    assert "roll" in kinds(state)
    roll(state, 0, [1, 1, 2, 2, 5, 6], hold=[0, 1])
    assert writes(state) == [("up", "2")]


def test_s2_counts_only_with_its_three_cells() -> None:
    state = new()
    roll(state, 0, [6, 6, 6, 6, 5, 5])
    write(state, 0, "free1", "max")  # 34
    roll(state, 0, [1, 1, 1, 1, 2, 2])
    write(state, 0, "free1", "min")  # 8
    assert state.scores() == [0]
    roll(state, 0, [1, 1, 1, 2, 2, 2])
    write(state, 0, "free1", "1")  # 3
    assert state.scores() == [3 + (34 - 8) * 3]
    sums = state.view(0)["tables"][0]["sums"]["free1"]
    assert sums == {"s1": 3, "s2": 78, "s3": 0, "total": 81}


# --- time-outs ----------------------------------------------------------------------------


def test_timeout_rolls_first_then_writes_the_best_cell() -> None:
    state = new()
    events = state.apply_timeout(0)
    assert events == [TimedOut(0), Applied(0, {"type": "roll", "hold": []})]
    assert state.chance_pending()
    state.apply_chance({"seat": 0, "dice": [6, 6, 6, 6, 6, 6]})
    events = state.apply_timeout(0)
    # royal (96) is the biggest raise; up royal comes before free1/free2/hand royal
    assert events[:2] == [
        TimedOut(0),
        Applied(0, {"type": "write", "column": "up", "row": "royal"}, {"value": 96}),
    ]
    assert state.rolls == [0] and state.turn == 1


def test_timeout_counts_the_bonus_in_the_raise() -> None:
    state = new()
    # free1 holds 45 in rows 1..5: three 6s there reach 63 and the +30 bonus (raise 48),
    # more than 18 in free2 "6" and than max 24 (S2 incomplete without min: raise 0)
    cells = {("free1", r): v for r, v in {"1": 5, "2": 10, "3": 15, "4": 0, "5": 15}.items()}
    cells.update(empty_cells(*[(c, r) for c in ("free1", "free2") for r in ("6", "min", "max")]))
    preset(state, cells)
    before = state.scores()[0]
    roll(state, 0, [6, 6, 6, 1, 2, 3])
    roll(state, 0, [6, 6, 6, 1, 2, 3], hold=[0, 1, 2])  # hand is gone after this roll
    events = as_wire(state.apply_timeout(0))
    assert events[1]["action"] == {"type": "write", "column": "free1", "row": "6"}
    assert state.scores()[0] - before == 18 + 30


def test_timeout_ties_go_to_the_first_column_then_row() -> None:
    state = new()
    roll(state, 0, [1, 2, 3, 4, 5, 5])
    roll(state, 0, [1, 2, 2, 4, 5, 5], hold=[0, 1, 3, 4, 5])
    # raises: down 1 -> 1, up royal -> 0, free rows: "5" 10 is the best
    events = as_wire(state.apply_timeout(0))
    assert events[1]["action"] == {"type": "write", "column": "free1", "row": "5"}


def test_timeout_writes_a_called_cell_as_the_dice_stand() -> None:
    state = new()
    roll(state, 0, [6, 6, 6, 6, 6, 1])
    state.apply_action(0, {"type": "call", "row": "kenta"})
    events = state.apply_timeout(0)
    assert events[1] == Applied(
        0, {"type": "write", "column": "call", "row": "kenta"}, {"value": 0}
    )


def test_timeout_announces_when_only_call_cells_remain() -> None:
    state = new()
    preset(state, empty_cells(("call", "1"), ("call", "poker")))
    roll(state, 0, [2, 2, 2, 2, 1, 3])
    events = state.apply_timeout(0)
    assert events[1:3] == [
        Applied(0, {"type": "call", "row": "poker"}),
        Applied(0, {"type": "write", "column": "call", "row": "poker"}, {"value": 48}),
    ]


def test_timeout_may_write_hand_after_the_first_roll() -> None:
    state = new()
    preset(state, empty_cells(("hand", "5"), ("free2", "1")))
    roll(state, 0, [5, 5, 5, 1, 2, 3])
    events = as_wire(state.apply_timeout(0))
    assert events[1]["action"] == {"type": "write", "column": "hand", "row": "5"}


# --- seats, modes, windows, the end -----------------------------------------------------


def test_turns_mode_passes_the_turn() -> None:
    state = new(2)
    assert state.actors() == (0,) and state.window() == 0
    refused(state, 1, {"type": "roll", "hold": []}, "not-your-turn")
    assert state.legal_actions(1) == []
    roll(state, 0, [1, 2, 3, 4, 5, 6])
    assert state.window() == 0
    events = write(state, 0, "free1", "kenta")
    assert events[-1] == {"type": "turn", "seat": 1}
    assert state.actors() == (1,) and state.window() == 1
    roll(state, 1, [1, 1, 1, 1, 1, 1])
    assert write(state, 1, "hand", "royal")[-1] == {"type": "turn", "seat": 0}
    assert state.window() == 2 and state.scores() == [61, 66]
    assert state.view(None)["round"] == 2


def test_simultaneous_mode_shares_one_window_per_round() -> None:
    state = new(3, "simultaneous")
    assert state.actors() == (0, 1, 2)
    roll(state, 1, [2, 2, 2, 2, 2, 2])
    assert state.window() == 0 and state.actors() == (0, 1, 2)
    state.apply_action(0, {"type": "roll", "hold": []})
    assert state.actors() == () and state.sample_chance()["seat"] == 0
    state.apply_chance({"seat": 0, "dice": [3, 3, 3, 3, 3, 3]})
    events = write(state, 1, "free1", "royal")
    assert events == [
        {
            "type": "applied",
            "seat": 1,
            "action": {"type": "write", "column": "free1", "row": "royal"},
            "value": 72,
        }
    ]
    assert state.actors() == (0, 2) and state.window() == 0
    refused(state, 1, {"type": "roll", "hold": []}, "not-your-turn")
    assert state.view(None)["tables"][1]["done"] is True
    write(state, 0, "free1", "3")
    roll(state, 2, [1, 2, 3, 4, 5, 6])
    assert write(state, 2, "free2", "kenta")[-1] == {"type": "round", "round": 2}
    assert state.actors() == (0, 1, 2) and state.window() == 1
    assert state.scores() == [18, 72, 61]


def test_simultaneous_timeouts_of_every_seat() -> None:
    state = new(2, "simultaneous")
    roll(state, 0, [4, 4, 4, 4, 4, 4])
    state.apply_timeout(1)
    state.resolve_chance()
    assert state.actors() == (0, 1)
    state.apply_timeout(0)
    state.apply_timeout(1)
    assert state.window() == 1 and state.scores()[0] == 84


def play_random(state: YambState, rng: Random, timeout_rate: float = 0.0) -> int:
    steps = 0
    while not state.is_over():
        if state.chance_pending():
            state.resolve_chance()
        else:
            seat = rng.choice(state.actors())
            if rng.random() < timeout_rate:
                state.apply_timeout(seat)
            else:
                state.apply_action(seat, rng.choice(state.legal_actions(seat)))
        steps += 1
    return steps


def test_view_tables_are_sheets() -> None:
    state = new(2)
    rng = Random(5)
    for _ in range(300):
        if state.chance_pending():
            state.resolve_chance()
        else:
            seat = state.actors()[0]
            state.apply_action(seat, rng.choice(state.legal_actions(seat)))
    view = state.view(None)
    for seat, table in enumerate(view["tables"]):
        name = f"Seat {seat}"
        sheet = {"name": name, "columns": table["columns"]}
        assert score_sheet(sheet)[0] == table["total"] == state.scores()[seat]
        written = 78 - state.cells[seat].count(EMPTY)
        assert sum(len(rows) for rows in table["columns"].values()) == written
        assert table["sums"]["down"]["total"] == sum(column_sums(state.cells[seat], 0))


@pytest.mark.parametrize("mode", ["turns", "simultaneous"])
def test_a_game_ends_when_every_table_is_full(mode: str) -> None:
    state = new(2, mode)
    play_random(state, Random(mode), timeout_rate=0.2)
    assert all(c.count(EMPTY) == 0 for c in state.cells)
    assert state.actors() == () and state.legal_actions(0) == []
    assert state.window() == (78 * 2 - 1 if mode == "turns" else 77)
    assert state.scores() == [table_total(c) for c in state.cells]
    refused(state, 0, {"type": "roll", "hold": []}, "game-over")
    assert state.render(1, "B").splitlines()[0].endswith(f"Points: {state.scores()[1]}")


def test_the_last_write_ends_the_game() -> None:
    state = new()
    preset(state, empty_cells(("down", "royal")))
    roll(state, 0, [1, 1, 1, 1, 1, 1])
    events = write(state, 0, "down", "royal")
    assert events[-1] == {"type": "game_over", "scores": state.scores()}
    assert state.is_over() and state.window() == 77 and state.winners() == [0]


# --- serialisation, views, options ---------------------------------------------------------


def test_round_trip_clone_and_view_mid_turn() -> None:
    state = new(2, "simultaneous")
    roll(state, 1, [1, 2, 3, 4, 5, 6])
    state.apply_action(1, {"type": "call", "row": "kenta"})
    state.apply_action(1, {"type": "roll", "hold": [0, 1, 2, 3, 4]})
    data = json.loads(json.dumps(state.to_dict()))
    again = GAME.state_from_dict(data)
    assert again == state and again.to_dict() == data
    copy = state.clone()
    copy.apply_chance(copy.sample_chance())
    assert state.chance_pending() and not copy.chance_pending()
    view = state.view(0)
    assert SEED.hex() not in json.dumps(view)
    assert view["pending"] == {"seat": 1, "hold": [0, 1, 2, 3, 4]}
    assert view["tables"][1]["called"] == "kenta" and view["tables"][1]["rolls"] == 1
    assert view["tables"][0]["dice"] is None
    assert view["tables"][1]["columns"] == {c: {} for c in COLUMNS}
    assert state.hidden(0) == [] and state.hidden(1) == []


def bent(data: JSON, path: Sequence[Any], value: Any) -> JSON:
    out: JSON = json.loads(json.dumps(data))
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def test_from_dict_refuses_states_play_cannot_reach() -> None:
    state = new(2)
    roll(state, 0, [1, 2, 3, 4, 5, 6])
    write(state, 0, "free1", "kenta")
    roll(state, 1, [1, 2, 3, 4, 5, 6])
    data = state.to_dict()
    bends: list[tuple[list[Any], Any]] = [
        (["cells", 0, 2], 4),  # not a possible value of row 3
        (["cells", 0, 0], 1),  # a second written cell: too many for turn 1
        (["cells", 1], [None] * 77),
        (["turn"], 2),
        (["turn"], True),
        (["rolls", 0], 1),  # seat 0 is not playing now
        (["rolls", 1], 4),
        (["dice", 1], [0, 0, 0, 0, 0, 0]),
        (["dice", 1, 0], 7),
        (["called", 1], "bogus"),
        (["wrote", 0], True),
        (["options"], {"mode": "chaos"}),
        (["pending"], {"seat": 1, "hold": [0, 1, 2, 3, 4, 5]}),
        (["pending"], {"seat": 0, "hold": []}),
        (["seats"], 7),
    ]
    for path, value in bends:
        with pytest.raises(InvalidState):
            GAME.state_from_dict(bent(data, path, value))


def test_from_dict_refuses_a_seat_left_without_a_cell() -> None:
    state = new()
    preset(state, empty_cells(("hand", "1")))
    roll(state, 0, [1, 2, 3, 4, 5, 6])
    data = state.to_dict()
    # a second roll was refused in play: with only a hand cell left it would strand the seat
    for bend in ({"rolls": [2]}, {"pending": {"seat": 0, "hold": [0]}}):
        with pytest.raises(InvalidState):
            GAME.state_from_dict({**data, **bend})
    assert GAME.state_from_dict(data) == state
    both = new(2, "simultaneous").to_dict()
    one_each = [[1] + [None] * 77, [2] + [None] * 77]
    with pytest.raises(InvalidState) as err:
        GAME.state_from_dict({**both, "cells": one_each, "wrote": [True, True]})
    assert "round is over" in err.value.message
    one = [[1] + [None] * 77, [None] * 78]
    after = GAME.state_from_dict({**both, "cells": one, "wrote": [True, False]})
    assert after.actors() == (1,)


def test_options_and_registration() -> None:
    assert (GAME.name, GAME.title, GAME.min_seats, GAME.max_seats) == ("yamb", "Yamb", 1, 6)
    assert GAME.describe()["options"][0]["choices"] == ["turns", "simultaneous"]
    assert new().options == {"mode": "turns"}
    assert GAME.new_state(1, seed=SEED).options == {"mode": "turns"}
    with pytest.raises(InvalidOptions):
        GAME.new_state(1, {"mode": "race"})
    with pytest.raises(InvalidOptions):
        GAME.new_state(7)


def test_sample_chance_draws_only_the_rolled_dice_in_index_order() -> None:
    from dicehall.rules.fair import Draw

    state = new()
    state.apply_action(0, {"type": "roll", "hold": []})
    first = Draw(SEED, 0).dice(6)
    assert state.sample_chance() == {"seat": 0, "dice": first}
    state.resolve_chance()
    state.apply_action(0, {"type": "roll", "hold": [1, 4]})
    draw = Draw(SEED, 1)
    expected = [first[i] if i in (1, 4) else draw.die() for i in range(6)]
    assert state.sample_chance() == {"seat": 0, "dice": expected}


def test_the_documented_layout_is_the_rendered_one() -> None:
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "games" / "yamb.md").read_text(encoding="utf-8")
    assert f"```\n{SHEET_TEXT}\n```" in doc
