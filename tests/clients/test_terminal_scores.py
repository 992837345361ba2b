"""`dicehall play` keeps the scores and the active seat from the room's events alone: after
every event of whole games (random moves, some windows left to time out), they are the
engine's own."""

from __future__ import annotations

from random import Random
from typing import Any

import pytest

from dicehall.clients.terminal_scores import Scoreboard
from dicehall.rules import as_wire, game_names, get_game
from dicehall.rules.base import State

GAMES = [
    ("qwinto", 3, {}),
    ("qwinto", 2, {"reroll": True}),
    ("qwixx", 4, {}),
    ("yamb", 2, {}),
    ("yamb", 2, {"mode": "simultaneous"}),
    ("qwirkle", 3, {}),
]
GAMES += [  # a game added since: its `Tally` is checked all the same
    (name, get_game(name).min_seats, {})
    for name in game_names()
    if name not in {g for g, _, _ in GAMES}
]


def active(state: State) -> Any:
    view = state.view(None)
    return view.get("active", view.get("turn"))


@pytest.mark.parametrize(("game", "seats", "options"), GAMES)
@pytest.mark.parametrize("seed", [1, 2])
def test_the_events_alone_give_the_scores_and_whose_turn(
    game: str, seats: int, options: dict[str, Any], seed: int
) -> None:
    state = get_game(game).new_state(seats, options, seed=bytes([seed]) * 32)
    board = Scoreboard(game, seats, state.options)
    rng = Random(seed)
    steps = 0
    while not state.is_over():
        if state.chance_pending():
            _, events = state.resolve_chance()
        else:
            seat = state.actors()[0]
            if rng.random() < 0.15:
                events = state.apply_timeout(seat)
            else:
                events = state.apply_action(seat, rng.choice(state.legal_actions(seat)))
        for event in as_wire(events):  # (as a member sees them: a private event's public form)
            board.feed(event)
        assert board.scores() == state.scores(), (steps, events)
        if not state.is_over():
            assert board.active == active(state), (steps, events)
        steps += 1
    assert steps > 20
