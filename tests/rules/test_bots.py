"""Bot policies (rules/bots): the registry, legality everywhere, and what each bot is for.

Strength is measured by `dicehall arena` (docs/bots.md), never asserted here; these tests
check that every bot only ever answers with one of its legal actions, on positions that
random play reaches in every game, and that each policy does what its docstring says on
hand-built positions.
"""

from __future__ import annotations

from random import Random
from typing import Any

import pytest

from dicehall.rules import InvalidOptions, get_game
from dicehall.rules.base import JSON, State
from dicehall.rules.bots import Bot, bot_names, get_bot
from dicehall.rules.bots import base as bots_base
from dicehall.rules.bots.qwirkle import Replies, best_points, unseen_tiles
from dicehall.rules.bots.qwixx import best_turn, table_for, value
from dicehall.rules.play import play_out
from dicehall.rules.qwirkle import score_placement
from dicehall.rules.qwirkle.board import tile_code
from dicehall.rules.qwirkle.moves import best_placement, placements

KINDS = ("random", "greedy", "strong")
CONFIGS: list[tuple[str, int, str | None]] = [
    ("qwinto", 1, None),
    ("qwinto", 3, "official"),
    ("qwixx", 1, "official"),
    ("qwixx", 3, None),
    ("qwirkle", 2, None),
    ("qwirkle", 3, None),
    ("yamb", 1, None),
    ("yamb", 2, None),
]


def test_every_game_has_every_kind() -> None:
    for game in ("qwinto", "qwirkle", "qwixx", "yamb"):
        assert bot_names(game) == ["random", "greedy", "strong"]
        for kind in KINDS:
            bot = get_bot(kind, game, seed=1)
            assert bot.kind == kind and bot.game == game
    assert bot_names() == ["random", "greedy", "strong"]


def test_unknown_kinds_are_refused_with_the_choices() -> None:
    with pytest.raises(InvalidOptions, match=r"no bot 'clever' for qwixx.*greedy"):
        get_bot("clever", "qwixx")
    with pytest.raises(InvalidOptions):
        get_bot("strong", "chess")


def test_a_kind_cannot_be_registered_twice_for_a_game() -> None:
    class Again(Bot):
        kind = "strong"
        games = frozenset({"qwixx"})

        def decide(self, view: JSON, legal: list[JSON]) -> JSON:
            return legal[0]

    with pytest.raises(ValueError, match="registered twice"):
        bots_base.register(Again)
    assert type(get_bot("strong", "qwixx")).__name__ == "QwixxStrong"


@pytest.mark.parametrize(("game", "seats", "preset"), CONFIGS)
def test_bots_only_choose_legal_actions(game: str, seats: int, preset: str | None) -> None:
    """Random play drives the game (so bots meet positions they would never steer to, and
    their caches see turns they did not play); at every decision all three kinds are asked
    and must each return an element of `legal`."""
    rng = Random(f"{game}/{seats}")
    for g in range(2):
        state = get_game(game).new_state(seats, seed=bytes([g, seats]) * 16, preset=preset)
        bots = {
            (kind, seat): get_bot(kind, game, seed=f"{g}/{seat}")
            for kind in KINDS
            for seat in range(seats)
        }
        decisions = 0

        def ask_all(state: State, seat: int, bots: dict[tuple[str, int], Bot] = bots) -> JSON:
            nonlocal decisions
            legal = state.legal_actions(seat)
            view = state.view(seat)
            answers = {kind: bots[kind, seat].decide(view, legal) for kind in KINDS}
            for kind, action in answers.items():
                assert action in legal, f"{kind} chose {action!r} in {game}"
            decisions += 1
            # Mostly random, sometimes a bot's own choice: both kinds of history.
            return answers[rng.choice(KINDS)] if rng.random() < 0.3 else rng.choice(legal)

        play_out(state, ask_all)
        assert decisions > 10


def play(state: State, bots: list[Bot]) -> None:
    play_out(state, lambda s, seat: bots[seat].decide(s.view(seat), s.legal_actions(seat)))


# --- greedy: the immediately best-scoring action ------------------------------------------


def qwixx_view(rows: dict[str, list[int]], dice: dict[str, int], phase: str = "white") -> JSON:
    state = get_game("qwixx").new_state(1, seed=bytes(32))
    view = state.view(0)
    view["sheets"][0]["rows"] = rows
    view["dice"] = dice
    view["phase"] = phase
    return view


def test_qwixx_greedy_marks_where_the_mark_adds_most() -> None:
    rows = {"red": [2, 3, 4], "yellow": [], "green": [12], "blue": []}
    legal = [
        {"type": "mark", "row": "red", "number": 7},
        {"type": "mark", "row": "yellow", "number": 7},
        {"type": "mark", "row": "green", "number": 7},
        {"type": "pass"},
    ]
    view = qwixx_view(rows, {"white1": 3, "white2": 4})
    for seed in range(5):
        assert get_bot("greedy", "qwixx", seed).decide(view, legal) == legal[0]


def test_qwirkle_greedy_plays_a_highest_scoring_placement() -> None:
    game = get_game("qwirkle")
    state = game.new_state(2, seed=bytes(range(32)))
    bot = get_bot("greedy", "qwirkle", seed=3)
    placed = 0
    while not state.is_over() and placed < 30:
        if state.chance_pending():
            state.resolve_chance()
            continue
        seat = state.actors()[0]
        action = bot.decide(state.view(seat), state.legal_actions(seat))
        best = best_placement(state.board, state.hands[seat])
        if best is not None and state.board.cells:
            assert action["type"] == "place"
            tiles = [(t["x"], t["y"], tile_code(t["color"], t["shape"])) for t in action["tiles"]]
            assert score_placement(state.board, tiles) == best[0]
            placed += 1
        state.apply_action(seat, action)
    assert placed == 30


# --- strong Qwixx -----------------------------------------------------------------------------


def test_qwixx_values_prefer_more_marks_and_fewer_skips() -> None:
    """The learned table agrees with the game: at the same box more marks are worth more,
    and with the same marks a row further left (fewer boxes skipped) is worth more. (With
    three failed throws a barely started row is rare in play and its entries are noisy.)"""
    table = table_for(5)
    for failed in range(3):
        open_rows = [(-1, 0), (-1, 0), (-1, 0)]
        for last in range(1, 9):
            for marks in range(1, last + 1):
                more = value([(last, marks + 1), *open_rows], 0, failed, table)
                fewer = value([(last, marks), *open_rows], 0, failed, table)
                assert more > fewer, (failed, last, marks)
        for marks in range(1, 5):
            left = value([(marks, marks), *open_rows], 0, failed, table)
            right = value([(marks + 4, marks), *open_rows], 0, failed, table)
            assert left > right, (failed, marks)


def test_qwixx_strong_never_takes_a_failed_throw_over_the_next_box() -> None:
    """With a mark available right after the last one of a row, failing is never best."""
    rng = Random(5)
    table = table_for(5)
    for _ in range(300):
        rows = [(-1, 0)] * 4
        dice = [rng.randint(1, 6) for _ in range(6)]
        white = dice[0] + dice[1]
        r = rng.randrange(4)
        box = white - 2 if r < 2 else 12 - white
        if box == 10:
            continue
        rows[r] = (box - 1, max(0, box)) if box > 0 else (-1, 0)
        _, (wr, _, cr, _) = best_turn(rows, 0, rng.randrange(4), dice, 5, table, active=True)
        assert wr >= 0 or cr >= 0


def test_qwixx_strong_locks_a_row_to_end_a_spent_game() -> None:
    """Red locked, yellow with eight marks before its last box, green and blue near their
    ends, three failed throws: locking yellow ends the game on 10 marks (55 points); going
    on has little left to win and risks the fourth failed throw."""
    table = table_for(5)
    rows = [(10, 9), (8, 8), (9, 5), (9, 5)]
    dice = [6, 6, 1, 1, 1, 1]  # white 12 locks yellow
    _, (wr, wb, _, _) = best_turn(rows, 0b0001, 3, dice, 5, table, active=True)
    assert (wr, wb) == (1, 10)


def test_qwixx_strong_remembers_its_white_mark_in_the_colour_window() -> None:
    """After marking in the white window, passing the colour window costs nothing."""
    game = get_game("qwixx")
    for seed in range(40):
        state = game.new_state(1, seed=bytes([seed]) * 32, preset="official")
        bot = get_bot("strong", "qwixx")
        state.resolve_chance()
        white = bot.decide(state.view(0), state.legal_actions(0))
        state.apply_action(0, white)
        if state.actors() != (0,) or white["type"] != "mark":
            continue
        colour = bot.decide(state.view(0), state.legal_actions(0))
        if colour["type"] == "pass":
            return  # passed without fear of a failed throw: the memory worked
    pytest.fail("no seed gave a white mark followed by a colour pass")


# --- strong Qwinto, Yamb ------------------------------------------------------------------------


def test_qwinto_strong_places_a_high_number_to_the_right() -> None:
    state = get_game("qwinto").new_state(1, seed=bytes(32))
    state.apply_action(0, {"type": "roll", "dice": ["red", "yellow", "blue"]})
    state.apply_chance({"dice": {"red": 6, "yellow": 6, "blue": 5}})
    action = get_bot("strong", "qwinto").decide(state.view(0), state.legal_actions(0))
    assert action["type"] == "enter" and action["box"] >= 7


def test_qwinto_strong_rolls_the_dice_its_open_boxes_need() -> None:
    """Every row filled but low boxes: only a single die can still be entered."""
    game = get_game("qwinto")
    state = game.new_state(1, seed=bytes(32))
    data: dict[str, Any] = state.to_dict()
    rows = {
        "red": [None, None, 7, None, 8, 9, 10, 11, 12, 13],
        "yellow": [None, None, None, 8, 9, None, 10, 11, 12, 14],
        "blue": [None, None, None, 9, None, 10, 11, 12, 13, 15],
    }
    data["sheets"][0]["rows"] = rows
    state = game.state_from_dict(data)
    action = get_bot("strong", "qwinto").decide(state.view(0), state.legal_actions(0))
    assert action["type"] == "roll" and len(action["dice"]) == 1


def test_yamb_strong_keeps_six_sixes_for_a_big_row() -> None:
    state = get_game("yamb").new_state(1, seed=bytes(32))
    state.apply_action(0, {"type": "roll", "hold": []})
    state.apply_chance({"seat": 0, "dice": [6, 6, 6, 6, 6, 6]})
    action = get_bot("strong", "yamb").decide(state.view(0), state.legal_actions(0))
    assert action.get("row") in ("6", "royal", "yamb", "poker", "max"), action
    assert action["type"] in ("write", "call")


def test_yamb_strong_plays_a_whole_game() -> None:
    state = get_game("yamb").new_state(1, seed=bytes([9]) * 32)
    play(state, [get_bot("strong", "yamb", seed=0)])
    assert state.is_over() and state.scores()[0] > 0


# --- strong Qwirkle: its fast best-reply search equals the engine's generator ------------------


def test_qwirkle_best_points_equals_the_engine_best_placement() -> None:
    """Random hands on the boards of three greedy games, and on those boards after a random
    placement: the bot's board facts (built whole, or derived by `after`, with or without
    its index) give exactly the points of the engine's best placement, the engine's
    placements (in the engine's order when built whole: both walk the same `Frontier`),
    and the engine's best placement."""
    game = get_game("qwirkle")
    rng = Random(11)
    checked = 0
    for g in range(3):
        state = game.new_state(2, seed=bytes([g, 1]) * 16)
        bots = [get_bot("greedy", "qwirkle", seed=s) for s in range(2)]

        def check_then_decide(state: State, seat: int, bots: list[Bot] = bots) -> JSON:
            nonlocal checked
            pool = unseen_tiles(state.board, state.hands[seat])
            replies = Replies(state.board)
            for _ in range(3):
                hand = rng.sample(pool, min(len(pool), rng.randint(1, 6)))
                engine = best_placement(state.board, hand)
                expected = 0 if engine is None else engine[0]
                assert replies.best(hand) == expected == best_points(state.board, hand)
                assert replies.moves(hand) == placements(state.board, hand)
                move = replies.best_move(hand)
                assert move == engine
                if move is not None:
                    assert score_placement(state.board, move[1]) == expected
                checked += 1
            moves = placements(state.board, state.hands[seat])
            if moves and state.board.cells:
                _, tiles = rng.choice(moves)
                derived = replies.after(tiles)
                lean = Replies(state.board, lines=False).after(tiles, lines=False)
                after = state.board.copy()
                after.put(tiles)
                whole = Replies(after)
                assert sorted(derived.intervals) == sorted(whole.intervals)
                assert derived.singles == whole.singles
                for _ in range(3):
                    hand = rng.sample(pool, min(len(pool), rng.randint(1, 6)))
                    engine = best_placement(after, hand)
                    expected = 0 if engine is None else engine[0]
                    assert derived.best(hand) == expected
                    generated = sorted(placements(after, hand))
                    for facts in (derived, lean):
                        assert sorted(facts.moves(hand)) == generated
                        move = facts.best_move(hand)
                        assert (0 if move is None else move[0]) == expected
                # Once more: a derived board derives again.
                further = placements(after, rng.sample(pool, min(len(pool), 6)))
                if further:
                    _, more = rng.choice(further)
                    again = after.copy()
                    again.put(more)
                    assert sorted(derived.after(more).intervals) == sorted(Replies(again).intervals)
            return bots[seat].decide(state.view(seat), state.legal_actions(seat))

        play_out(state, check_then_decide)
    assert checked > 100


def test_qwirkle_strong_goes_out_when_that_wins() -> None:
    """Bag empty, ahead: a placement that empties the hand ends the game with 6 more."""
    game = get_game("qwirkle")
    state = game.new_state(2, seed=bytes(32))
    data: dict[str, Any] = state.to_dict()
    red = [tile_code("red", s) for s in ("circle", "square", "diamond")]
    blue_cross = tile_code("blue", "cross")
    board = [[0, 0, red[0]], [1, 0, red[1]]]
    used = [red[0], red[1], red[2], blue_cross]
    bag = [3] * 36
    for code in used:
        bag[code] -= 1
    hands = [[red[2]], [blue_cross]]
    # Everything else is on the board, out of reach: the bag stays empty.
    far = 0
    for code in range(36):
        while bag[code]:
            bag[code] -= 1
            board.append([100 + far // 6 * 7, 100 + far % 6, code])
            far += 1
    data.update(
        board=board,
        hands=hands,
        bag=bag,
        points=[50, 40],
        dealing=False,
        draw_count=0,
        turn=0,
        starter=0,
        start_size=1,
    )
    state = game.state_from_dict(data)
    action = get_bot("strong", "qwirkle").decide(state.view(0), state.legal_actions(0))
    assert action["type"] == "place" and len(action["tiles"]) == 1
