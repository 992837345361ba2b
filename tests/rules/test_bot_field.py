"""The strong Qwixx bot wins at least its fair share against simple policies (issue 33).

Seeded games (bench/bot_field.py), so the shares are the same on every run. The full
field at 1-5 seats is the benchmark (`python -m bench.bot_field`, docs/bots.md); this
plays the three policies strong does least well against, in 2 and 3 seats, to stay fast.
Before issue 33 strong won 46 % of these duels and 13 % of the 3-seat games against
skipper.
"""

from __future__ import annotations

import pytest

from bench.bot_field import play_match

GAMES = 200


@pytest.mark.parametrize("seats", [2, 3])
@pytest.mark.parametrize("opponent", ["skipper", "nopenalty", "closer"])
def test_strong_qwixx_wins_its_fair_share(opponent: str, seats: int) -> None:
    match = play_match("qwixx", "strong", opponent, seats, GAMES)
    print(f"strong against {opponent} x{seats - 1}: {match.share:.1%} of {GAMES} games")
    assert match.share >= 1 / seats, match
