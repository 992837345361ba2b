"""Qwirkle (docs/rules.md): every rule with a hand-worked position, the generator, views, text.

Positions are built directly (`position`) or by applying explicit draws (`deal`), never
by relying on what a seed happens to give. Tiles are written as in the text rendering:
colour letter R O Y G B P, shape letter c s d t l x (circle square diamond star clover
cross), so "Rt" is the red star.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from itertools import combinations, permutations
from random import Random
from typing import Any

import pytest

from dicehall.rules.base import JSON, Applied, Private, Public, RuleEvent, TimedOut, as_wire
from dicehall.rules.errors import IllegalAction, InvalidState
from dicehall.rules.fair import Draw
from dicehall.rules.qwirkle import (
    GAME,
    Board,
    QwirkleState,
    best_placement,
    check_placement,
    has_placement,
    largest_set,
    place_action,
    placements,
    render_board,
    render_hand,
    score_placement,
)
from dicehall.rules.qwirkle.board import COLOR_LETTERS, SHAPE_LETTERS, line_ok, tile_json, unpack
from dicehall.rules.qwirkle.moves import anchors

SEED = b"q" * 32


def code(text: str) -> int:
    return COLOR_LETTERS.index(text[0]) * 6 + SHAPE_LETTERS.index(text[1])


def tiles(*texts: str) -> list[JSON]:
    return [tile_json(code(t)) for t in texts]


def placed(*items: tuple[int, int, str]) -> list[JSON]:
    return [{**tile_json(code(t)), "x": x, "y": y} for x, y, t in items]


def place(*items: tuple[int, int, str]) -> JSON:
    return {"type": "place", "tiles": placed(*items)}


def swap(*texts: str) -> JSON:
    return {"type": "swap", "tiles": tiles(*texts)}


def deal(state: QwirkleState, hands: Sequence[Sequence[str]]) -> list[RuleEvent]:
    """Apply the opening deal as explicit draws, one per seat in seat order."""
    events: list[RuleEvent] = []
    for seat, hand in enumerate(hands):
        events += state.apply_chance({"seat": seat, "tiles": tiles(*hand)})
    return events


def position(
    board: Sequence[tuple[int, int, str]],
    hands: Sequence[Sequence[str]],
    bag: Sequence[str] | None = None,
    turn: int = 0,
    points: Sequence[int] | None = None,
    over: bool = False,
) -> QwirkleState:
    """A mid-game position; the bag holds every tile not placed elsewhere unless given."""
    seats = len(hands)
    data = QwirkleState.new(seats, {}, SEED).to_dict()
    used = [code(t) for _, _, t in board] + [code(t) for h in hands for t in h]
    if bag is None:
        counts = [3] * 36
        for c in used:
            counts[c] -= 1
    else:
        counts = [0] * 36
        for t in bag:
            counts[code(t)] += 1
    data.update(
        board=[[x, y, code(t)] for x, y, t in board],
        hands=[sorted(code(t) for t in h) for h in hands],
        bag=counts,
        points=list(points) if points is not None else [0] * seats,
        turn=turn,
        window=5,
        dealing=False,
        draw_seat=0,
        draw_count=0,
        starter=0,
        start_size=1,
        over=over,
    )
    state = GAME.state_from_dict(data)
    assert isinstance(state, QwirkleState)
    return state


def illegal(state: QwirkleState, seat: int, action: Any, rule: str) -> None:
    before = state.to_dict()
    with pytest.raises(IllegalAction) as info:
        state.apply_action(seat, action)
    assert info.value.rule == rule, info.value.message
    assert state.to_dict() == before


def nodes(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from nodes(v)
    elif isinstance(value, list):
        yield value
        for v in value:
            yield from nodes(v)


def board_texts(state: QwirkleState) -> dict[tuple[int, int], str]:
    return {(x, y): COLOR_LETTERS[c // 6] + SHAPE_LETTERS[c % 6] for x, y, c in state.board.tiles()}


# --- tiles, bag, deal and the start rule ---------------------------------------------------


def test_game_facts() -> None:
    assert (GAME.name, GAME.title, GAME.min_seats, GAME.max_seats) == ("qwirkle", "Qwirkle", 1, 4)
    assert GAME.options == () and GAME.score_sheet is None


def test_108_tiles_and_the_deal_is_one_chance_event_per_seat() -> None:
    state = GAME.new_state(3, seed=SEED)
    assert isinstance(state, QwirkleState)
    assert state.bag == [3] * 36 and state.bag_size == 108
    assert state.chance_pending() and state.actors() == ()
    for seat in range(3):
        outcome = state.sample_chance()
        assert outcome["seat"] == seat and len(outcome["tiles"]) == 6
        bag = 108 - 6 * (seat + 1)
        events = state.apply_chance(outcome)
        assert events[0] == Private(
            seat,
            Public({"type": "drew", "seat": seat, "tiles": outcome["tiles"], "bag": bag}),
            Public({"type": "drew", "seat": seat, "count": 6, "bag": bag}),
        )
    assert state.chance_count == 3 and state.bag_size == 90
    assert [len(h) for h in state.hands] == [6, 6, 6]
    assert not state.chance_pending() and len(state.actors()) == 1


def test_sample_chance_follows_the_documented_derivation() -> None:
    """Bag order: tile codes ascending (colour-major, each kind's copies together); each
    tile is pool.pop(below(len(pool))) from the event's stream."""
    state = GAME.new_state(2, seed=SEED)
    assert isinstance(state, QwirkleState)
    pool = [c for c in range(36) for _ in range(3)]
    draw = Draw(SEED, 0)
    expected = [pool.pop(draw.below(len(pool))) for _ in range(6)]
    outcome = state.sample_chance()
    assert outcome == {"seat": 0, "tiles": [tile_json(c) for c in expected]}
    assert state.sample_chance() == outcome  # pure
    state.apply_chance(outcome)
    pool = [c for c in range(36) for _ in range(state.bag[c])]
    draw = Draw(SEED, 1)
    expected = [pool.pop(draw.below(len(pool))) for _ in range(6)]
    assert state.sample_chance()["tiles"] == [tile_json(c) for c in expected]


def test_largest_set_counts_distinct_tiles_of_one_colour_or_one_shape() -> None:
    assert largest_set([code(t) for t in ("Rc", "Os", "Yd", "Gt", "Bl", "Px")]) == 1
    assert largest_set([code(t) for t in ("Rc", "Rc", "Rs", "Bx", "Gx", "Yl")]) == 2
    assert largest_set([code(t) for t in ("Rc", "Oc", "Yc", "Gc", "Rs", "Rd")]) == 4
    assert largest_set([]) == 0


def test_start_rule_biggest_set_starts_and_must_open_with_that_size() -> None:
    state = GAME.new_state(2, seed=SEED)
    assert isinstance(state, QwirkleState)
    events = deal(
        state, [["Rc", "Os", "Yd", "Gt", "Bl", "Px"], ["Rc", "Rs", "Rd", "Bt", "Bl", "Bx"]]
    )
    assert Public({"type": "start", "seat": 1, "size": 3}) in events
    assert events[-1] == Public({"type": "turn", "seat": 1})
    assert state.actors() == (1,) and state.starter == 1
    illegal(state, 0, place((0, 0, "Rc")), "not-your-turn")
    illegal(state, 1, place((0, 0, "Rc"), (1, 0, "Rs")), "opening-size")
    illegal(state, 1, place((1, 0, "Rc"), (2, 0, "Rs"), (3, 0, "Rd")), "opening-origin")
    illegal(state, 1, swap("Rc"), "opening-must-place")
    illegal(state, 1, {"type": "pass"}, "bag-not-empty")
    # Two disjoint sets of 3: 3! orders x 3 offsets x 2 directions each.
    legal = state.legal_actions(1)
    assert len(legal) == 72 and all(a["type"] == "place" for a in legal)
    assert place((-2, 0, "Rd"), (-1, 0, "Rs"), (0, 0, "Rc")) in legal
    assert place((0, -1, "Bx"), (0, 0, "Bt"), (0, 1, "Bl")) in legal
    events = as_wire(state.apply_action(1, place((0, 0, "Rc"), (1, 0, "Rs"), (2, 0, "Rd"))))
    assert events[0]["points"] == 3
    assert state.scores() == [0, 3]
    assert state.chance_pending() and (state.draw_seat, state.draw_count) == (1, 3)


def test_start_rule_tie_goes_to_the_lowest_seat() -> None:
    state = GAME.new_state(3, seed=SEED)
    assert isinstance(state, QwirkleState)
    deal(
        state,
        [
            ["Rc", "Os", "Yd", "Gt", "Bl", "Px"],
            ["Rc", "Oc", "Yd", "Gt", "Bl", "Px"],
            ["Rs", "Ys", "Gd", "Bt", "Pl", "Ox"],
        ],
    )
    assert state.starter == 1 and state.start_size == 2 and state.actors() == (1,)


def test_lone_first_tile_scores_one_in_solitaire() -> None:
    state = GAME.new_state(1, seed=SEED)
    assert isinstance(state, QwirkleState)
    deal(state, [["Rc", "Os", "Yd", "Gt", "Bl", "Px"]])
    legal = state.legal_actions(0)
    assert legal == [place((0, 0, t)) for t in ("Rc", "Os", "Yd", "Gt", "Bl", "Px")]
    events = as_wire(state.apply_action(0, place((0, 0, "Gt"))))
    assert events[0]["points"] == 1 and state.scores() == [1]
    state.apply_chance({"seat": 0, "tiles": tiles("Gs")})
    assert state.actors() == (0,) and state.window() == 2


def test_a_forfeited_opening_passes_the_opening_to_the_next_seat() -> None:
    state = GAME.new_state(2, seed=SEED)
    assert isinstance(state, QwirkleState)
    deal(state, [["Rc", "Os", "Yd", "Gt", "Bl", "Px"], ["Rc", "Rs", "Rd", "Bt", "Bl", "Bx"]])
    state.apply_timeout(1)
    assert state.actors() == (0,) and state.opening_size() == 1
    assert len(state.legal_actions(0)) == 6
    state.apply_action(0, place((0, 0, "Px")))
    assert state.scores() == [1, 0]


# --- legality of a placement ---------------------------------------------------------------

ROW = [(0, 0, "Rc"), (1, 0, "Rs")]
HAND = ["Rd", "Rt", "Bc", "Bs", "Rc", "Gx"]


@pytest.mark.parametrize(
    ("action", "rule"),
    [
        (place((2, 0, "Rd"), (3, 1, "Rt")), "not-in-line"),
        (place((2, 0, "Rd"), (4, 0, "Rt")), "not-contiguous"),
        (place((5, 5, "Rd")), "not-connected"),
        (place((1, 0, "Rd")), "cell-occupied"),
        (place((2, 0, "Rd"), (2, 0, "Rt")), "same-cell"),
        (place((2, 0, "Rd"), (3, 0, "Rd")), "not-in-hand"),
        (place((2, 0, "Ol")), "not-in-hand"),
        (place((2, 0, "Bc")), "line-mismatch"),
        (place((2, 0, "Rc")), "duplicate-tile"),
        (place((0, 1, "Bs")), "line-mismatch"),
        (place((600, 0, "Rd")), "off-board"),
        ({"type": "place", "tiles": []}, "no-tiles"),
        (place(*[(2 + i, 0, "Rd") for i in range(7)]), "too-many-tiles"),
        (
            {"type": "place", "tiles": [{"color": "pink", "shape": "star", "x": 2, "y": 0}]},
            "unknown-tile",
        ),
        (
            {"type": "place", "tiles": [{"color": "red", "shape": "diamond", "x": 2}]},
            "malformed-action",
        ),
        (
            {"type": "place", "tiles": [{"color": "red", "shape": "diamond", "x": True, "y": 0}]},
            "malformed-action",
        ),
        (
            {
                "type": "place",
                "tiles": [{"color": "red", "shape": "diamond", "x": 2, "y": 0, "z": 1}],
            },
            "malformed-action",
        ),
        ({"type": "place", "tiles": "Rd"}, "malformed-action"),
        ({"type": "place"}, "malformed-action"),
        ({"type": "place", "tiles": placed((2, 0, "Rd")), "extra": 1}, "malformed-action"),
        ({"type": "jump"}, "unknown-action"),
        ("place", "malformed-action"),
    ],
)
def test_illegal_placements_name_their_rule_and_change_nothing(action: Any, rule: str) -> None:
    state = position(ROW, [HAND, ["Ox"]])
    illegal(state, 0, action, rule)


def test_only_the_seat_to_move_may_act() -> None:
    state = position(ROW, [HAND, ["Rd"]])
    illegal(state, 1, place((2, 0, "Rd")), "not-your-turn")
    illegal(state, 2, place((2, 0, "Rd")), "no-such-seat")
    assert state.legal_actions(1) == []


def test_line_of_seven_is_too_long() -> None:
    red_row = [(i, 0, t) for i, t in enumerate(["Rc", "Rs", "Rd", "Rt", "Rl", "Rx"])]
    state = position(red_row, [["Rc", "Bx"], ["Ox"]])
    illegal(state, 0, place((6, 0, "Rc")), "line-too-long")
    illegal(state, 0, place((-1, 0, "Bx")), "line-too-long")
    assert has_placement(state.board, [code("Bx")])  # under Rx, a cross column


def test_a_placement_that_breaks_a_perpendicular_line_is_refused() -> None:
    """Rd Rt extend the red row, but Rt lands under Bc: the column Bc/Rt is neither one
    colour nor one shape."""
    board = [*ROW, (3, -1, "Bc")]
    state = position(board, [HAND, ["Ox"]])
    illegal(state, 0, place((2, 0, "Rd"), (3, 0, "Rt")), "line-mismatch")
    # Under a blue circle only a circle of another colour or a blue tile may go.
    assert place((2, 0, "Rd"), (3, 0, "Rt")) not in state.legal_actions(0)
    state.apply_action(0, place((2, 0, "Rd")))
    assert state.scores() == [3, 0]


def test_tiles_on_both_sides_of_a_board_tile_form_one_contiguous_line() -> None:
    state = position([(1, 0, "Rs")], [["Rc", "Rd", "Ox"], ["Gx"]])
    events = as_wire(state.apply_action(0, place((0, 0, "Rc"), (2, 0, "Rd"))))
    assert events[0]["points"] == 3
    assert board_texts(state) == {(0, 0): "Rc", (1, 0): "Rs", (2, 0): "Rd"}


def test_tiles_laid_parallel_to_a_line_touch_it_through_their_columns() -> None:
    """Oc Os under Rc Rs: row Oc-Os 2, column Rc/Oc 2, column Rs/Os 2: 6 points."""
    state = position(ROW, [["Oc", "Os", "Bx"], ["Gx"]])
    events = as_wire(state.apply_action(0, place((0, 1, "Oc"), (1, 1, "Os"))))
    assert events[0]["points"] == 6 and events[0]["qwirkles"] == 0


# --- scoring ---------------------------------------------------------------------------------


def test_one_tile_scores_every_line_it_touches() -> None:
    """Rs at (1, 0): row Rc-Rs 2, column Rs/Bs 2: 4 points."""
    board = [(0, 0, "Rc"), (1, 1, "Bs")]
    assert (
        score_placement(
            Board.from_tiles((x, y, code(t)) for x, y, t in board), [(1, 0, code("Rs"))]
        )
        == 4
    )
    state = position(board, [["Rs", "Gx"], ["Ox"]])
    assert as_wire(state.apply_action(0, place((1, 0, "Rs"))))[0]["points"] == 4


def test_a_line_is_scored_once_however_many_tiles_it_gets() -> None:
    state = position([(0, 0, "Rc")], [["Rs", "Rd", "Rt", "Bx"], ["Ox"]])
    events = as_wire(state.apply_action(0, place((1, 0, "Rs"), (2, 0, "Rd"), (3, 0, "Rt"))))
    assert events[0]["points"] == 4


def test_qwirkle_scoring_in_two_directions() -> None:
    """Rt Rl Rx complete the red row (6 + 6 bonus) and Rt also makes the star column
    Bt/Rt (2): 14 points, one Qwirkle."""
    board = [(0, 0, "Rc"), (1, 0, "Rs"), (2, 0, "Rd"), (3, -1, "Bt")]
    state = position(board, [["Rt", "Rl", "Rx", "Gx"], ["Ox"]])
    events = as_wire(state.apply_action(0, place((3, 0, "Rt"), (4, 0, "Rl"), (5, 0, "Rx"))))
    assert (events[0]["points"], events[0]["qwirkles"]) == (14, 1)
    assert state.scores() == [14, 0]


def test_double_qwirkle_with_one_tile() -> None:
    """Rx at (5, 0) completes the red row and the cross column: (6 + 6) * 2 = 24."""
    board = [(i, 0, t) for i, t in enumerate(["Rc", "Rs", "Rd", "Rt", "Rl"])]
    board += [(5, -5 + i, t) for i, t in enumerate(["Ox", "Yx", "Gx", "Bx", "Px"])]
    state = position(board, [["Rx", "Gc"], ["Oc"]])
    events = as_wire(state.apply_action(0, place((5, 0, "Rx"))))
    assert (events[0]["points"], events[0]["qwirkles"]) == (24, 2)


def test_check_placement_reports_points_and_qwirkles() -> None:
    board = Board.from_tiles([(0, 0, code("Rc"))])
    assert check_placement(board, [(1, 0, code("Rs"))]) == (2, 0)
    with pytest.raises(IllegalAction) as info:
        score_placement(board, [(1, 0, code("Bs"))])
    assert info.value.rule == "line-mismatch"
    empty = Board()
    assert check_placement(empty, [(0, 0, code("Rc"))]) == (1, 0)
    six = [(i - 2, 0, code(t)) for i, t in enumerate(["Rc", "Rs", "Rd", "Rt", "Rl", "Rx"])]
    assert check_placement(empty, six, opening_size=6) == (12, 1)


# --- drawing, swapping, passing --------------------------------------------------------------


def test_after_placing_the_seat_draws_back_up_to_six() -> None:
    state = position(ROW, [["Rd", "Rt", "Ox", "Ox", "Gx", "Gx"], ["Bc"]])
    state.apply_action(0, place((2, 0, "Rd"), (3, 0, "Rt")))
    assert state.chance_pending() and (state.draw_seat, state.draw_count) == (0, 2)
    assert state.actors() == ()
    before = state.to_dict()
    for bad in (
        {"seat": 1, "tiles": tiles("Bs", "Bd")},
        {"seat": 0, "tiles": tiles("Bs")},
        {"seat": 0, "tiles": tiles("Ox", "Ox")},  # two Ox are in the hand, one in the bag
        {"seat": 0, "tiles": [{"color": "red"}, {"color": "blue", "shape": "star"}]},
        {"seat": True, "tiles": tiles("Bs", "Bd")},
        {"seat": 0.0, "tiles": tiles("Bs", "Bd")},
        {"seat": 0, "tiles": tiles("Bs", "Bd"), "extra": 1},
        {"dice": [1, 2]},
    ):
        with pytest.raises(IllegalAction) as info:
            state.apply_chance(bad)
        assert info.value.rule == "impossible-outcome"
        assert state.to_dict() == before
    events = state.apply_chance({"seat": 0, "tiles": tiles("Bs", "Bd")})
    assert {"type": "drew", "seat": 0, "count": 2, "bag": state.bag_size} in as_wire(events)
    assert events[-1] == Public({"type": "turn", "seat": 1})
    assert len(state.hands[0]) == 6 and state.actors() == (1,)
    with pytest.raises(IllegalAction) as info:
        state.apply_chance({"seat": 0, "tiles": []})
    assert info.value.rule == "no-chance-pending"


def test_a_short_bag_gives_what_it_has_and_an_empty_bag_nothing() -> None:
    state = position(ROW, [["Rd", "Rt", "Rl", "Ox"], ["Bc"]], bag=["Gc", "Gs"])
    state.apply_action(0, place((2, 0, "Rd"), (3, 0, "Rt"), (4, 0, "Rl")))
    assert state.draw_count == 2
    state.apply_chance({"seat": 0, "tiles": tiles("Gs", "Gc")})
    assert state.bag_size == 0 and len(state.hands[0]) == 3
    state2 = position(ROW, [["Rd", "Ox"], ["Bc"]], bag=[])
    events = state2.apply_action(0, place((2, 0, "Rd")))
    assert not state2.chance_pending() and events[-1] == Public({"type": "turn", "seat": 1})


def test_swap_draws_first_then_returns_the_tiles_to_the_bag() -> None:
    state = position(ROW, [["Rd", "Ox", "Ox", "Gl"], ["Bc"]], bag=["Yc", "Ys"], points=[4, 2])
    illegal(state, 0, swap("Rd", "Ox", "Gl"), "bag-too-small")
    illegal(state, 0, swap("Rt"), "not-in-hand")
    illegal(state, 0, swap("Ox", "Ox", "Ox"), "not-in-hand")
    illegal(state, 0, {"type": "swap", "tiles": []}, "no-tiles")
    illegal(state, 0, {"type": "swap", "tiles": tiles(*["Ox"] * 7)}, "too-many-tiles")
    illegal(state, 0, {"type": "swap", "tiles": placed((0, 0, "Ox"))}, "malformed-action")
    events = state.apply_action(0, swap("Ox", "Ox"))
    assert events == [
        Private(0, Applied(0, swap("Ox", "Ox")), Applied(0, {"type": "swap", "count": 2}))
    ]
    assert state.draw_count == 2 and state.bag_size == 2
    assert {"color": "orange", "shape": "cross"} in state.hidden(0)
    with pytest.raises(IllegalAction):  # the swapped tiles are not in the bag during the draw
        state.apply_chance({"seat": 0, "tiles": tiles("Ox", "Yc")})
    state.apply_chance({"seat": 0, "tiles": tiles("Ys", "Yc")})
    assert sorted(state.hands[0]) == sorted(code(t) for t in ["Rd", "Gl", "Yc", "Ys"])
    assert state.bag[code("Ox")] == 2 and state.bag_size == 2
    assert state.scores() == [4, 2] and state.actors() == (1,)


def test_swaps_are_listed_once_per_multiset() -> None:
    state = position([(0, 0, "Yd")], [["Rc", "Rc", "Rs", "Bx", "Bx", "Gl"], ["Ox"]])
    swaps = [a for a in state.legal_actions(0) if a["type"] == "swap"]
    assert len(swaps) == 3 * 2 * 3 * 2 - 1
    assert len({json.dumps(a) for a in swaps}) == len(swaps)
    assert swap("Rc") in swaps and swap("Rc", "Rc", "Rs", "Gl", "Bx", "Bx") in swaps
    small = position([(0, 0, "Yd")], [["Rc", "Rc", "Rs"], ["Ox"]], bag=["Gc"])
    assert [a for a in small.legal_actions(0) if a["type"] == "swap"] == [swap("Rc"), swap("Rs")]


def test_pass_only_when_the_bag_is_empty_and_nothing_fits() -> None:
    state = position(ROW, [["Rd", "Gx"], ["Bx"]])
    illegal(state, 0, {"type": "pass"}, "bag-not-empty")
    state = position(ROW, [["Rd", "Gx"], ["Bx"]], bag=[])
    illegal(state, 0, {"type": "pass"}, "placement-available")
    assert {"type": "pass"} not in state.legal_actions(0)
    state = position(ROW, [["Bl", "Gx"], ["Bx"]], bag=[])
    assert state.legal_actions(0) == [{"type": "pass"}]
    events = state.apply_action(0, {"type": "pass"})
    assert events == [Applied(0, {"type": "pass"}), Public({"type": "turn", "seat": 1})]
    illegal(state, 1, {"type": "pass", "tiles": []}, "malformed-action")


# --- the end -------------------------------------------------------------------------------


def test_emptying_the_hand_with_an_empty_bag_scores_six_and_ends_at_once() -> None:
    state = position(ROW, [["Rd"], ["Bx", "Bc"], ["Gx"]], bag=[], points=[0, 5, 0])
    events = as_wire(state.apply_action(0, place((2, 0, "Rd"))))
    assert events[0]["points"] == 3
    assert events[1:] == [
        {"type": "bonus", "seat": 0, "points": 6},
        {"type": "game_over", "scores": [9, 5, 0], "winners": [0]},
    ]
    assert state.is_over() and state.actors() == () and not state.chance_pending()
    illegal(state, 1, {"type": "pass"}, "game-over")


def test_emptying_the_hand_while_the_bag_has_tiles_just_draws() -> None:
    state = position(ROW, [["Rd"], ["Bx"]], bag=["Gc"])
    state.apply_action(0, place((2, 0, "Rd")))
    assert not state.is_over() and state.draw_count == 1


def test_blocked_end_when_every_seat_passes_in_a_row() -> None:
    state = position(ROW, [["Bl"], ["Bx"], ["Gx"]], bag=[], turn=1, points=[3, 1, 1])
    state.apply_action(1, {"type": "pass"})
    state.apply_action(2, {"type": "pass"})
    assert not state.is_over()
    events = state.apply_action(0, {"type": "pass"})
    assert events[-1] == Public({"type": "game_over", "scores": [3, 1, 1], "winners": [0]})
    assert state.scores() == [3, 1, 1]


def test_a_placement_breaks_a_run_of_passes() -> None:
    state = position(ROW, [["Bl"], ["Rd", "Bx"]], bag=[])
    state.apply_action(0, {"type": "pass"})
    state.apply_action(1, place((2, 0, "Rd")))
    state.apply_action(0, {"type": "pass"})
    assert not state.is_over() and state.passes == 1


def test_timeout_forfeits_the_turn_and_counts_as_a_pass() -> None:
    state = position(ROW, [["Rd", "Gx"], ["Bx"]], bag=["Yc"])
    hands = [list(h) for h in state.hands]
    window = state.window()
    assert state.apply_timeout(0) == [TimedOut(0), Public({"type": "turn", "seat": 1})]
    assert state.hands == hands and len(state.board) == 2 and state.window() == window + 1
    assert state.scores() == [0, 0]
    with pytest.raises(IllegalAction):
        state.apply_timeout(0)
    events = as_wire(state.apply_timeout(1))
    assert state.is_over() and events[-1]["type"] == "game_over"


def test_solitaire_ends_on_one_pass() -> None:
    state = position(ROW, [["Bl"]], bag=[], points=[7])
    state.apply_action(0, {"type": "pass"})
    assert state.is_over() and state.winners() == [0]


@pytest.mark.parametrize(
    ("points", "hands", "winners"),
    [
        ([10, 12, 8], [["Rc"], ["Rc", "Rs"], []], [1]),
        ([10, 10, 8], [["Rc", "Rs"], ["Rc"], []], [1]),
        ([10, 10, 10], [["Rc"], ["Rs"], ["Rc", "Rs"]], [0, 1]),
    ],
)
def test_winners_most_points_then_fewest_tiles_then_a_tie(
    points: list[int], hands: list[list[str]], winners: list[int]
) -> None:
    state = position(ROW, hands, bag=[], points=points, over=True)
    assert state.winners() == winners


# --- views, hidden hands, events -----------------------------------------------------------


def test_views_show_the_own_hand_and_only_sizes_of_the_rest() -> None:
    state = position(ROW, [["Rd", "Gx"], ["Bx", "Bc", "Bs"]], points=[3, 1])
    v0 = state.view(0)
    assert v0["hand"] == tiles("Rd", "Gx")
    assert v0["hand_sizes"] == [2, 3] and v0["bag"] == state.bag_size
    assert v0["board"] == placed(*ROW) and v0["scores"] == [3, 1]
    assert v0["turn"] == 0 and v0["actors"] == [0] and v0["you"] == 0
    spectator = state.view(None)
    assert spectator["hand"] is None
    for viewer, secrets in ((0, state.hidden(1)), (1, state.hidden(0)), (None, state.hidden(0))):
        inside = list(nodes(state.view(viewer)))
        own = state.hidden(viewer) if viewer is not None else []
        assert all(s not in inside for s in secrets if s not in own)
    assert state.hidden(1) == tiles("Bc", "Bs", "Bx")
    text = json.dumps(state.view(None))
    assert "seed" not in text and SEED.hex() not in text


def test_draws_are_private_with_a_public_twin() -> None:
    state = GAME.new_state(2, seed=SEED)
    (event,) = state.apply_chance(state.sample_chance())
    assert isinstance(event, Private) and event.seat == 0
    assert len(as_wire([event], 0)[0]["tiles"]) == 6
    for other in (1, None):
        assert as_wire([event], other) == [{"type": "drew", "seat": 0, "count": 6, "bag": 102}]


def test_view_of_a_seat_that_is_drawing_after_a_swap() -> None:
    state = position(ROW, [["Rd", "Ox"], ["Bc"]])
    state.apply_action(0, swap("Ox"))
    assert state.view(0)["returning"] == tiles("Ox")
    assert "returning" not in state.view(1)
    assert state.view(1)["drawing"] == {"seat": 0, "count": 1}


# --- the move generator ----------------------------------------------------------------------


def brute_force(
    board: Board, hand: Sequence[int], most: int
) -> dict[tuple[tuple[int, int, int], ...], int]:
    """Every placement of up to `most` tiles that check_placement accepts, found by trying
    every set of cells in one row or column that holds an anchor (a legal placement
    touches the board) within 5 cells of it (a line holds at most 6), with every ordered
    choice of distinct tiles that could share a line at all."""
    codes = sorted(set(hand))
    out: dict[tuple[tuple[int, int, int], ...], int] = {}
    cells = {(x, y) for x, y, _ in board.tiles()}
    for p in anchors(board):
        ax, ay = unpack(p)
        for dx, dy in ((1, 0), (0, 1)):
            free = [
                (ax + i * dx, ay + i * dy)
                for i in range(-5, 6)
                if i and (ax + i * dx, ay + i * dy) not in cells
            ]
            for k in range(1, min(most, len(codes)) + 1):
                for ts in permutations(codes, k):
                    cm = sm = 0
                    for t in ts:
                        cm |= 1 << (t // 6)
                        sm |= 1 << (t % 6)
                    if not line_ok(cm, sm, k):
                        continue
                    for spots in combinations(free, k - 1):
                        where = [(ax, ay), *spots]
                        key = tuple(sorted((x, y, t) for (x, y), t in zip(where, ts, strict=True)))
                        if key in out:
                            continue
                        with contextlib.suppress(IllegalAction):
                            out[key] = check_placement(board, key)[0]
    return out


def midgame_states(count: int, seats: int = 2) -> list[QwirkleState]:
    """Positions from seeded greedy self-play (the seed only varies the positions)."""
    out = []
    for i in range(count):
        state = GAME.new_state(seats, seed=bytes([i]) * 32)
        assert isinstance(state, QwirkleState)
        target = 10 + 9 * i
        while not state.is_over() and len(state.board) < target:
            if state.chance_pending():
                state.resolve_chance()
                continue
            seat = state.actors()[0]
            move = best_placement(state.board, state.hands[seat])
            if move is None:
                state.apply_action(seat, state.legal_actions(seat)[0])
            else:
                state.apply_action(seat, place_action(move[1]))
        out.append(state)
    return out


def test_generator_matches_brute_force_on_played_positions() -> None:
    rng = Random(11)
    checked = 0
    for state in midgame_states(6):
        board = state.board
        for _ in range(3):
            hand = rng.sample(range(36), 3)
            if rng.random() < 0.5:  # a same-colour or same-shape hand makes long lines
                c = rng.randrange(6)
                hand = [c * 6 + s for s in rng.sample(range(6), 3)]
            expected = brute_force(board, hand, 3)
            got = {tiles_: points for points, tiles_ in placements(board, hand)}
            assert len(got) == len(placements(board, hand)), "duplicate placements"
            assert got == expected
            assert has_placement(board, hand) == bool(expected)
            checked += len(expected)
    assert checked > 100


def test_generator_matches_brute_force_for_long_placements_on_small_boards() -> None:
    rng = Random(3)
    fixed = [(0, 0, "Rc"), (1, 0, "Rs"), (0, 1, "Oc")]
    cases = [
        (Board.from_tiles((x, y, code(t)) for x, y, t in fixed), [code(t) for t in HAND[:2]]),
        (
            Board.from_tiles((x, y, code(t)) for x, y, t in fixed),
            [code(t) for t in ("Rd", "Rt", "Rl", "Rx", "Yc")],
        ),
    ]
    for state in midgame_states(2):
        colour = rng.randrange(6)
        hand = [colour * 6 + s for s in rng.sample(range(6), 4)] + [rng.randrange(36)]
        cases.append((Board.from_tiles(state.board.tiles()[:4]), hand))  # part of a legal board
    for board, hand in cases:
        expected = brute_force(board, hand, 4)
        got = {t: points for points, t in placements(board, hand) if len(t) <= 4}
        assert got == expected
    qwirkle = ((2, 0, code("Rx")), (3, 0, code("Rl")), (4, 0, code("Rt")), (5, 0, code("Rd")))
    assert (12, qwirkle) in placements(*cases[1])


def test_best_placement_is_the_first_highest_scoring_of_placements() -> None:
    """`best_placement` prunes by the best so far instead of generating every placement:
    it still returns exactly the first highest-scoring placement `placements` lists (long
    lines included: half the hands are of one colour or one shape)."""
    rng = Random(17)
    checked = 0
    for board in [Board(), *(state.board for state in midgame_states(8))]:
        for _ in range(12):
            hand = [rng.randrange(36) for _ in range(rng.randint(0, 6))]
            if rng.random() < 0.5:
                one = rng.randrange(6)
                others = rng.sample(range(6), rng.randint(2, 6))
                if rng.random() < 0.5:
                    hand = [one * 6 + shape for shape in others]  # one colour
                else:
                    hand = [colour * 6 + one for colour in others]  # one shape
            moves = placements(board, hand)
            expected = None
            for move in moves:
                if expected is None or move[0] > expected[0]:
                    expected = move
            assert best_placement(board, hand) == expected
            checked += bool(moves)
    assert checked > 50


def test_every_generated_placement_applies_with_the_promised_points() -> None:
    rng = Random(5)
    for state in midgame_states(8, seats=3):
        if state.is_over():
            continue
        seat = state.actors()[0] if state.actors() else None
        if seat is None:
            state.resolve_chance()
            seat = state.actors()[0]
        state.hands[seat] = sorted(rng.sample(range(36), 6))
        moves = state.placements(seat)
        legal = state.legal_actions(seat)
        assert len({json.dumps(a) for a in legal}) == len(legal)
        assert [a for a in legal if a["type"] == "place"] == [
            {"type": "place", "tiles": [{**tile_json(c), "x": x, "y": y} for x, y, c in t]}
            for _, t in moves
        ]
        for points, tiles_ in moves:
            assert list(tiles_) == sorted(tiles_)
            probe = state.clone()
            action = {
                "type": "place",
                "tiles": [{**tile_json(c), "x": x, "y": y} for x, y, c in tiles_],
            }
            assert as_wire(probe.apply_action(seat, action))[0]["points"] == points


def test_identical_tiles_give_each_placement_once() -> None:
    state = position([(0, 0, "Rd")], [["Rc", "Rc", "Rc", "Rs", "Rs", "Bx"], ["Ox"]])
    places = [a for a in state.legal_actions(0) if a["type"] == "place"]
    assert len({json.dumps(a) for a in places}) == len(places)
    assert place((1, 0, "Rc")) in places and place((1, 0, "Rc"), (2, 0, "Rs")) in places
    # Singles: 4 cells x (Rc, Rs). Pairs in line with Rd: 2 directions x 3 intervals x 2
    # orders. Pairs across a line through Rd: 4 cells x 2 intervals x 2 orders.
    assert len(places) == 4 * 2 + 2 * 3 * 2 + 4 * 2 * 2


def test_best_placement_is_greedy() -> None:
    board = [(i, 0, t) for i, t in enumerate(["Rc", "Rs", "Rd", "Rt", "Rl"])]
    state = position(board, [["Rx", "Bc", "Oc"], ["Gx"]])
    best = best_placement(state.board, state.hands[0])
    assert best is not None and best[0] == 12
    assert best[1] in (((-1, 0, code("Rx")),), ((5, 0, code("Rx")),))
    assert place_action(best[1]) in (place((-1, 0, "Rx")), place((5, 0, "Rx")))
    assert as_wire(state.apply_action(0, place_action(best[1])))[0]["points"] == 12


# --- text ------------------------------------------------------------------------------------


def test_render_exact() -> None:
    board = [(0, -1, "Gc"), (0, 0, "Rc"), (1, 0, "Rs"), (2, 0, "Rt")]
    state = position(board, [["Rd", "Bs", "Bs"], ["Ox"]], points=[31, 2])
    assert state.render(0, "Ann") == (
        "Player name: Ann\n"
        "Hand: Rd Bs Bs\n"
        "   -1  0  1  2  3\n"
        "-2 .. .. .. .. ..\n"
        "-1 .. Gc .. .. ..\n"
        " 0 .. Rc Rs Rt ..\n"
        " 1 .. .. .. .. .."
    )
    over = position(board, [["Rd", "Bs", "Bs"], []], points=[31, 2], over=True)
    assert over.render(1).splitlines()[:2] == ["Player name:" + " " * 22 + "Points: 2", "Hand:"]
    assert over.render(0, "Ann").splitlines()[0] == "Player name: Ann" + " " * 18 + "Points: 31"
    long_name = "A" * 30
    assert over.render(0, long_name).splitlines()[0] == f"Player name: {long_name} Points: 31"


def test_render_board_widens_columns_for_long_labels_and_shows_the_origin_when_empty() -> None:
    assert render_board(Board()) == "   0\n0 .."
    board = Board.from_tiles([(-10, 0, code("Px")), (-9, 0, code("Pl"))])
    assert render_board(board) == (
        "   -11 -10  -9  -8\n-1  ..  ..  ..  ..\n 0  ..  Px  Pl  ..\n 1  ..  ..  ..  .."
    )
    assert render_hand([code("Yt"), code("Ol")]) == "Yt Ol"
    assert render_hand([]) == ""


# --- serialisation and playouts ----------------------------------------------------------------


def test_from_dict_refuses_impossible_states() -> None:
    good = position(ROW, [["Rd"], ["Bx"]]).to_dict()
    for change in (
        {"bag": [3] * 36},
        {"hands": [[code("Rc")] * 4, []]},
        {"hands": [[0, 1, 2, 3, 4, 5, 6], []]},
        {"board": [[0, 0, 0], [0, 0, 1]]},
        {"board": [[0, 0, 99]]},
        {"turn": 5},
        {"seats": 5},
    ):
        with pytest.raises(InvalidState):
            GAME.state_from_dict({**good, **change})
    with pytest.raises(InvalidState):
        GAME.state_from_dict({k: v for k, v in good.items() if k != "bag"})


def test_random_playouts_conserve_tiles_and_round_trip() -> None:
    for seats in (1, 2, 4):
        rng = Random(seats)
        state = GAME.new_state(seats, seed=bytes([seats]) * 32)
        assert isinstance(state, QwirkleState)
        steps = 0
        while not state.is_over():
            steps += 1
            assert steps < 5000
            if steps % 7 == 0:
                again = GAME.state_from_dict(json.loads(json.dumps(state.to_dict())))
                assert again == state and state.clone() == state
            if state.chance_pending():
                state.resolve_chance()
                continue
            seat = state.actors()[0]
            if rng.random() < 0.05:
                state.apply_timeout(seat)
                continue
            legal = state.legal_actions(seat)
            places = [a for a in legal if a["type"] == "place"]
            state.apply_action(seat, rng.choice(places if places and rng.random() < 0.8 else legal))
            counts = list(state.bag)
            for c in [*state.board.cells.values(), *state.returning]:
                counts[c] += 1
            for h in state.hands:
                for c in h:
                    counts[c] += 1
            assert counts == [3] * 36
            assert all(len(h) <= 6 for h in state.hands)
        assert len(state.winners()) >= 1
        for s in range(seats):
            assert f"Points: {state.scores()[s]}" in state.render(s, "X")


def test_a_record_lists_every_draw_and_replays() -> None:
    from dicehall.rules.play import play_out, random_chooser
    from dicehall.rules.records import new_record, replay

    state = GAME.new_state(2, seed=SEED)
    log: list[JSON] = []
    play_out(state, random_chooser(Random(4)), log)
    draws = [e["chance"] for e in log if "chance" in e]
    assert [d["seat"] for d in draws[:2]] == [0, 1] and all(len(d["tiles"]) == 6 for d in draws[:2])
    record = new_record("qwirkle", {}, ["Ann", "Bob"], state)
    record.update(seed=SEED.hex(), log=json.loads(json.dumps(log)))
    replayed = replay(record)
    assert replayed.verified is True and replayed.state == state
    # Hand-written: no seed, explicit draws.
    hand_made = {
        "game": "qwirkle",
        "seats": ["Ann"],
        "log": [
            {"chance": {"seat": 0, "tiles": tiles("Rc", "Rs", "Bd", "Gt", "Ox", "Pl")}},
            {"seat": 0, "action": place((0, 0, "Rc"), (1, 0, "Rs"))},
            {"chance": {"seat": 0, "tiles": tiles("Rd", "Yx")}},
            {"seat": 0, "action": place((2, 0, "Rd"))},
        ],
    }
    result = replay(hand_made)
    assert result.verified is None and result.state.scores() == [5]
