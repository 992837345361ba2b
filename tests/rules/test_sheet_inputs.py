"""The hand-filled sheet inputs (`dicehall sheet GAME FILE`) leave out the same fields the same
way: Qwixx, like Qwinto and Yamb, needs only its rows (docs/games/qwixx.md)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dicehall.rules import InvalidState, get_game
from dicehall.rules.qwixx import score_sheet

WORKED: dict[str, Any] = {
    "name": "Jane Doe",
    "rows": {"red": [9, 10, 12], "yellow": [3, 6, 7], "green": [9, 7, 5, 4, 2], "blue": [11, 5]},
    "locked": ["green"],
    "failed": 2,
}
EMPTY_ROWS: dict[str, list[int]] = {"red": [], "yellow": [], "green": [], "blue": []}
QWINTO_ROWS = {"red": [None] * 10, "yellow": [None] * 10, "blue": [None] * 10}

# The field each game's sheet cannot do without, and a valid value of it.
BODY: dict[str, tuple[str, Any]] = {
    "qwinto": ("rows", QWINTO_ROWS),
    "qwixx": ("rows", EMPTY_ROWS),
    "yamb": ("columns", {}),
}


@pytest.mark.parametrize(
    "defaults",
    [{"name": ""}, {"failed": 0}, {"locked": []}, {"name": "", "failed": 0, "locked": []}],
)
def test_a_left_out_field_takes_its_default(defaults: dict[str, Any]) -> None:
    """Leaving a field out scores and draws exactly as writing its default."""
    given = {**copy.deepcopy(WORKED), **defaults}
    left_out = {k: v for k, v in given.items() if k not in defaults}
    assert score_sheet(left_out) == score_sheet(given)


def test_the_rows_alone_are_a_sheet() -> None:
    points, text = score_sheet({"rows": WORKED["rows"]})
    assert points == 26 + 10 - 6  # no failed throws, green 5 marks without its lock
    assert text.splitlines()[0] == "Player name:                Points: 30"
    assert text.splitlines()[-1] == "       Failed throws:"
    assert text.splitlines()[6].endswith(" U")  # green drawn unlocked


@pytest.mark.parametrize("game", sorted(BODY))
def test_every_sheet_input_takes_its_body_alone(game: str) -> None:
    """The same minimal input in the three games: no name, and (Qwinto, Qwixx) no failed throw."""
    key, body = BODY[game]
    score_of = get_game(game).score_sheet
    assert score_of is not None
    points, text = score_of({key: copy.deepcopy(body)})
    assert points == 0
    assert text.splitlines()[0].split() == ["Player", "name:", "Points:", "0"]


@pytest.mark.parametrize(
    ("game", "key", "value"),
    [
        (game, key, value)
        for game in sorted(BODY)
        for key, value in [("name", None), ("name", 5), ("failed", None), ("failed", "2")]
        if not (game == "yamb" and key == "failed")  # a Yamb sheet has no failed throws
    ],
)
def test_a_given_optional_field_must_be_valid(game: str, key: str, value: Any) -> None:
    """null is not a left-out field, in any game: the same kind of refusal everywhere."""
    body_key, body = BODY[game]
    score_of = get_game(game).score_sheet
    assert score_of is not None
    with pytest.raises(InvalidState) as err:
        score_of({body_key: copy.deepcopy(body), key: value})
    assert f"'{key}'" in err.value.message


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"name": "A"},
        {"name": "A", "locked": [], "failed": 0},
        {"rows": None},
        {"rows": EMPTY_ROWS, "locked": None},
        {"rows": EMPTY_ROWS, "locked": ["green"]},
        {"rows": EMPTY_ROWS, "colour": []},
    ],
)
def test_qwixx_bad_inputs_are_refused_naming_the_game(data: dict[str, Any]) -> None:
    with pytest.raises(InvalidState) as err:
        score_sheet(data)
    assert err.value.message.startswith("qwixx sheet: ")


def test_a_missing_rows_field_is_named() -> None:
    with pytest.raises(InvalidState, match="'rows'"):
        score_sheet({"name": "A", "failed": 0})
