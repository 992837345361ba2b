"""Qwixx as docs/rules.md reads it, with hand-worked positions (no test relies on a seed's dice)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from dicehall.rules import (
    Answered,
    Applied,
    IllegalAction,
    InvalidOptions,
    InvalidState,
    Public,
    RuleEvent,
    TimedOut,
    as_wire,
    get_game,
)
from dicehall.rules.base import JSON
from dicehall.rules.fair import Draw
from dicehall.rules.qwixx import GAME, QwixxState, score_sheet
from dicehall.rules.qwixx.sheet import TRIANGLE
from tests.support.sheets import QWIXX_26

SEED = bytes(range(32))

EMPTY_SHEET = """\
Player name:
            ------------------------------------
        Red | 2| 3| 4| 5| 6| 7| 8| 9|10|11|12| U
            ------------------------------------
     Yellow | 2| 3| 4| 5| 6| 7| 8| 9|10|11|12| U
            ------------------------------------
      Green |12|11|10| 9| 8| 7| 6| 5| 4| 3| 2| U
            ------------------------------------
       Blue |12|11|10| 9| 8| 7| 6| 5| 4| 3| 2| U
            ------------------------------------
       Failed throws:"""

WORKED_MARKS = {
    "red": [9, 10, 12],
    "yellow": [3, 6, 7],
    "green": [9, 7, 5, 4, 2],
    "blue": [11, 5],
}

PASS: JSON = {"type": "pass"}


def mark(row: str, number: int) -> JSON:
    return {"type": "mark", "row": row, "number": number}


def empty_rows() -> dict[str, list[int]]:
    return {"red": [], "yellow": [], "green": [], "blue": []}


def position(
    seats: int = 3,
    *,
    marks: Mapping[int, Mapping[str, list[int]]] | None = None,
    locked: Mapping[int, list[str]] | None = None,
    failed: Mapping[int, int] | None = None,
    closed: list[str] | None = None,
    active: int = 0,
    lock_after: int = 4,
    phase: str = "roll",
) -> QwixxState:
    """A position built directly from its sheets (through the state's own dict form)."""
    state = GAME.new_state(seats, {"lock_after": lock_after}, seed=SEED)
    data = state.to_dict()
    for seat, rows in (marks or {}).items():
        data["marks"][seat] = {**empty_rows(), **rows}
    for seat, colours in (locked or {}).items():
        data["locked"][seat] = list(colours)
    for seat, count in (failed or {}).items():
        data["failed"][seat] = count
    data["closed"] = list(closed or [])
    data["active"] = active
    data["phase"] = phase
    loaded = GAME.state_from_dict(data)
    assert isinstance(loaded, QwixxState)
    return loaded


def roll(state: QwixxState, w1: int, w2: int, **colours: int) -> list[RuleEvent]:
    """Applies an explicit roll; colours not given show 1 (only the dice still in play)."""
    closed = state.to_dict()["closed"]
    dice: dict[str, int] = {"white1": w1, "white2": w2}
    for c in ("red", "yellow", "green", "blue"):
        if c not in closed:
            dice[c] = colours.get(c, 1)
    assert set(colours) <= set(dice), "a die that left the game was given"
    return state.apply_chance({"dice": dice})


def answer_all(state: QwixxState, answers: Mapping[int, JSON]) -> list[RuleEvent]:
    """Every seat answers the white window (a pass unless given), in seat order."""
    events: list[RuleEvent] = []
    for seat in range(state.seats):
        events += state.apply_action(seat, answers.get(seat, PASS))
    return events


def sheet(state: QwixxState, seat: int) -> JSON:
    sheets: list[JSON] = state.view(None)["sheets"]
    return sheets[seat]


def types_of(events: list[RuleEvent]) -> list[str]:
    return [e["type"] for e in as_wire(events)]


# --- the game and its options -----------------------------------------------------------------


def test_registered_with_options_and_official_preset() -> None:
    game = get_game("qwixx")
    assert game is GAME
    assert (game.title, game.min_seats, game.max_seats) == ("Qwixx", 1, 6)
    assert game.resolve_options() == {"lock_after": 4}
    assert game.resolve_options(preset="official") == {"lock_after": 5}
    for bad in (0, 11, True, "4", 4.0):
        with pytest.raises(InvalidOptions):
            game.resolve_options({"lock_after": bad})
    with pytest.raises(InvalidOptions):
        game.new_state(7)


def test_starts_with_a_roll_for_seat_0() -> None:
    state = GAME.new_state(3, seed=SEED)
    assert state.chance_pending()
    assert state.actors() == ()
    assert state.legal_actions(0) == []
    with pytest.raises(IllegalAction) as err:
        state.apply_action(0, PASS)
    assert err.value.rule == "chance-pending"
    outcome = state.sample_chance()
    assert set(outcome) == {"dice"}
    assert set(outcome["dice"]) == {"white1", "white2", "red", "yellow", "green", "blue"}
    assert all(1 <= v <= 6 for v in outcome["dice"].values())
    assert state.sample_chance() == outcome, "sampling is pure"
    assert state.chance_count == 0


# --- the canonical sheet ------------------------------------------------------------------------


def test_worked_example_scores_26_and_renders_byte_for_byte() -> None:
    data = {"name": "Jane Doe", "rows": WORKED_MARKS, "locked": ["green"], "failed": 2}
    points, text = score_sheet(data)
    assert points == 26
    assert text == QWIXX_26
    assert GAME.score_sheet is score_sheet


def test_worked_example_built_as_a_finished_game_state() -> None:
    state = position(
        2,
        marks={0: WORKED_MARKS},
        locked={0: ["green"]},
        failed={0: 2},
        closed=["green"],
        phase="over",
    )
    assert state.is_over()
    assert state.scores() == [26, 0]
    assert state.render(0, "Jane Doe") == QWIXX_26
    assert state.render(1) == EMPTY_SHEET.replace(
        "Player name:", "Player name:                Points: 0"
    )


def test_empty_sheet() -> None:
    state = GAME.new_state(2, seed=SEED)
    assert state.render(0) == EMPTY_SHEET
    assert state.render(1, "Jane Doe") == EMPTY_SHEET.replace(
        "Player name:", "Player name: Jane Doe", 1
    )
    points, text = score_sheet({"name": "", "rows": empty_rows(), "locked": [], "failed": 0})
    assert points == 0
    assert text.splitlines()[1:] == EMPTY_SHEET.splitlines()[1:]
    assert text.splitlines()[0] == "Player name:                Points: 0"


def test_points_move_one_space_after_a_long_name() -> None:
    rows = empty_rows()
    rows["red"] = [2]
    long_name = "Bartholomew Q."  # "Player name: " + 14 chars = 27: Points still at 28
    _, text = score_sheet({"name": long_name, "rows": rows, "locked": [], "failed": 0})
    assert text.splitlines()[0] == "Player name: Bartholomew Q. Points: 1"
    longer = "Bartholomew Quincy"
    _, text = score_sheet({"name": longer, "rows": rows, "locked": [], "failed": 0})
    assert text.splitlines()[0] == f"Player name: {longer} Points: 1"
    assert all(line == line.rstrip() for line in text.splitlines())


def test_a_name_cannot_break_the_layout() -> None:
    state = GAME.new_state(1, seed=SEED)
    assert state.render(0, "  Jane\n Doe \t") == state.render(0, "Jane Doe")
    assert state.render(0, " \n ") == EMPTY_SHEET


def test_points_only_once_the_game_is_over() -> None:
    state = position(2, marks={0: {"red": [2, 3]}})
    assert "Points" not in state.render(0, "Ann")
    assert state.scores() == [3, 0]


def test_triangular_scores_and_penalties() -> None:
    assert TRIANGLE[1:] == (1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 66, 78)
    rows = {"red": list(range(2, 13)), "yellow": [], "green": [12], "blue": [12, 11]}
    points, _ = score_sheet({"name": "A", "rows": rows, "locked": ["red"], "failed": 4})
    assert points == 78 + 1 + 3 - 20


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        {"name": "A", "locked": [], "failed": 0},
        {"name": "A", "rows": empty_rows(), "locked": [], "failed": 0, "extra": 1},
        {"name": 3, "rows": empty_rows(), "locked": [], "failed": 0},
        {"name": "A", "rows": [], "locked": [], "failed": 0},
        {"name": "A", "rows": {"red": [], "yellow": [], "green": []}, "locked": [], "failed": 0},
        {"name": "A", "rows": {**empty_rows(), "pink": []}, "locked": [], "failed": 0},
        {"name": "A", "rows": {**empty_rows(), "red": [1]}, "locked": [], "failed": 0},
        {"name": "A", "rows": {**empty_rows(), "red": [13]}, "locked": [], "failed": 0},
        {"name": "A", "rows": {**empty_rows(), "red": [True]}, "locked": [], "failed": 0},
        {"name": "A", "rows": {**empty_rows(), "red": [5, 5]}, "locked": [], "failed": 0},
        {"name": "A", "rows": {**empty_rows(), "red": "2 3"}, "locked": [], "failed": 0},
        {"name": "A", "rows": empty_rows(), "locked": ["red"], "failed": 0},
        {"name": "A", "rows": {**empty_rows(), "red": [12]}, "locked": ["red", "red"], "failed": 0},
        {"name": "A", "rows": empty_rows(), "locked": ["pink"], "failed": 0},
        {"name": "A", "rows": empty_rows(), "locked": "red", "failed": 0},
        {"name": "A", "rows": empty_rows(), "locked": [], "failed": 5},
        {"name": "A", "rows": empty_rows(), "locked": [], "failed": -1},
        {"name": "A", "rows": empty_rows(), "locked": [], "failed": True},
    ],
)
def test_score_sheet_rejects_malformed_sheets(data: Any) -> None:
    with pytest.raises(InvalidState) as err:
        score_sheet(data)
    assert err.value.message.startswith("qwixx sheet: ")


def test_score_sheet_takes_marks_in_any_order_without_legality_checks() -> None:
    rows = {"red": [12, 2], "yellow": [], "green": [2, 12], "blue": []}
    points, text = score_sheet({"name": "A", "rows": rows, "locked": [], "failed": 0})
    assert points == 6
    assert "        Red |XX| 3| 4| 5| 6| 7| 8| 9|10|11|XX| U" in text.splitlines()


# --- the white window ----------------------------------------------------------------------------


def test_every_seat_may_mark_the_white_sum_in_one_open_row_or_pass() -> None:
    state = position(3, marks={1: {"red": [9]}, 2: {"green": [6]}})
    roll(state, 3, 4, red=6, yellow=6, green=6, blue=6)
    assert state.actors() == (0, 1, 2)
    assert state.legal_actions(0) == [mark(c, 7) for c in ("red", "yellow", "green", "blue")] + [
        PASS
    ]
    # seat 1 is past 7 in red; seat 2 is past 7 in green (green reads 12..2)
    assert state.legal_actions(1) == [mark(c, 7) for c in ("yellow", "green", "blue")] + [PASS]
    assert state.legal_actions(2) == [mark(c, 7) for c in ("red", "yellow", "blue")] + [PASS]


def test_passive_seat_may_mark_only_the_white_sum_and_only_once() -> None:
    state = position(3, active=0)
    roll(state, 3, 4, red=6)
    with pytest.raises(IllegalAction) as err:
        state.apply_action(1, mark("red", 9))  # white + red: not for a passive seat
    assert err.value.rule == "not-white-sum"
    state.apply_action(1, mark("red", 7))
    with pytest.raises(IllegalAction) as err:
        state.apply_action(1, mark("yellow", 7))  # a second row in the same window
    assert err.value.rule == "already-answered"
    state.apply_action(0, PASS)
    state.apply_action(2, PASS)
    # the colour window belongs to the active seat alone
    assert state.actors() == (0,)
    assert state.legal_actions(1) == []
    with pytest.raises(IllegalAction) as err:
        state.apply_action(1, mark("red", 9))
    assert err.value.rule == "not-your-turn"
    assert sheet(state, 1)["rows"]["red"] == [7]


def test_answers_are_held_until_all_are_in_then_applied_in_seat_order() -> None:
    state = position(3)
    roll(state, 2, 3, red=1, yellow=1, green=1, blue=1)
    before = state.to_dict()["marks"]
    events = state.apply_action(2, mark("blue", 5))
    assert events == [Answered(2, held=True)]
    assert state.to_dict()["marks"] == before, "a held answer is not applied yet"
    assert state.actors() == (0, 1)
    events = state.apply_action(1, PASS)
    assert events == [Answered(1, held=True)]
    events = state.apply_action(0, mark("red", 5))
    assert events[:4] == [
        Answered(0),
        Applied(0, mark("red", 5)),
        Applied(1, PASS),
        Applied(2, mark("blue", 5)),
    ]
    assert sheet(state, 0)["rows"]["red"] == [5]
    assert sheet(state, 2)["rows"]["blue"] == [5]


def test_held_answers_are_invisible_to_other_seats() -> None:
    base = position(3)
    roll(base, 2, 3)
    a, b = base.clone(), base.clone()
    events_a = a.apply_action(1, mark("red", 5))
    events_b = b.apply_action(1, PASS)
    assert events_a == events_b == [Answered(1, held=True)]
    for viewer in (0, 2, None):
        assert a.view(viewer) == b.view(viewer)
    assert a.view(None)["answered"] == [1]
    assert a.hidden(1) == [mark("red", 5)]
    assert a.hidden(0) == [] and a.hidden(2) == []
    assert a.view(1)["answer"] == mark("red", 5)
    assert a.view(0)["answer"] is None
    assert a.view(0)["sheets"][1]["rows"]["red"] == []
    # once resolved, nothing is held any more
    a.apply_action(0, PASS)
    a.apply_action(2, PASS)
    assert a.hidden(1) == []


# --- the colour window -------------------------------------------------------------------------


def test_active_seat_uses_both_windows_in_order_in_the_same_row() -> None:
    state = position(2, active=0)
    roll(state, 1, 4, red=6, yellow=2, green=5, blue=3)
    state.apply_action(0, mark("red", 5))
    state.apply_action(1, PASS)
    assert state.actors() == (0,)
    # white 1 or 4 + coloured die; red must be right of the 5 just marked
    assert state.legal_actions(0) == [
        mark("red", 7),
        mark("red", 10),
        mark("yellow", 3),
        mark("yellow", 6),
        mark("green", 9),
        mark("green", 6),
        mark("blue", 7),
        mark("blue", 4),
        PASS,
    ]
    events = state.apply_action(0, mark("red", 10))
    assert events[0] == Applied(0, mark("red", 10))
    assert sheet(state, 0)["rows"]["red"] == [5, 10]
    assert sheet(state, 0)["failed"] == 0
    assert types_of(events) == ["applied", "turn"]
    assert events[-1] == Public({"type": "turn", "seat": 1})


def test_colour_mark_must_be_right_of_the_white_window_mark() -> None:
    state = position(1)
    roll(state, 5, 6, red=1)  # white sum 11; colour sums 6 and 7 in red
    state.apply_action(0, mark("red", 11))
    with pytest.raises(IllegalAction) as err:
        state.apply_action(0, mark("red", 7))
    assert err.value.rule == "not-right-of-last-mark"


def test_colour_mark_must_be_a_white_die_plus_that_colour() -> None:
    state = position(1)
    roll(state, 1, 2, red=3, yellow=6, green=6, blue=6)
    state.apply_action(0, PASS)
    with pytest.raises(IllegalAction) as err:
        state.apply_action(0, mark("red", 3))  # the white sum is not a colour sum here
    assert err.value.rule == "not-colour-sum"
    with pytest.raises(IllegalAction) as err:
        state.apply_action(0, mark("red", 8))  # yellow + white is not for the red row
    assert err.value.rule == "not-colour-sum"
    state.apply_action(0, mark("red", 5))  # white 2 + red 3
    assert sheet(state, 0)["rows"]["red"] == [5]


def test_colour_window_is_skipped_when_the_active_seat_has_no_colour_mark() -> None:
    # seat 0 is past every colour sum (all rows at their second-to-last box)
    full = {"red": [11], "yellow": [11], "green": [3], "blue": [3]}
    state = position(2, marks={0: full})
    window = state.window()
    roll(state, 1, 1, red=1, yellow=1, green=1, blue=1)
    assert state.window() == window + 1
    assert state.legal_actions(0) == [PASS]  # 2 is left of 11 / the locked-too-early 2
    state.apply_action(0, PASS)
    events = state.apply_action(1, mark("red", 2))
    assert types_of(events) == ["answered", "applied", "applied", "failed_throw", "turn"]
    assert state.chance_pending()
    assert state.window() == window + 1, "no colour window was opened"
    assert sheet(state, 0)["failed"] == 1


def test_window_ids_change_when_a_window_opens() -> None:
    state = position(2)
    ids = [state.window()]
    roll(state, 2, 2)
    ids.append(state.window())
    state.apply_action(0, PASS)
    assert state.window() == ids[-1], "an answer does not open a window"
    state.apply_action(1, PASS)
    ids.append(state.window())  # colour window
    state.apply_action(0, PASS)
    roll(state, 2, 2)
    ids.append(state.window())
    assert len(set(ids)) == len(ids)


# --- failed throws --------------------------------------------------------------------------


def test_failed_throw_only_for_the_active_seat_marking_nothing() -> None:
    state = position(3, active=1)
    roll(state, 2, 2)
    events = answer_all(state, {})
    assert state.actors() == (1,)
    events += state.apply_action(1, PASS)
    assert Public({"type": "failed_throw", "seat": 1}) in events
    assert [sheet(state, s)["failed"] for s in range(3)] == [0, 1, 0]
    assert events[-1] == Public({"type": "turn", "seat": 2})


def test_white_window_mark_saves_the_active_seat_from_a_failed_throw() -> None:
    state = position(2)
    roll(state, 2, 2)
    answer_all(state, {0: mark("yellow", 4)})
    events = state.apply_action(0, PASS)
    assert "failed_throw" not in types_of(events)
    assert sheet(state, 0)["failed"] == 0


def test_colour_window_mark_alone_saves_the_active_seat() -> None:
    state = position(2)
    roll(state, 2, 2, blue=3)
    answer_all(state, {1: mark("red", 4)})
    events = state.apply_action(0, mark("blue", 5))
    assert "failed_throw" not in types_of(events)
    assert [sheet(state, s)["failed"] for s in range(2)] == [0, 0]


def test_game_ends_at_the_fourth_failed_throw() -> None:
    state = position(2, failed={0: 3}, marks={1: {"red": [2, 3]}})
    roll(state, 2, 2)
    answer_all(state, {})
    events = state.apply_action(0, PASS)
    assert types_of(events) == ["applied", "failed_throw", "game_over"]
    assert state.is_over()
    assert events[-1] == Public({"type": "game_over", "scores": [-20, 3]})
    assert state.actors() == () and not state.chance_pending()
    assert state.render(0).startswith("Player name:                Points: -20\n")
    with pytest.raises(IllegalAction) as err:
        state.apply_action(0, PASS)
    assert err.value.rule == "game-over"
    assert state.winners() == [1]


def test_timeouts_pass() -> None:
    state = position(2)
    roll(state, 3, 3)
    events = state.apply_timeout(1)
    assert events == [TimedOut(1), Answered(1, held=True)]
    assert state.hidden(1) == [PASS]
    events = state.apply_timeout(0)
    assert events[:4] == [TimedOut(0), Answered(0), Applied(0, PASS), Applied(1, PASS)]
    events = state.apply_timeout(0)  # colour window
    assert events == [
        TimedOut(0),
        Applied(0, PASS),
        Public({"type": "failed_throw", "seat": 0}),
        Public({"type": "turn", "seat": 1}),
    ]
    with pytest.raises(IllegalAction):
        state.apply_timeout(0)


def test_turns_rotate_through_every_seat() -> None:
    state = position(3)
    actives = []
    for _ in range(4):
        roll(state, 6, 6)
        active = state.view(None)["active"]
        actives.append(active)
        answer_all(state, {})
        state.apply_action(active, PASS)
    assert actives == [0, 1, 2, 0]


# --- locking -----------------------------------------------------------------------------


@pytest.mark.parametrize("lock_after", [4, 5])
def test_last_box_needs_lock_after_marks(lock_after: int) -> None:
    too_few = list(range(2, 2 + lock_after - 1))
    enough = list(range(2, 2 + lock_after))
    state = position(2, lock_after=lock_after, marks={0: {"red": too_few}, 1: {"red": enough}})
    roll(state, 6, 6)
    assert mark("red", 12) not in state.legal_actions(0)
    assert mark("red", 12) in state.legal_actions(1)
    with pytest.raises(IllegalAction) as err:
        state.apply_action(0, mark("red", 12))
    assert err.value.rule == "lock-too-early"
    events = state.apply_action(1, mark("red", 12))
    events += state.apply_action(0, PASS)
    assert Public({"type": "locked", "seat": 1, "row": "red"}) in events
    assert sheet(state, 1)["locked"] == ["red"]


def test_official_preset_needs_five_marks() -> None:
    state = GAME.new_state(1, preset="official", seed=SEED)
    assert state.options == {"lock_after": 5}
    data = state.to_dict()
    data["marks"][0] = {**empty_rows(), "green": [12, 11, 10, 9]}
    loaded = GAME.state_from_dict(data)
    assert isinstance(loaded, QwixxState)
    roll(loaded, 1, 1)
    assert mark("green", 2) not in loaded.legal_actions(0)
    with pytest.raises(IllegalAction) as err:
        loaded.apply_action(0, mark("green", 2))
    assert err.value.rule == "lock-too-early"


def test_a_white_mark_counts_towards_lock_after_for_the_colour_window() -> None:
    state = position(1, marks={0: {"red": [2, 3, 4]}})
    roll(state, 6, 5, red=6)  # white sum 11 brings red to 4 marks; then 6 + 6 = 12
    assert mark("red", 12) not in state.legal_actions(0)
    state.apply_action(0, mark("red", 11))
    assert mark("red", 12) in state.legal_actions(0)
    events = state.apply_action(0, mark("red", 12))
    assert types_of(events) == ["applied", "locked", "row_closed", "turn"]
    assert sheet(state, 0)["rows"]["red"] == [2, 3, 4, 11, 12]


def test_the_lock_counts_as_one_more_mark() -> None:
    state = position(2, marks={0: {"blue": [12, 11, 10, 9]}})
    roll(state, 1, 1)
    assert state.scores()[0] == 10
    answer_all(state, {0: mark("blue", 2)})
    assert sheet(state, 0)["rows"]["blue"] == [12, 11, 10, 9, 2]
    assert sheet(state, 0)["locked"] == ["blue"]
    assert state.scores()[0] == 21  # 5 marks + the lock = 6 -> 21
    assert state.render(0).splitlines()[8] == "       Blue |XX|XX|XX|XX| 8| 7| 6| 5| 4| 3|XX| L"


def test_two_seats_lock_the_same_row_in_one_window_and_others_still_mark_it() -> None:
    four = [2, 3, 4, 5]
    state = position(3, active=2, marks={0: {"red": four}, 1: {"red": four}, 2: {"red": [8]}})
    roll(state, 6, 6, red=2)
    state.apply_action(0, mark("red", 12))
    state.apply_action(1, mark("red", 12))
    events = state.apply_action(2, mark("green", 12))
    assert events[1:] == [
        Applied(0, mark("red", 12)),
        Public({"type": "locked", "seat": 0, "row": "red"}),
        Applied(1, mark("red", 12)),
        Public({"type": "locked", "seat": 1, "row": "red"}),
        Applied(2, mark("green", 12)),
        Public({"type": "row_closed", "row": "red"}),
    ]
    assert [sheet(state, s)["locked"] for s in range(3)] == [["red"], ["red"], []]
    assert state.scores()[:2] == [21, 21]
    assert state.view(None)["closed"] == ["red"]
    assert not state.is_over(), "one row is closed, by two seats"
    # the active seat's colour window: red is closed now, its die left the game
    assert state.actors() == (2,)
    assert all(a.get("row") != "red" for a in state.legal_actions(2))
    assert "red" not in state.view(None)["dice"]
    with pytest.raises(IllegalAction) as err:
        state.apply_action(2, mark("red", 8))  # white 6 + red 2
    assert err.value.rule == "row-closed"


def test_a_held_lock_does_not_close_the_row_for_later_answers_of_the_same_window() -> None:
    four = [2, 3, 4, 5]
    state = position(3, marks={0: {"yellow": four}, 1: {"yellow": four}})
    roll(state, 6, 6)
    state.apply_action(0, mark("yellow", 12))
    assert mark("yellow", 12) in state.legal_actions(1)
    assert mark("yellow", 12) not in state.legal_actions(2), "seat 2 has no yellow marks"
    with pytest.raises(IllegalAction) as err:
        state.apply_action(2, mark("yellow", 12))
    assert err.value.rule == "lock-too-early"
    state.apply_action(1, mark("yellow", 12))
    state.apply_action(2, mark("blue", 12))
    assert [sheet(state, s)["locked"] for s in range(3)] == [["yellow"], ["yellow"], []]
    assert sheet(state, 2)["rows"]["blue"] == [12]


def test_a_closed_row_is_closed_to_all_and_its_die_leaves_the_roll() -> None:
    state = position(2, marks={1: {"red": [2, 3, 4, 5], "green": [12]}})
    roll(state, 6, 6, red=1)
    answer_all(state, {1: mark("red", 12)})
    state.apply_action(0, PASS)  # colour window: seat 0 passes
    assert state.view(None)["closed"] == ["red"]
    sample = state.sample_chance()
    assert set(sample["dice"]) == {"white1", "white2", "yellow", "green", "blue"}
    with pytest.raises(IllegalAction) as err:
        state.apply_chance(
            {"dice": {"white1": 1, "white2": 1, "red": 1, "yellow": 1, "green": 1, "blue": 1}}
        )
    assert err.value.rule == "impossible-outcome"
    events = roll(state, 1, 2, yellow=3, green=4, blue=5)
    assert events == [
        Public(
            {
                "type": "rolled",
                "dice": {"white1": 1, "white2": 2, "yellow": 3, "green": 4, "blue": 5},
            }
        )
    ]
    assert mark("red", 3) not in state.legal_actions(0)
    with pytest.raises(IllegalAction) as err:
        state.apply_action(0, mark("red", 3))
    assert err.value.rule == "row-closed"
    assert state.legal_actions(1) == [mark("yellow", 3), mark("green", 3), mark("blue", 3), PASS]


def test_game_ends_at_the_second_lock_in_the_white_window_without_colour_window() -> None:
    state = position(
        2,
        active=1,
        marks={0: {"red": [2, 3, 4, 5, 12], "blue": [12, 11, 10, 9]}},
        locked={0: ["red"]},
        closed=["red"],
    )
    roll(state, 1, 1, yellow=1, green=1, blue=1)
    events = answer_all(state, {0: mark("blue", 2)})
    assert types_of(events) == [
        "answered",
        "answered",
        "applied",
        "locked",
        "applied",
        "row_closed",
        "game_over",
    ]
    assert "failed_throw" not in types_of(events), "the active seat lost its colour window"
    assert state.is_over()
    assert state.view(None)["closed"] == ["red", "blue"]
    assert state.scores() == [21 + 21, 0]


def test_game_ends_at_the_second_lock_in_the_colour_window() -> None:
    state = position(
        2,
        marks={0: {"green": [12, 11, 10, 9, 2], "yellow": [2, 3, 4, 5]}},
        locked={0: ["green"]},
        closed=["green"],
    )
    roll(state, 1, 6, red=1, yellow=6, blue=1)
    answer_all(state, {})
    events = state.apply_action(0, mark("yellow", 12))
    assert types_of(events) == ["applied", "locked", "row_closed", "game_over"]
    assert state.is_over()


def test_two_different_rows_locked_in_one_window_end_the_game() -> None:
    state = position(2, marks={0: {"red": [2, 3, 4, 5]}, 1: {"yellow": [2, 3, 4, 5]}})
    roll(state, 6, 6)
    events = answer_all(state, {0: mark("red", 12), 1: mark("yellow", 12)})
    assert [e for e in as_wire(events) if e["type"] == "row_closed"] == [
        {"type": "row_closed", "row": "red"},
        {"type": "row_closed", "row": "yellow"},
    ]
    assert state.is_over()


# --- chance outcomes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "outcome",
    [
        None,
        {},
        {"dice": None},
        {"dice": {"white1": 1, "white2": 1, "red": 1, "yellow": 1, "green": 1}},
        {"dice": {"white1": 1, "white2": 1, "red": 1, "yellow": 1, "green": 1, "blue": 7}},
        {"dice": {"white1": 0, "white2": 1, "red": 1, "yellow": 1, "green": 1, "blue": 1}},
        {"dice": {"white1": True, "white2": 1, "red": 1, "yellow": 1, "green": 1, "blue": 1}},
        {"dice": {"white1": "1", "white2": 1, "red": 1, "yellow": 1, "green": 1, "blue": 1}},
        {
            "dice": {"white1": 1, "white2": 1, "red": 1, "yellow": 1, "green": 1, "blue": 1},
            "extra": 1,
        },
        {
            "dice": {
                "white1": 1,
                "white2": 1,
                "white3": 1,
                "red": 1,
                "yellow": 1,
                "green": 1,
                "blue": 1,
            }
        },
    ],
)
def test_impossible_rolls_are_refused(outcome: Any) -> None:
    state = position(2)
    before = state.to_dict()
    with pytest.raises(IllegalAction) as err:
        state.apply_chance(outcome)
    assert err.value.rule == "impossible-outcome"
    assert state.to_dict() == before


def test_the_seed_rolls_the_dice_in_play_in_the_documented_order() -> None:
    state = position(2, closed=["yellow"], marks={0: {"yellow": [2, 3, 4, 5, 12]}})
    expected = Draw(state.seed, state.chance_count).dice(5)
    names = ["white1", "white2", "red", "green", "blue"]
    assert state.sample_chance() == {"dice": dict(zip(names, expected, strict=True))}


def test_no_roll_outside_the_roll_phase() -> None:
    state = position(1)
    roll(state, 1, 1)
    assert state.chance_count == 1
    with pytest.raises(IllegalAction) as err:
        roll(state, 1, 1)
    assert err.value.rule == "no-chance-pending"
    with pytest.raises(IllegalAction):
        state.sample_chance()


# --- illegal actions ---------------------------------------------------------------------------


def _white_window() -> QwixxState:
    marks = {0: {"red": [6]}, 1: {"green": [12]}, 2: {"red": [5]}}
    state = position(3, marks=marks, closed=["blue"])
    roll(state, 2, 3, red=4, yellow=4, green=4)  # white sum 5
    return state


@pytest.mark.parametrize(
    ("seat", "action", "rule"),
    [
        (0, mark("red", 5), "not-right-of-last-mark"),  # left of the 6
        (2, mark("red", 5), "not-right-of-last-mark"),  # the box itself
        (0, mark("yellow", 7), "not-white-sum"),
        (0, mark("blue", 5), "row-closed"),
        (0, mark("pink", 5), "no-such-row"),
        (0, mark("red", 13), "no-such-box"),
        (0, mark("red", 1), "no-such-box"),
        (0, {"type": "mark", "row": "red", "number": True}, "malformed-action"),
        (0, {"type": "mark", "row": "red", "number": 5.0}, "malformed-action"),
        (0, {"type": "mark", "row": "red", "number": "5"}, "malformed-action"),
        (0, {"type": "mark", "row": 0, "number": 5}, "malformed-action"),
        (0, {"type": "mark", "row": "red"}, "malformed-action"),
        (0, {"type": "mark", "number": 5}, "malformed-action"),
        (0, {"type": "mark", "row": "red", "number": 5, "die": "white1"}, "malformed-action"),
        (0, {"type": "pass", "row": "red"}, "malformed-action"),
        (0, {"type": "enter", "row": "red", "box": 0}, "unknown-action"),
        (0, {"type": True}, "malformed-action"),
        (0, {}, "malformed-action"),
        (0, "pass", "malformed-action"),
        (0, None, "malformed-action"),
        (3, PASS, "no-such-seat"),
        (-1, PASS, "no-such-seat"),
        (True, PASS, "no-such-seat"),
    ],
)
def test_illegal_actions_name_their_rule_and_change_nothing(
    seat: Any, action: Any, rule: str
) -> None:
    state = _white_window()
    before = state.to_dict()
    with pytest.raises(IllegalAction) as err:
        state.apply_action(seat, action)
    assert err.value.rule == rule
    assert state.to_dict() == before


def test_illegal_actions_in_the_colour_window_change_nothing() -> None:
    state = _white_window()
    answer_all(state, {0: mark("yellow", 5)})
    assert state.actors() == (0,)
    before = state.to_dict()
    for seat, action, rule in [
        (1, PASS, "not-your-turn"),
        (0, mark("red", 6), "not-right-of-last-mark"),  # 2 + 4, the box already marked
        (0, mark("yellow", 8), "not-colour-sum"),  # white 2, 3 + yellow 4: 6 or 7
        (0, mark("red", 5), "not-colour-sum"),
        (0, mark("blue", 6), "row-closed"),
    ]:
        with pytest.raises(IllegalAction) as err:
            state.apply_action(seat, action)
        assert err.value.rule == rule, action
        assert state.to_dict() == before
    state.apply_action(0, mark("yellow", 7))
    assert sheet(state, 0)["rows"]["yellow"] == [5, 7]


def test_every_legal_action_applies() -> None:
    state = _white_window()
    for seat in range(3):
        for action in state.legal_actions(seat):
            state.clone().apply_action(seat, action)


# --- serialisation and views --------------------------------------------------------------


def _scripted_game() -> list[QwixxState]:
    """A short game through every phase; a snapshot after every step."""
    state = position(2, marks={1: {"red": [2, 3, 4, 5]}})
    snaps = [state.clone()]

    def snap() -> None:
        snaps.append(state.clone())

    roll(state, 6, 6, red=3, yellow=5, green=4, blue=2)
    snap()
    state.apply_action(1, mark("red", 12))
    snap()  # a held answer
    state.apply_action(0, PASS)
    snap()  # colour window, red closed
    state.apply_action(0, mark("yellow", 11))
    snap()
    roll(state, 1, 1, yellow=1, green=1, blue=1)
    snap()
    answer_all(state, {})
    snap()
    return snaps


def test_to_dict_from_dict_round_trip_at_every_step() -> None:
    for state in _scripted_game():
        data = state.to_dict()
        text = json.dumps(data)
        again = GAME.state_from_dict(json.loads(text))
        assert again == state
        assert again.to_dict() == data
        assert again.legal_actions(0) == state.legal_actions(0)
        assert again.actors() == state.actors()
        assert again.window() == state.window()


def test_clone_is_independent() -> None:
    state = position(2)
    roll(state, 2, 2)
    copy = state.clone()
    copy.apply_action(0, mark("red", 4))
    copy.apply_action(1, PASS)
    assert sheet(state, 0)["rows"]["red"] == []
    assert state.actors() == (0, 1)
    assert copy != state


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(phase="dancing"),
        lambda d: d.update(active=5),
        lambda d: d.update(failed=[0]),
        lambda d: d["failed"].__setitem__(0, 5),
        lambda d: d["marks"][0].__setitem__("red", [1]),
        lambda d: d["marks"][0].__setitem__("red", [3, 3]),
        lambda d: d["marks"][0].pop("red"),
        lambda d: d.update(locked=[["red"], []]),
        lambda d: d.update(closed=["pink"]),
        lambda d: d.update(dice={"white1": 1, "white2": 1}),
        lambda d: d.update(active_marked=1),
        lambda d: d["options"].update(lock_after=0),
        lambda d: d.update(held=[PASS, None]),
    ],
)
def test_from_dict_refuses_broken_states(change: Any) -> None:
    data = position(2).to_dict()
    change(data)
    with pytest.raises(InvalidState):
        GAME.state_from_dict(data)


def test_from_dict_refuses_an_illegal_held_answer() -> None:
    state = position(2)
    roll(state, 2, 2)
    state.apply_action(0, mark("red", 4))
    data = state.to_dict()
    data["held"][0] = mark("red", 5)
    with pytest.raises(InvalidState):
        GAME.state_from_dict(data)


def test_view_shows_public_sheets_and_never_the_seed() -> None:
    state = position(2, marks={1: {"blue": [12, 8]}}, failed={1: 1})
    roll(state, 2, 5)
    view = state.view(0)
    assert view["you"] == 0
    assert view["phase"] == "white"
    assert view["dice"] == {
        "white1": 2,
        "white2": 5,
        "red": 1,
        "yellow": 1,
        "green": 1,
        "blue": 1,
    }
    assert view["actors"] == [0, 1]
    assert view["sheets"][1] == {
        "rows": {"red": [], "yellow": [], "green": [], "blue": [12, 8]},
        "locked": [],
        "failed": 1,
    }
    assert view["scores"] == [0, 3 - 5]
    text = json.dumps(state.view(None))
    assert state.seed.hex() not in text


def test_failed_throws_render_as_their_numbers() -> None:
    state = position(1, failed={0: 3}, phase="over")
    assert state.render(0, "Ann").splitlines()[-1] == "       Failed throws: 1 2 3"


def test_position_helper_loads_a_hand_drawn_sheet_without_replay() -> None:
    state = position(1, marks={0: {"red": [12]}})  # unplayable (no lock), yet it loads
    assert state.scores() == [1]
    assert state.render(0).splitlines()[2].endswith("|XX| U")
