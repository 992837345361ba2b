"""Qwinto rules (docs/rules.md), each checked on hand-built positions with explicit dice."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from dicehall.rules import (
    Answered,
    Applied,
    IllegalAction,
    InvalidState,
    Public,
    RuleEvent,
    TimedOut,
    get_game,
)
from dicehall.rules.base import JSON
from dicehall.rules.qwinto import GAME
from dicehall.rules.qwinto.sheet import empty_sheet, render, rows_from_json, score, score_sheet
from dicehall.rules.qwinto.state import QwintoState
from tests.support.sheets import QWINTO_28

EMPTY = """\
Player name:
             -------------------------------
Red          |  %  %  |XX|  %  %  |  |  |  |
          ----------------------------------
Yellow    |  |  |  |  |  |XX|  %  %  |  |
       ----------------------------------
Blue   |  |  %  %  |XX|  |  |  |  %  %
       -------------------------------
Failed throws:"""

JANE_ROWS: dict[str, list[int | None]] = {
    "red": [2, 3, 6, None, 9, 11, 12, 13, 15, 16],
    "yellow": [1, 3, 4, 5, None, None, 12, 13, None, None],
    "blue": [1, 3, None, 6, None, 7, None, None, 10, None],
}

E: int | None = None
"""An empty box, to keep hand-built rows readable."""


def rows(
    red: list[int | None] | None = None,
    yellow: list[int | None] | None = None,
    blue: list[int | None] | None = None,
) -> dict[str, list[int | None]]:
    blank: list[int | None] = [None] * 10
    return {"red": red or blank, "yellow": yellow or blank, "blue": blue or blank}


def new(seats: int = 3, preset: str | None = None, **options: Any) -> QwintoState:
    state = GAME.new_state(seats, options or None, seed=b"q" * 32, preset=preset)
    assert isinstance(state, QwintoState)
    return state


def put(state: QwintoState, seat: int, sheet_rows: Mapping[str, Any], failed: int = 0) -> None:
    """Build a position directly: the sheet of `seat` as given, no replay."""
    state.sheets[seat] = rows_from_json(sheet_rows)
    state.failed[seat] = failed


def roll(state: QwintoState, **dice: int) -> list[RuleEvent]:
    """The active seat chooses `dice` and they show the given values (no seed involved)."""
    events = state.apply_action(state.active, {"type": "roll", "dice": list(dice)})
    assert state.chance_pending()
    return events + state.apply_chance({"dice": dice})


def enter(row: str, box: int) -> JSON:
    return {"type": "enter", "row": row, "box": box}


PASS: JSON = {"type": "pass"}


def refused(state: QwintoState, seat: int, action: Any, rule: str) -> None:
    before = state.to_dict()
    with pytest.raises(IllegalAction) as err:
        state.apply_action(seat, action)
    assert err.value.rule == rule, err.value.message
    assert state.to_dict() == before


# --- registration ----------------------------------------------------------------------


def test_game_facts() -> None:
    game = get_game("qwinto")
    assert game is GAME
    assert (game.title, game.min_seats, game.max_seats) == ("Qwinto", 1, 6)
    assert game.resolve_options() == {"reroll": False}
    assert game.resolve_options(preset="official") == {"reroll": True}
    assert game.score_sheet is score_sheet


# --- the sheet: rendering and scoring ------------------------------------------------


def test_worked_example_from_its_boxes() -> None:
    sheet = rows_from_json(JANE_ROWS)
    assert score(sheet, 3) == 28
    assert render(sheet, 3, "Jane Doe", 28) == QWINTO_28
    assert score_sheet({"name": "Jane Doe", "rows": JANE_ROWS, "failed": 3}) == (
        28,
        QWINTO_28,
    )


def test_worked_example_as_a_finished_game() -> None:
    state = new(2)
    put(state, 0, JANE_ROWS, failed=3)
    state.phase = "over"
    assert state.scores()[0] == 28
    assert state.render(0, "Jane Doe") == QWINTO_28


def test_empty_sheet_text() -> None:
    state = new(1)
    assert state.render(0) == EMPTY
    named = state.render(0, "Jane Doe")
    assert named.splitlines()[0] == "Player name: Jane Doe"
    assert named.splitlines()[1:] == EMPTY.splitlines()[1:]
    assert render(empty_sheet(), 0) == EMPTY


def test_no_trailing_spaces_and_points_column() -> None:
    text = render(empty_sheet(), 0, "", 0)
    assert text.splitlines()[0] == "Player name:" + " " * 22 + "Points: 0"
    assert text.splitlines()[0].index("Points:") == 34
    long_name = "Bartholomew Montgomery III"
    head = render(empty_sheet(), 0, long_name, -20).splitlines()[0]
    assert head == f"Player name: {long_name} Points: -20"
    for line in render(rows_from_json(JANE_ROWS), 2, "Jane Doe").splitlines():
        assert line == line.rstrip()
    assert render(empty_sheet(), 2).endswith("Failed throws: 1 2")


def test_points_only_once_the_game_is_over() -> None:
    state = new(2)
    put(state, 0, JANE_ROWS, failed=3)
    assert "Points" not in state.render(0, "Jane Doe")


def test_full_row_scores_its_right_most_box() -> None:
    full = [1, 2, 3, None, 5, 6, 7, 8, 9, 14]
    assert score(rows_from_json(rows(red=full)), 0) == 14
    almost = [1, 2, 3, None, 5, 6, 7, 8, None, 14]
    assert score(rows_from_json(rows(red=almost)), 0) == 8


def test_bonus_column_pays_only_when_full() -> None:
    # column 3: red box 1 (bonus), yellow box 2, blue box 3
    two = rows(red=[E, 3, E, E, E, E, E, E, E, E], yellow=[E, E, 4, E, E, E, E, E, E, E])
    assert score(rows_from_json(two), 0) == 2
    three = dict(two, blue=[E, E, E, 6, E, E, E, E, E, E])
    assert score(rows_from_json(three), 0) == 3 + 3
    # column 9: red box 7, yellow box 8, blue box 9 (bonus)
    col9 = rows(red=[E] * 7 + [5, E, E], yellow=[E] * 8 + [9, E], blue=[E] * 9 + [17])
    assert score(rows_from_json(col9), 0) == 3 + 17


def test_failed_throws_cost_five_each() -> None:
    assert score(empty_sheet(), 4) == -20


def test_score_sheet_validates_shape_types_and_ranges() -> None:
    good = {"name": "A", "rows": JANE_ROWS, "failed": 0}
    assert score_sheet(good)[0] == 43
    bad_cases = [
        [],
        {"rows": JANE_ROWS, "failed": 0, "extra": 1},
        {"name": 3, "rows": JANE_ROWS, "failed": 0},
        {"name": "A", "failed": 0},
        {"name": "A", "rows": dict(JANE_ROWS, red=[1] * 9), "failed": 0},
        {"name": "A", "rows": {"red": JANE_ROWS["red"]}, "failed": 0},
        {"name": "A", "rows": dict(JANE_ROWS, green=[None] * 10), "failed": 0},
        {"name": "A", "rows": dict(JANE_ROWS, red=[19] + [None] * 9), "failed": 0},
        {"name": "A", "rows": dict(JANE_ROWS, red=[0] + [None] * 9), "failed": 0},
        {"name": "A", "rows": dict(JANE_ROWS, red=[True] + [None] * 9), "failed": 0},
        {"name": "A", "rows": dict(JANE_ROWS, red=["4"] + [None] * 9), "failed": 0},
        {"name": "A", "rows": dict(JANE_ROWS, red=[None] * 3 + [7] + [None] * 6), "failed": 0},
        {"name": "A", "rows": JANE_ROWS, "failed": 5},
        {"name": "A", "rows": JANE_ROWS, "failed": -1},
        {"name": "A", "rows": JANE_ROWS, "failed": True},
    ]
    for case in bad_cases:
        with pytest.raises(InvalidState):
            score_sheet(case)
    with pytest.raises(InvalidState, match="blocked"):
        score_sheet({"name": "A", "rows": dict(JANE_ROWS, blue=[None] * 4 + [7] + [None] * 5)})


# --- entering numbers ----------------------------------------------------------------


def test_only_rows_of_rolled_colours_take_the_sum() -> None:
    state = new(2)
    roll(state, red=3, blue=4)
    legal = state.legal_actions(1)
    assert {a["row"] for a in legal if a["type"] == "enter"} == {"red", "blue"}
    refused(state, 1, enter("yellow", 0), "row-not-rolled")
    state.apply_action(1, enter("blue", 0))
    state.apply_action(0, enter("red", 9))
    assert state.sheets[1][2][0] == 7 and state.sheets[0][0][9] == 7


def test_blocked_box_is_never_fillable() -> None:
    state = new(1)
    roll(state, red=1, yellow=2, blue=3)
    legal = state.legal_actions(0)
    for row, box in (("red", 3), ("yellow", 5), ("blue", 4)):
        assert enter(row, box) not in legal
        refused(state, 0, enter(row, box), "box-blocked")


def test_rows_strictly_increase_with_gaps_anywhere() -> None:
    state = new(2)
    put(state, 1, rows(red=[2, E, E, E, E, E, E, E, E, 16]))
    roll(state, red=5, yellow=5)  # 10
    legal = [a for a in state.legal_actions(1) if a.get("row") == "red"]
    assert [a["box"] for a in legal] == [1, 2, 4, 5, 6, 7, 8]
    state.apply_action(1, enter("red", 8))  # a gap of six boxes is fine
    state.apply_action(0, PASS)
    assert state.sheets[1][0] == [2, 0, 0, 0, 0, 0, 0, 0, 10, 16]

    roll(state, red=1)  # 1 is not above 2
    assert [a for a in state.legal_actions(1) if a["type"] == "enter"] == []
    refused(state, 1, enter("red", 1), "row-not-increasing")
    state.apply_action(1, PASS)
    state.apply_action(0, PASS)

    roll(state, red=6, blue=4)  # 10 again: equal is not an increase
    assert [a for a in state.legal_actions(1) if a.get("row") == "red"] == []
    refused(state, 1, enter("red", 7), "row-not-increasing")
    refused(state, 1, enter("red", 9), "box-filled")
    state.apply_action(1, enter("blue", 0))


def test_no_number_twice_in_a_global_column() -> None:
    state = new(2)
    # global column 2 holds red box 0, yellow box 1 and blue box 2
    put(state, 1, rows(red=[5, E, E, E, E, E, E, E, E, E]))
    roll(state, yellow=2, blue=3)
    legal = state.legal_actions(1)
    assert enter("yellow", 1) not in legal and enter("blue", 2) not in legal
    assert enter("yellow", 0) in legal and enter("blue", 1) in legal
    refused(state, 1, enter("yellow", 1), "column-repeat")
    refused(state, 1, enter("blue", 2), "column-repeat")
    # the same number in different columns of different rows is fine
    state.apply_action(1, enter("yellow", 2))
    state.apply_action(0, enter("blue", 2))


def test_choose_offers_every_non_empty_subset_in_canonical_order() -> None:
    state = new(2)
    legal = state.legal_actions(0)
    assert len(legal) == 7
    assert {"type": "roll", "dice": ["red", "yellow", "blue"]} in legal
    assert all(a["dice"] == sorted(a["dice"], key=["red", "yellow", "blue"].index) for a in legal)
    assert state.legal_actions(1) == []
    events = state.apply_action(0, {"type": "roll", "dice": ["blue", "red"]})
    assert events == [Applied(0, {"type": "roll", "dice": ["red", "blue"]})]
    assert set(state.sample_chance()["dice"]) == {"red", "blue"}


def test_choose_time_out_rolls_all_three_dice() -> None:
    state = new(2)
    events = state.apply_timeout(0)
    assert events == [TimedOut(0), Applied(0, {"type": "roll", "dice": ["red", "yellow", "blue"]})]
    assert state.chance_pending()
    outcome = state.sample_chance()
    assert list(outcome["dice"]) == ["red", "yellow", "blue"]
    assert all(1 <= v <= 6 for v in outcome["dice"].values())


def test_chance_is_pure_counted_and_validated() -> None:
    state = new(2)
    with pytest.raises(IllegalAction) as err:
        state.apply_chance({"dice": {"red": 1}})
    assert err.value.rule == "no-chance-pending"
    state.apply_action(0, {"type": "roll", "dice": ["red", "yellow"]})
    first = state.sample_chance()
    assert state.sample_chance() == first and state.chance_count == 0
    before = state.to_dict()
    outcomes: list[Any] = [
        {"dice": {"red": 1}},
        {"dice": {"red": 1, "yellow": 2, "blue": 3}},
        {"dice": {"red": 7, "yellow": 2}},
        {"dice": {"red": 0, "yellow": 2}},
        {"dice": {"red": True, "yellow": 2}},
        {"dice": {"red": "1", "yellow": 2}},
        {"dice": {"red": 1, "yellow": 2}, "extra": 1},
        {"dice": [1, 2]},
        {},
        [],
    ]
    for outcome in outcomes:
        with pytest.raises(IllegalAction) as err:
            state.apply_chance(outcome)
        assert err.value.rule == "impossible-outcome"
        assert state.to_dict() == before
    events = state.apply_chance({"dice": {"yellow": 6, "red": 2}})
    assert events == [Public({"type": "rolled", "dice": {"red": 2, "yellow": 6}})]
    assert state.chance_count == 1 and state.total == 8


# --- answers, penalties and turns -------------------------------------------------------


def test_only_the_active_seat_is_penalised_for_passing() -> None:
    state = new(3)
    roll(state, red=2)
    state.apply_action(1, PASS)
    state.apply_action(2, PASS)
    events = state.apply_action(0, PASS)
    assert state.failed == [1, 0, 0]
    assert Public({"type": "failed_throw", "seat": 0}) in events
    assert events[-1] == Public({"type": "turn", "seat": 1})
    # next turn: seat 1 is active and enters; seat 0 passes without penalty
    roll(state, blue=3)
    state.apply_action(0, PASS)
    state.apply_action(2, PASS)
    state.apply_action(1, enter("blue", 0))
    assert state.failed == [1, 0, 0]
    assert state.active == 2


def test_a_seat_that_times_out_has_passed() -> None:
    state = new(3)
    roll(state, yellow=4)
    assert state.apply_timeout(1) == [TimedOut(1), Answered(1, held=True)]
    assert state.hidden(1) == [PASS]
    state.apply_timeout(0)
    events = state.apply_timeout(2)
    assert state.failed == [1, 0, 0]
    assert state.sheets == [empty_sheet()] * 3
    assert [e for e in events if isinstance(e, Applied)] == [Applied(s, PASS) for s in (0, 1, 2)]
    with pytest.raises(IllegalAction):
        state.apply_timeout(0)  # seat 1 is active now


def test_turns_go_round_from_seat_zero() -> None:
    state = new(3)
    order = []
    for _ in range(4):
        order.append(state.active)
        roll(state, red=1)
        for seat in state.actors():
            state.apply_action(seat, PASS)
    assert order == [0, 1, 2, 0]


def test_answers_to_one_roll_are_held_then_applied_together() -> None:
    state = new(3)
    roll(state, red=3, yellow=3)
    window = state.window()
    assert state.actors() == (0, 1, 2)
    seen = state.view(1)
    events = state.apply_action(0, enter("red", 0))
    assert events == [Answered(0, held=True)]
    assert state.window() == window
    assert state.actors() == (1, 2)
    assert state.sheets[0] == empty_sheet()  # not applied yet
    assert state.hidden(0) == [enter("red", 0)]
    for viewer in (1, 2, None):
        view = state.view(viewer)
        assert view["sheets"][0]["rows"] == rows()
        assert view["answer"] is None
        assert "enter" not in json.dumps(view)
    assert state.view(0)["answer"] == enter("red", 0)
    assert state.view(1)["answered"] == [0] and seen["answered"] == []
    # the other seats' options do not depend on what seat 0 holds
    assert state.legal_actions(1) == state.legal_actions(2)
    refused(state, 0, enter("yellow", 0), "not-your-turn")

    state.apply_action(2, enter("yellow", 9))
    events = state.apply_action(1, enter("red", 0))
    assert events[:4] == [
        Answered(1),  # the last answer resolves the window: nothing is held back
        Applied(0, enter("red", 0)),
        Applied(1, enter("red", 0)),
        Applied(2, enter("yellow", 9)),
    ]
    assert state.sheets[0][0][0] == state.sheets[1][0][0] == state.sheets[2][1][9] == 6
    assert state.hidden(0) == [] and state.window() != window
    assert state.failed == [0, 0, 0]


def test_four_failed_throws_end_the_game() -> None:
    state = new(2)
    put(state, 0, rows(), failed=3)
    roll(state, red=1)
    state.apply_action(1, enter("red", 0))
    events = state.apply_action(0, PASS)
    assert state.is_over() and state.failed == [4, 0]
    assert events[-1] == Public({"type": "game_over", "scores": [-20, 1]})
    assert state.scores() == [-20, 1] and state.winners() == [1]
    assert state.actors() == () and state.legal_actions(1) == []
    refused(state, 1, PASS, "game-over")
    assert state.render(1).splitlines()[0] == "Player name:" + " " * 22 + "Points: 1"


def test_two_full_rows_end_the_game() -> None:
    state = new(2)
    full_red = [1, 2, 3, None, 5, 6, 7, 8, 9, 10]
    put(state, 1, rows(red=full_red, blue=[1, 2, 3, 4, None, 5, 6, 7, 8, None]))
    roll(state, blue=6, yellow=6)
    state.apply_action(0, enter("yellow", 0))
    assert not state.is_over()
    state.apply_action(1, enter("blue", 9))
    assert state.is_over()
    assert state.scores() == [1, 10 + 12]


def test_one_full_row_does_not_end_the_game() -> None:
    state = new(2)
    put(state, 1, rows(red=[1, 2, 3, None, 5, 6, 7, 8, 9, None]))
    roll(state, red=6, blue=4)
    state.apply_action(1, enter("red", 9))
    state.apply_action(0, enter("blue", 0))
    assert not state.is_over() and state.active == 1


def test_two_seats_can_end_the_game_on_the_same_roll() -> None:
    state = new(3)
    near = rows(red=[1, 2, 3, None, 5, 6, 7, 8, 9, 10], yellow=[1, 2, 3, 4, 5, E, 7, 8, 9, E])
    put(state, 0, near)
    put(state, 2, near)
    roll(state, yellow=6, blue=6)
    state.apply_action(0, enter("yellow", 9))
    state.apply_action(1, enter("blue", 0))
    events = state.apply_action(2, enter("yellow", 9))
    assert state.is_over()
    # every answer to the roll was applied, the later seats' included
    assert state.sheets[1][2][0] == 12 and state.sheets[2][1][9] == 12
    assert state.scores() == [10 + 12, 1, 10 + 12]
    assert state.winners() == [0, 2]
    assert events[-1] == Public({"type": "game_over", "scores": [22, 1, 22]})


def test_game_over_check_waits_for_every_answer() -> None:
    state = new(2)
    put(state, 1, rows(), failed=3)
    roll(state, red=2)
    state.apply_action(0, enter("red", 0))
    assert not state.is_over()
    state.apply_action(1, PASS)  # not active: no penalty, no end
    assert not state.is_over() and state.failed == [0, 3]


# --- the reroll option ---------------------------------------------------------------------


def test_reroll_off_by_default() -> None:
    state = new(2)
    roll(state, red=2)
    assert {"type": "reroll"} not in state.legal_actions(0)
    refused(state, 0, {"type": "reroll"}, "reroll-off")
    assert state.actors() == (0, 1)


def test_official_preset_lets_the_active_seat_reroll_once() -> None:
    state = new(3, preset="official")
    roll(state, red=1, blue=1)
    assert state.phase == "confirm" and state.actors() == (0,)
    assert state.legal_actions(1) == []
    legal = state.legal_actions(0)
    assert {"type": "reroll"} in legal and PASS in legal and enter("red", 0) in legal
    refused(state, 1, PASS, "not-your-turn")
    window = state.window()
    events = state.apply_action(0, {"type": "reroll"})
    assert events == [Applied(0, {"type": "reroll"})]
    assert state.chance_pending() and state.actors() == ()
    assert set(state.sample_chance()["dice"]) == {"red", "blue"}
    state.apply_chance({"dice": {"red": 6, "blue": 5}})
    assert state.window() != window
    assert state.phase == "answer" and state.actors() == (0, 1, 2)
    assert {"type": "reroll"} not in state.legal_actions(0)
    refused(state, 0, {"type": "reroll"}, "reroll-used")
    for seat in (0, 1, 2):
        state.apply_action(seat, enter("red", 0))
    assert [s[0][0] for s in state.sheets] == [11, 11, 11]
    # the next turn may reroll again
    roll(state, yellow=2)
    assert state.phase == "confirm" and state.actors() == (1,)


def test_answering_in_confirm_keeps_the_roll() -> None:
    state = new(3, preset="official")
    roll(state, yellow=3)
    window = state.window()
    # a new window opens (no more rolling again): the answer is not held back alone
    assert state.apply_action(0, enter("yellow", 4)) == [Answered(0)]
    assert state.phase == "answer" and state.actors() == (1, 2)
    assert state.window() != window
    assert state.hidden(0) == [enter("yellow", 4)]
    assert state.view(1)["sheets"][0]["rows"] == rows()
    state.apply_action(1, PASS)
    state.apply_action(2, enter("yellow", 0))
    assert state.sheets[0][1][4] == 3 and state.sheets[2][1][0] == 3
    assert state.failed == [0, 0, 0]


def test_confirm_time_out_passes_and_keeps_the_roll() -> None:
    state = new(2, preset="official")
    roll(state, blue=5)
    events = state.apply_timeout(0)
    assert events == [TimedOut(0), Answered(0)]
    assert not state.chance_pending() and state.actors() == (1,)
    state.apply_action(1, enter("blue", 3))
    assert state.failed == [1, 0] and state.sheets[1][2][3] == 5


def test_single_seat_confirm_answer_resolves_at_once() -> None:
    state = new(1, preset="official")
    roll(state, red=4)
    events = state.apply_action(0, enter("red", 2))
    assert state.sheets[0][0][2] == 4
    assert events[-1] == Public({"type": "turn", "seat": 0})
    assert state.phase == "choose"


# --- illegal actions -----------------------------------------------------------------------


def test_illegal_actions_raise_their_rule_and_change_nothing() -> None:
    state = new(3)
    refused(state, 1, {"type": "roll", "dice": ["red"]}, "not-your-turn")
    refused(state, 3, {"type": "roll", "dice": ["red"]}, "no-such-seat")
    refused(state, True, {"type": "roll", "dice": ["red"]}, "no-such-seat")
    refused(state, 0, enter("red", 0), "wrong-phase")
    refused(state, 0, PASS, "wrong-phase")
    refused(state, 0, {"type": "roll", "dice": []}, "no-dice")
    refused(state, 0, {"type": "roll", "dice": ["green"]}, "no-such-colour")
    refused(state, 0, {"type": "roll", "dice": ["red", "red"]}, "duplicate-die")
    refused(state, 0, {"type": "roll", "dice": [1]}, "malformed-action")
    refused(state, 0, {"type": "roll", "dice": "red"}, "malformed-action")
    refused(state, 0, {"type": "roll"}, "malformed-action")
    refused(state, 0, {"type": "roll", "dice": ["red"], "extra": 1}, "malformed-action")
    refused(state, 0, {"type": "shout"}, "unknown-action")
    refused(state, 0, {"dice": ["red"]}, "malformed-action")
    refused(state, 0, "roll", "malformed-action")

    state.apply_action(0, {"type": "roll", "dice": ["red", "yellow"]})
    refused(state, 1, PASS, "chance-pending")
    state.apply_chance({"dice": {"red": 2, "yellow": 3}})

    refused(state, 1, {"type": "roll", "dice": ["red"]}, "wrong-phase")
    refused(state, 1, enter("blue", 0), "row-not-rolled")
    refused(state, 1, enter("green", 0), "no-such-row")
    refused(state, 1, enter("red", 10), "no-such-box")
    refused(state, 1, enter("red", -1), "no-such-box")
    refused(state, 1, {"type": "enter", "row": "red", "box": True}, "malformed-action")
    refused(state, 1, {"type": "enter", "row": "red", "box": 1.0}, "malformed-action")
    refused(state, 1, {"type": "enter", "row": "red", "box": "1"}, "malformed-action")
    refused(state, 1, {"type": "enter", "row": 0, "box": 1}, "malformed-action")
    refused(state, 1, {"type": "enter", "row": "red"}, "malformed-action")
    refused(state, 1, {"type": "enter", "row": "red", "box": 1, "n": 5}, "malformed-action")
    refused(state, 1, {"type": "pass", "extra": 1}, "malformed-action")

    state.apply_action(1, PASS)
    refused(state, 1, enter("red", 0), "not-your-turn")
    assert state.legal_actions(1) == []


def test_every_legal_action_applies() -> None:
    state = new(2, preset="official")
    put(state, 0, JANE_ROWS)
    roll(state, red=6, yellow=6, blue=2)
    for action in state.legal_actions(0):
        state.clone().apply_action(0, action)
    assert enter("yellow", 8) in state.legal_actions(0)
    assert enter("yellow", 4) not in state.legal_actions(0)  # 14 > 12 to its right


# --- serialisation ------------------------------------------------------------------------


def round_trip(state: QwintoState) -> None:
    data = json.loads(json.dumps(state.to_dict()))
    again = GAME.state_from_dict(data)
    assert again == state and again.to_dict() == state.to_dict()
    assert state.clone() == state


def test_to_dict_round_trips_through_every_phase() -> None:
    state = new(3, preset="official")
    put(state, 2, JANE_ROWS, failed=2)
    round_trip(state)
    state.apply_action(0, {"type": "roll", "dice": ["red", "blue"]})
    round_trip(state)
    state.apply_chance({"dice": {"red": 1, "blue": 2}})
    round_trip(state)
    state.apply_action(0, {"type": "reroll"})
    round_trip(state)
    state.apply_chance({"dice": {"red": 3, "blue": 5}})
    round_trip(state)
    state.apply_action(1, enter("blue", 1))
    state.apply_action(2, PASS)
    round_trip(state)
    assert GAME.state_from_dict(state.to_dict()).hidden(1) == [enter("blue", 1)]
    state.apply_action(0, enter("red", 0))
    round_trip(state)
    put(state, 1, rows(), failed=3)
    roll(state, red=1)
    state.apply_action(1, PASS)  # the active seat answers first in "confirm"
    round_trip(state)
    state.apply_action(0, PASS)
    state.apply_action(2, PASS)
    assert state.is_over()
    round_trip(state)


def test_clone_is_independent() -> None:
    state = new(2)
    copy = state.clone()
    roll(copy, red=2)
    copy.apply_action(0, enter("red", 0))
    copy.apply_action(1, enter("red", 1))
    assert state.sheets == [empty_sheet(), empty_sheet()] and state.phase == "choose"


def test_from_dict_rejects_impossible_states() -> None:
    state = new(2)
    roll(state, red=2, blue=2)
    state.apply_action(1, enter("red", 0))
    good = state.to_dict()
    GAME.state_from_dict(good)

    def broken(**changes: Any) -> JSON:
        return {**json.loads(json.dumps(good)), **changes}

    cases = [
        broken(phase="nap"),
        broken(active=2),
        broken(active=True),
        broken(dice=["blue", "red"]),
        broken(dice=["green"]),
        broken(roll={"red": 7, "blue": 2}),
        broken(roll=None),
        broken(held=[None, {"type": "enter", "row": "yellow", "box": 0}]),
        broken(held=[None, {"type": "enter", "row": "red", "box": 3}]),
        broken(held=[None]),
        broken(held=[PASS, PASS]),
        broken(rerolled=True),
        broken(options={"reroll": 1}),
        broken(sheets=[{"rows": rows(red=[5, 4] + [None] * 8), "failed": 0}] * 2),
        broken(sheets=[{"rows": rows(), "failed": 4}] * 2),
        broken(game="qwixx"),
    ]
    for data in cases:
        with pytest.raises(InvalidState):
            GAME.state_from_dict(data)


# --- views ----------------------------------------------------------------------------------


def test_views_show_public_sheets_and_no_seed() -> None:
    state = new(2)
    put(state, 1, JANE_ROWS, failed=1)
    roll(state, red=1, yellow=1)
    view = state.view(None)
    assert view["you"] is None and view["answer"] is None
    assert view["sheets"][1] == {"rows": JANE_ROWS, "failed": 1}
    assert view["roll"] == {"red": 1, "yellow": 1} and view["sum"] == 2
    assert view["actors"] == [0, 1] and view["phase"] == "answer"
    assert state.seed.hex() not in json.dumps(view)
    assert view["scores"] == state.scores()
