"""A strong bot against a field of simple policies, at 1-5 seats: win shares and mean scores.

Run: `.venv/bin/python -m bench.bot_field --game qwixx --seats 2,3 --games 400`.

Each match seats the bot under test (`--bot`, default `strong`) with N - 1 copies of one
field policy, for `--games` games; game k puts the tested bot in seat k % N (so it starts
as often as any other seat) and is seeded with sha256("dicehall-field/{seed}/{game}/{k}"),
so every policy meets the same deals. The share is the tested bot's part of the wins
(ties split); a fair share is 1/N. At 1 seat each policy and the bot play alone on the
same deals (the `opponent` column names who played, `mean` is its score). Qwixx has its
own field of hand-written policies (below); every other game is measured against
`greedy` and `random`.

The Qwixx field: what a person might do without a table of values.
- `skipper`: docs/bots.md's example: the mark that skips fewest boxes, if at most two.
- `skipper1`, `skipper3`: the same with at most one and at most three skipped boxes.
- `greedy`, `random`: the registered kinds.
- `nopenalty`: skipper, but the active seat marks its least-skipping mark rather than
  take a failed throw.
- `racer`: pushes the row with the most marks: any mark there that skips at most three,
  otherwise skipper; locks whenever it can.
- `closer`: skipper that locks whenever it can and, once it leads, marks any lock-ready
  row's last box at once to end the game.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dicehall.rules import JSON, State, get_game
from dicehall.rules.bots import Bot, get_bot
from dicehall.rules.play import play_out

ASCENDING = ("red", "yellow")


def skipped(view: JSON, action: JSON) -> int:
    """Boxes a Qwixx mark skips in its row of the seat's sheet."""
    marked = view["sheets"][view["you"]]["rows"][action["row"]]
    if action["row"] in ASCENDING:
        return int(action["number"]) - (marked[-1] if marked else 1) - 1
    return (marked[-1] if marked else 13) - int(action["number"]) - 1


def is_lock(action: JSON) -> bool:
    return action["type"] == "mark" and int(action["number"]) == (
        12 if action["row"] in ASCENDING else 2
    )


def passing(legal: list[JSON]) -> JSON:
    return next(a for a in legal if a["type"] == "pass")


class Skipper(Bot):
    """Marks the number that skips the fewest boxes, if it skips at most `limit`."""

    kind = "skipper"
    games = frozenset({"qwixx"})
    limit = 2

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        marks = [a for a in legal if a["type"] == "mark" and skipped(view, a) <= self.limit]
        if not marks:
            return passing(legal)
        return min(marks, key=lambda a: skipped(view, a))


class Skipper1(Skipper):
    kind = "skipper1"
    limit = 1


class Skipper3(Skipper):
    kind = "skipper3"
    limit = 3


class NoPenalty(Skipper):
    """Skipper, but never a failed throw it can avoid (a colour-window pass after a white
    mark costs nothing, so it only forces a mark when nothing was marked this turn)."""

    kind = "nopenalty"

    def __init__(self, game: str, seed: object = None) -> None:
        super().__init__(game, seed)
        self._marked_window = -1

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        choice = super().decide(view, legal)
        me = view["you"]
        if view["active"] == me:
            if view["phase"] == "white" and choice["type"] == "mark":
                self._marked_window = view["window"]
            forced = view["phase"] == "colour" and self._marked_window != view["window"] - 1
            marks = [a for a in legal if a["type"] == "mark"]
            if choice["type"] == "pass" and forced and marks:
                return min(marks, key=lambda a: skipped(view, a))
        return choice


class Racer(Skipper):
    """Pushes its longest row (any mark there skipping at most three), locks when it can."""

    kind = "racer"

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        marks = [a for a in legal if a["type"] == "mark"]
        locks = [a for a in marks if is_lock(a)]
        if locks:
            return locks[0]
        rows = view["sheets"][view["you"]]["rows"]
        longest = max(rows, key=lambda colour: len(rows[colour]))
        push = [a for a in marks if a["row"] == longest and skipped(view, a) <= 3]
        if push:
            return min(push, key=lambda a: skipped(view, a))
        return super().decide(view, legal)


class Closer(Skipper):
    """Skipper that takes every lock, so a leader ends the game as soon as it can."""

    kind = "closer"

    def decide(self, view: JSON, legal: list[JSON]) -> JSON:
        locks = [a for a in legal if is_lock(a)]
        if locks:
            return locks[0]
        return super().decide(view, legal)


QWIXX_FIELD: dict[str, type[Bot]] = {
    cls.kind: cls for cls in (Skipper, Skipper1, Skipper3, NoPenalty, Racer, Closer)
}


def field(game: str) -> list[str]:
    """The policies a game's bot is measured against."""
    if game == "qwixx":
        return [
            "skipper",
            "skipper1",
            "skipper3",
            "greedy",
            "random",
            "nopenalty",
            "racer",
            "closer",
        ]
    return ["greedy", "random"]


def make_bot(name: str, game: str, seed: str) -> Bot:
    if game == "qwixx" and name in QWIXX_FIELD:
        return QWIXX_FIELD[name](game, seed)
    return get_bot(name, game, seed)


@dataclass
class Match:
    """The tested bot against N - 1 copies of `opponent`: its share of the wins, the means."""

    opponent: str
    seats: int
    games: int
    share: float
    mean: float
    field_mean: float

    def line(self) -> str:
        return (
            f"{self.opponent:<10} {self.seats:>5} {self.games:>6} {self.share:>7.1%} "
            f"{1 / self.seats:>6.1%} {self.mean:>8.2f} {self.field_mean:>8.2f}"
        )


HEADER = "opponent   seats  games   share   fair     mean    field"


def play_match(
    game: str,
    bot: str,
    opponent: str,
    seats: int,
    games: int,
    seed: str = "0",
    preset: str | None = None,
) -> Match:
    engine = get_game(game)
    share = mine = theirs = 0.0
    for k in range(games):
        key = f"dicehall-field/{seed}/{game}/{k}".encode()
        state: State = engine.new_state(seats, seed=hashlib.sha256(key).digest(), preset=preset)
        me = k % seats
        bots = [
            make_bot(bot if i == me else opponent, game, f"field/{seed}/{k}/{i}")
            for i in range(seats)
        ]

        def choose(state: State, seat: int, bots: list[Bot] = bots) -> JSON:
            return bots[seat].decide(state.view(seat), state.legal_actions(seat))

        play_out(state, choose)
        winners = state.winners()
        scores = state.scores()
        share += 1 / len(winners) if me in winners else 0.0
        mine += scores[me]
        if seats > 1:
            theirs += (sum(scores) - scores[me]) / (seats - 1)
    return Match(opponent, seats, games, share / games, mine / games, theirs / games)


def run(
    game: str,
    bot: str,
    opponents: Sequence[str],
    seats: Sequence[int],
    games: int,
    seed: str = "0",
    preset: str | None = None,
    out: Callable[[str], None] = print,
) -> list[Match]:
    matches = []
    out(HEADER)
    for n in seats:
        if n == 1:
            # Alone there is nobody to beat: each policy's (and the bot's) own mean, on the
            # same deals.
            for name in [bot, *opponents]:
                match = play_match(game, name, name, 1, games, seed, preset)
                matches.append(match)
                out(match.line())
            continue
        for opponent in opponents:
            match = play_match(game, bot, opponent, n, games, seed, preset)
            matches.append(match)
            out(match.line())
    return matches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="qwixx")
    parser.add_argument("--bot", default="strong")
    parser.add_argument("--against", help="comma-separated policies (default: the game's field)")
    parser.add_argument("--seats", default="2,3")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--preset")
    args = parser.parse_args()
    opponents = args.against.split(",") if args.against else field(args.game)
    seats = [int(s) for s in args.seats.split(",")]
    began = time.perf_counter()
    print(f"field: {args.bot} at {args.game}, {args.games} games a match, seed {args.seed}")
    run(args.game, args.bot, opponents, seats, args.games, args.seed, args.preset)
    print(f"{time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
