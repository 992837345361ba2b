"""One suite over every registered game: the contract of rules/base.py, checked by playouts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from random import Random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicehall.rules import (
    Answered,
    Applied,
    IllegalAction,
    Private,
    Public,
    RuleEvent,
    State,
    TimedOut,
    all_games,
    as_wire,
    get_game,
    held_answer,
)
from dicehall.rules.base import JSON

GAMES = [g.name for g in all_games()]


def seat_counts(name: str) -> list[int]:
    g = get_game(name)
    return sorted({g.min_seats, min(2, g.max_seats), g.max_seats})


def nodes(value: Any) -> Iterator[Any]:
    """Every dict and list inside a JSON value, the value itself included."""
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from nodes(v)
    elif isinstance(value, list):
        yield value
        for v in value:
            yield from nodes(v)


def garbage_actions(state: State, seat: int, rng: Random) -> list[Any]:
    """Malformed actions and legal-looking actions bent out of shape."""
    out: list[Any] = [
        None,
        42,
        "pass",
        [],
        {},
        {"type": None},
        {"type": "no-such-action"},
        {"type": "pass", "extra": 1},
    ]
    legal = state.legal_actions(seat)
    for action in rng.sample(legal, min(4, len(legal))):
        for key in action:
            if key == "type":
                continue
            for bad in (None, True, -1, 10**9, "x", [], {}, [None], [{"x": 1}]):
                out.append({**action, key: bad})
            out.append({k: v for k, v in action.items() if k != key})
    return out


def check_invariants(state: State, rng: Random) -> None:
    game = get_game(state.game_name)
    data = state.to_dict()
    json.dumps(data)
    again = game.state_from_dict(json.loads(json.dumps(data)))
    assert again.to_dict() == data
    assert again == state
    assert state.clone().to_dict() == data

    over = state.is_over()
    actors = state.actors()
    if over:
        assert actors == ()
        assert not state.chance_pending()
    elif state.chance_pending():
        assert actors == ()
    else:
        assert actors, "nobody may act, no chance pending, and the game is not over"
    assert len(state.scores()) == state.seats

    viewers: list[int | None] = [*range(state.seats), None]
    seed_hex = state.seed.hex()
    for v in viewers:
        view = state.view(v)
        text = json.dumps(view)
        assert seed_hex not in text, "a view contains the secret seed"
        own = state.hidden(v) if v is not None else []
        inside = list(nodes(view))
        for s in range(state.seats):
            if s == v:
                continue
            for secret in state.hidden(s):
                if secret in own:
                    continue
                assert secret not in inside, f"view of {v} leaks {secret} of seat {s}"
    render_view = get_game(state.game_name).render_view
    assert render_view is not None, "every game draws its sheets from a view"
    for s in range(state.seats):
        text = state.render(s, f"Seat {s}")
        assert render_view(state.view(s), s, f"Seat {s}") == text

    for seat in range(state.seats):
        if seat not in actors:
            with pytest.raises(IllegalAction):
                state.clone().apply_action(seat, {"type": "pass"})
            continue
        legal = state.legal_actions(seat)
        assert legal, f"seat {seat} must act but has no legal action"
        for action in garbage_actions(state, seat, rng):
            probe = state.clone()
            try:
                probe.apply_action(seat, action)
            except IllegalAction:
                assert probe.to_dict() == data, f"illegal {action!r} changed the state"
    assert state.to_dict() == data


def check_events(state: State, events: list[RuleEvent]) -> None:
    """Events are typed, their JSON a map with a "type", and none shows a seat's secret
    to another: what one seat alone may see only ever comes in a `Private`, as `mine`."""
    hidden = [state.hidden(s) for s in range(state.seats)]
    for event in events:
        assert isinstance(event, Public | Applied | TimedOut | Answered | Private), event
        forms: dict[int | None, JSON] = {None: event.wire()}  # (what everyone else sees)
        if isinstance(event, Private):
            forms[event.seat] = event.mine.wire()
        for viewer, seen in forms.items():
            assert isinstance(seen, dict) and isinstance(seen.get("type"), str)
            json.dumps(seen)
            inside = list(nodes(seen))
            own = hidden[viewer] if viewer is not None else []
            for s, secrets in enumerate(hidden):
                for secret in secrets if s != viewer else ():
                    if secret not in own:
                        assert secret not in inside, f"{event} shows {secret} of seat {s}"


def check_held_back(before: State, after: State, seat: int, events: list[RuleEvent]) -> None:
    """`apply_action` says an answer is held back (rules/base.py) exactly when the server
    may keep it back: the seat only answered and its window stays open, same id; and then
    nobody else sees anything change but who has answered."""
    only_answered = len(events) == 1 and isinstance(events[0], Answered)
    stays_open = (
        after.window() == before.window() and not after.is_over() and not after.chance_pending()
    )
    held = held_answer(events)
    assert (held is not None) == (only_answered and stays_open), events
    if held is None:
        return
    assert held.seat == seat
    assert after.actors() == tuple(s for s in before.actors() if s != seat)
    assert after.scores() == before.scores()
    for v in [*(s for s in range(after.seats) if s != seat), None]:
        was, now = before.view(v), after.view(v)
        changed = {k for k in was.keys() | now.keys() if was.get(k) != now.get(k)}
        assert changed <= {"answered", "actors"}, f"a held answer changed {changed} for {v}"


def play(state: State, rng: Random, timeout_rate: float, check: bool, max_steps: int) -> int:
    """A random playout that checks as it goes. Its own loop, not `rules.play.play_out`:
    it samples chance and applies it in two steps (`sample_chance` must be pure), picks any
    actor of a shared window, not the first, and checks the invariants between steps."""
    steps = 0
    while not state.is_over():
        assert steps < max_steps, "the game did not end"
        if check and steps % max(3, steps // 25) == 0:  # dense early, sparser in long games
            check_invariants(state, rng)
        if state.chance_pending():
            outcome = state.sample_chance()
            assert state.sample_chance() == outcome, "sample_chance must be pure"
            events = state.apply_chance(outcome)
        else:
            seat = rng.choice(state.actors())
            before = state.clone()
            if rng.random() < timeout_rate:
                events = state.apply_timeout(seat)
            else:
                legal = state.legal_actions(seat)
                action = rng.choice(legal)
                events = state.apply_action(seat, action)
                for other in legal[:3]:
                    before.clone().apply_action(seat, other)
                check_held_back(before, state, seat, events)
        if check:
            check_events(state, events)
        steps += 1
    if check:
        check_invariants(state, rng)
    assert len(state.winners()) >= 1
    return steps


@pytest.mark.parametrize("name", GAMES)
def test_seeded_playouts_keep_every_invariant(name: str) -> None:
    game = get_game(name)
    for seats in seat_counts(name):
        for k in range(3):
            rng = Random(f"{name}/{seats}/{k}")
            state = game.new_state(seats, seed=bytes([k]) * 32)
            play(state, rng, timeout_rate=0.1, check=True, max_steps=50_000)


@pytest.mark.parametrize("name", GAMES)
def test_presets_play_to_the_end(name: str) -> None:
    game = get_game(name)
    for preset in game.presets:
        state = game.new_state(game.max_seats, seed=b"p" * 32, preset=preset)
        play(state, Random(preset), timeout_rate=0.05, check=True, max_steps=50_000)


@pytest.mark.parametrize("name", GAMES)
def test_abandoned_game_ends_by_timeouts_alone(name: str) -> None:
    game = get_game(name)
    state = game.new_state(game.max_seats, seed=b"t" * 32)
    play(state, Random(0), timeout_rate=1.0, check=False, max_steps=200_000)
    assert state.is_over()


@pytest.mark.parametrize("name", GAMES)
def test_same_seed_same_game(name: str) -> None:
    game = get_game(name)

    def run() -> JSON:
        state = game.new_state(2 if game.max_seats >= 2 else 1, seed=b"s" * 32)
        play(state, Random(7), timeout_rate=0.1, check=False, max_steps=200_000)
        return state.to_dict()

    assert run() == run()


@pytest.mark.parametrize("name", GAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_driven_playouts(name: str, data: st.DataObject) -> None:
    game = get_game(name)
    seats = data.draw(st.integers(game.min_seats, game.max_seats), label="seats")
    seed = data.draw(st.binary(min_size=32, max_size=32), label="seed")
    state = game.new_state(seats, seed=seed)
    rng = Random(data.draw(st.integers(0, 2**32), label="choices"))
    play(
        state,
        rng,
        timeout_rate=data.draw(st.sampled_from([0.0, 0.2])),
        check=True,
        max_steps=50_000,
    )


HELD_ANSWER_GAMES = ["qwinto", "qwixx"]
"""Games whose shared windows hold answers until every seat is in (docs/rules.md)."""


@pytest.mark.parametrize("name", HELD_ANSWER_GAMES)
def test_held_answers_do_not_change_other_views(name: str) -> None:
    """Non-interference: while a window is open, what one seat answered is invisible."""
    game = get_game(name)
    state = game.new_state(game.max_seats, seed=b"h" * 32)
    rng = Random(3)
    checked = 0
    for _ in range(3000):
        if state.is_over():
            break
        if state.chance_pending():
            state.resolve_chance()
            continue
        actors = state.actors()
        seat = actors[0]
        legal = state.legal_actions(seat)
        if len(actors) > 1 and len(legal) > 1:
            a, b = state.clone(), state.clone()
            ea, eb = a.apply_action(seat, legal[0]), b.apply_action(seat, legal[-1])
            for v in [x for x in range(state.seats) if x != seat] + [None]:
                assert a.view(v) == b.view(v)
                assert as_wire(ea, v) == as_wire(eb, v)
            checked += 1
        state.apply_action(seat, rng.choice(legal))
    assert checked > 10, "too few shared windows were seen to check anything"


@pytest.mark.parametrize("name", GAMES)
def test_bad_options_and_seats_are_refused(name: str) -> None:
    from dicehall.rules import InvalidOptions

    game = get_game(name)
    with pytest.raises(InvalidOptions):
        game.new_state(game.max_seats + 1)
    with pytest.raises(InvalidOptions):
        game.new_state(0)
    with pytest.raises(InvalidOptions):
        game.new_state(1, options={"no-such-option": 1})
    with pytest.raises(InvalidOptions):
        game.new_state(1, preset="no-such-preset")
