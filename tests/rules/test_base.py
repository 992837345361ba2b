"""Options, presets, seat counts and the registry: the shared parts of every game."""

from __future__ import annotations

import pytest

from dicehall.rules import InvalidOptions, UnknownGame, all_games, game_names, get_game
from dicehall.rules.base import Option


def test_every_game_is_registered_by_name() -> None:
    assert {"qwinto", "qwixx"} <= set(game_names())
    for game in all_games():
        assert get_game(game.name) is game
        assert 1 <= game.min_seats <= game.max_seats <= 6
        described = game.describe()
        assert described["name"] == game.name
        assert [o["name"] for o in described["options"]] == [o.name for o in game.options]


def test_unknown_game() -> None:
    with pytest.raises(UnknownGame):
        get_game("chess")


def test_options_resolve_defaults_then_preset_then_explicit() -> None:
    opts = (
        Option("fast", False, "a switch"),
        Option("count", 4, "a number", low=1, high=10),
        Option("mode", "a", "a choice", choices=("a", "b")),
    )
    from dicehall.rules.base import Game

    g = Game("t", "T", 1, 2, state_class=object, options=opts, presets={"p": {"count": 5}})  # type: ignore[arg-type]
    assert g.resolve_options() == {"fast": False, "count": 4, "mode": "a"}
    assert g.resolve_options(preset="p") == {"fast": False, "count": 5, "mode": "a"}
    assert g.resolve_options({"count": 7}, preset="p")["count"] == 7
    for bad in (
        {"fast": 1},
        {"count": True},
        {"count": 0},
        {"count": 11},
        {"count": "4"},
        {"mode": "c"},
        {"mode": 1},
        {"nope": 1},
    ):
        with pytest.raises(InvalidOptions):
            g.resolve_options(bad)
    with pytest.raises(InvalidOptions):
        g.resolve_options(preset="official")
    with pytest.raises(InvalidOptions):
        g.resolve_options(["count"])  # type: ignore[arg-type]


def test_official_presets_follow_rules_md() -> None:
    assert get_game("qwinto").resolve_options(preset="official")["reroll"] is True
    assert get_game("qwixx").resolve_options(preset="official")["lock_after"] == 5
    assert get_game("qwinto").resolve_options()["reroll"] is False
    assert get_game("qwixx").resolve_options()["lock_after"] == 4


def test_seat_counts() -> None:
    for game in all_games():
        for bad in (0, game.max_seats + 1, True, "2", 2.0):
            with pytest.raises(InvalidOptions):
                game.new_state(bad)  # type: ignore[arg-type]
