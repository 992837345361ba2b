"""Pig's own rules, from worked examples (docs/rules.md, Pig)."""

from __future__ import annotations

import pytest

from dicehall.rules import IllegalAction, get_game


def test_a_one_loses_the_pot_and_the_turn() -> None:
    state = get_game("pig").new_state(2, {}, bytes(32))
    state.apply_action(0, {"type": "roll", "count": 2})
    state.apply_chance({"dice": [3, 4]})
    assert state.view(0)["pot"] == 7 and state.actors() == (0,)
    state.apply_action(0, {"type": "roll", "count": 1})
    state.apply_chance({"dice": [1]})
    assert state.view(0)["pot"] == 0 and state.actors() == (1,) and state.scores() == [0, 0]


def test_bank_keeps_the_pot() -> None:
    state = get_game("pig").new_state(2, {}, bytes(32))
    state.apply_action(0, {"type": "roll", "count": 2})
    state.apply_chance({"dice": [6, 5]})
    state.apply_action(0, {"type": "bank"})
    assert state.scores() == [11, 0] and state.actors() == (1,)


def test_three_dice_are_not_a_roll() -> None:
    state = get_game("pig").new_state(2, {}, bytes(32))
    with pytest.raises(IllegalAction):
        state.apply_action(0, {"type": "roll", "count": 3})
