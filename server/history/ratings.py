"""Ratings: openskill's Plackett-Luce model, one rating per identity per ladder.

Why Plackett-Luce (Weng and Lin's Bayesian approximation, as openskill implements it): it
rates a finish order of any number of seats, ties included, from one game, which is what
a dice game of 2 to 6 seats ends with; Elo rates pairs. A rating is (mu, sigma); what a
leaderboard orders by is the conservative `mu - 3 sigma` (openskill's ordinal), so a new
identity starts at 0 and climbs as its games make the model sure of it.

Pure: no database, no I/O (the store reads the ratings, asks this module, writes back).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

from ..connections.identity import HOUSE

MODEL = PlackettLuce()
"""openskill's defaults: mu 25, sigma 25/3, beta 25/6 (a new rating's ordinal is 0)."""


@dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """What leaderboards sort by: mu minus three sigma."""
        return self.mu - 3 * self.sigma


NEW = Rating(MODEL.mu, MODEL.sigma)


def ladder_of(
    game: str,
    options: Mapping[str, object],
    defaults: Mapping[str, object],
    presets: Mapping[str, Mapping[str, object]],
) -> str | None:
    """The ladder a game's result counts on: the game's name under its default options,
    `game:preset` under a preset's rules (e.g. `qwixx:official`), None under any other
    mix of options (house rules are not comparable with anyone's: not rated)."""
    if dict(options) == dict(defaults):
        return game
    for name, preset in sorted(presets.items()):
        if dict(options) == {**defaults, **preset}:
            return f"{game}:{name}"
    return None


def places(scores: Sequence[int]) -> list[int]:
    """Finishing places from final scores, 1 the best; equal scores share a place."""
    return [1 + sum(other > score for other in scores) for score in scores]


def rate(before: Sequence[Rating], finish: Sequence[int]) -> list[Rating]:
    """Every seat's rating after one game, from their ratings before it and their places
    (`places`). One seat alone is not rated: the caller never asks (solitaire)."""
    if len(before) < 2 or len(before) != len(finish):
        raise ValueError("a rated game has two seats or more, one place each")
    teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in before]
    after = MODEL.rate(teams, ranks=[float(p) for p in finish])
    return [Rating(team[0].mu, team[0].sigma) for team in after]


NEWCOMER_GAMES = 10
"""Rated games on a ladder before a player's losses earn anyone anything there: a newcomer
may be anyone, a throw-away identity made to lose included (docs/history.md)."""


def shared(players: Sequence[str | None]) -> bool:
    """Whether a person (a player key) holds two or more seats: such a game rates nobody,
    since one person's seats are not rivals and their order says nothing of the others.
    House bots are exempt: each of their seats plays on its own (`rate_game`)."""
    people = [p for p in players if p is not None and not p.startswith(HOUSE)]
    return len(people) != len(set(people))


def rate_game(
    players: Sequence[str | None],
    before: Sequence[Rating],
    games: Sequence[int],
    finish: Sequence[int],
) -> list[Rating | None]:
    """Each seat's rating after a game (None: the seat is not rated), from its player
    (None: no key), rating and rated games on the ladder before it, and its place.

    - A player in several seats (a house bot a host seated twice) is not rated: its seats
      count for the others, each at its rating; a person in several seats rates nobody
      (`shared`: the caller does not ask).
    - Each seat is rated against the seats that are not newcomers (`NEWCOMER_GAMES`) and the
      newcomers that finished ahead of it: beating a newcomer earns nothing (a farm of
      throw-away identities made to lose moves no rating), losing to one costs as usual.
    """
    counts = Counter(p for p in players if p is not None)
    newcomer = [n < NEWCOMER_GAMES for n in games]
    # Seats rated against the same seats share one model update (all of them, when no
    # newcomer plays): a save pays one `rate` per distinct set, not one per seat.
    moved: dict[tuple[int, ...], list[Rating]] = {}
    after: list[Rating | None] = []
    for i, player in enumerate(players):
        if player is not None and counts[player] > 1:
            after.append(None)
            continue
        against = tuple(
            j for j in range(len(players)) if j == i or not newcomer[j] or finish[j] < finish[i]
        )
        if len(against) < 2:
            after.append(before[i])  # (rated, and nothing it met moves it)
            continue
        if against not in moved:
            moved[against] = rate([before[j] for j in against], [finish[j] for j in against])
        after.append(moved[against][against.index(i)])
    return after
