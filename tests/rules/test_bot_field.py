"""The strong Qwixx bot wins at least its fair share against simple policies (issue 33).

Seeded games (bench/bot_field.py), so the shares are the same on every run. The full
field at 1-5 seats is the benchmark (`python -m bench.bot_field`, docs/bots.md); this
plays the three policies strong does least well against, in 2 and 3 seats, to stay fast.
Before issue 33 strong won 46 % of these duels and 13 % of the 3-seat games against
skipper.
"""

from __future__ import annotations

import re
from pathlib import Path
from random import Random

import pytest

from bench.bot_field import Skipper, play_match
from dicehall.rules import get_game

GAMES = 200
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("seats", [2, 3])
@pytest.mark.parametrize("opponent", ["skipper", "nopenalty", "closer"])
def test_strong_qwixx_wins_its_fair_share(opponent: str, seats: int) -> None:
    match = play_match("qwixx", "strong", opponent, seats, GAMES)
    print(f"strong against {opponent} x{seats - 1}: {match.share:.1%} of {GAMES} games")
    assert match.share >= 1 / seats, match


def test_the_field_skipper_is_the_one_in_docs() -> None:
    """The issue's opponent is docs/bots.md's example: the bench's copy decides alike."""
    text = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
    [code] = re.findall(r"```python\n(.*?)\n```", text, flags=re.DOTALL)
    namespace: dict[str, object] = {}
    exec(compile(code, "docs/bots.md", "exec"), namespace)
    documented = namespace["Skipper"]("qwixx")  # type: ignore[operator]
    ours = Skipper("qwixx")
    rng = Random(7)
    state = get_game("qwixx").new_state(2, seed=bytes(32))
    decisions = 0
    while not state.is_over():
        if state.chance_pending():
            state.resolve_chance()
            continue
        seat = state.actors()[0]
        view, legal = state.view(seat), state.legal_actions(seat)
        assert ours.decide(view, legal) == documented.decide(view, legal)
        state.apply_action(seat, rng.choice(legal))
        decisions += 1
    assert decisions > 20
