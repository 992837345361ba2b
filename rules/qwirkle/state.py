"""The Qwirkle game state: the deal, turns, the bag as chance, hidden hands (docs/rules.md,
Qwirkle).

Flow: chance deals 6 tiles to each seat in seat order, then the start rule picks the
first seat. A turn is one window of the active seat: place, swap or pass. A placement
(or a swap) that needs tiles makes chance pending: one draw for that seat; swapped tiles
go back into the bag only after it. A time-out forfeits the turn and counts as a pass for
the "every seat passed in a row" end.
"""

# mypyc: compiled (a hot module: server/compiled.py)

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ..base import (
    JSON,
    Action,
    Applied,
    Private,
    Public,
    RuleEvent,
    State,
    TimedOut,
    action_type,
    check_fields,
    field_of,
)
from ..errors import IllegalAction, InvalidState
from .board import (
    COPIES,
    END_BONUS,
    HAND_SIZE,
    KINDS,
    Board,
    check_placement,
    largest_set,
    parse_tile,
    tile_json,
)
from .moves import Move, has_placement, place_action, placements
from .render import render_seat

ACTION_TYPES = ("place", "swap", "pass")


def _remove(hand: list[int], codes: list[int]) -> list[int] | None:
    """The hand without `codes` (a multiset), or None if the hand does not hold them all."""
    rest = list(hand)
    for c in codes:
        try:
            rest.remove(c)
        except ValueError:
            return None
    return rest


def _sub_multisets(hand: list[int], limit: int) -> list[list[int]]:
    """Every distinct non-empty sub-multiset of `hand` with at most `limit` tiles, sorted."""
    kinds = sorted(set(hand))
    counts = [hand.count(k) for k in kinds]
    out: list[list[int]] = [[]]
    for kind, n in zip(kinds, counts, strict=True):
        out = [prefix + [kind] * m for prefix in out for m in range(n + 1)]
    result = [s for s in out if 0 < len(s) <= limit]
    result.sort(key=lambda s: (len(s), s))
    return result


class QwirkleState(State):
    """One Qwirkle game; hands are hidden, the board and the scores are public."""

    game_name: ClassVar[str] = "qwirkle"

    __slots__ = (
        "bag",
        "bag_size",
        "board",
        "chance_count",
        "dealing",
        "draw_count",
        "draw_seat",
        "hands",
        "options",
        "over",
        "passes",
        "points",
        "returning",
        "seats",
        "seed",
        "start_size",
        "starter",
        "turn",
        "win",
    )

    def __init__(self) -> None:
        self.seats = 0
        self.options: JSON = {}
        self.seed = b""
        self.chance_count = 0
        self.board = Board()
        self.hands: list[list[int]] = []
        self.bag: list[int] = [COPIES] * KINDS
        """Tiles left in the bag, as a count per tile code."""
        self.bag_size = COPIES * KINDS
        self.points: list[int] = []
        self.turn = 0
        self.win = 0
        self.passes = 0
        """Passes and forfeits in a row; the game ends when it reaches the seat count."""
        self.over = False
        self.dealing = True
        self.draw_seat = 0
        self.draw_count = 0
        """Tiles the pending draw gives `draw_seat` (0: no chance pending)."""
        self.returning: list[int] = []
        """Tiles swapped away, back into the bag after the pending draw."""
        self.starter = -1
        self.start_size = 0

    # --- construction and serialisation -------------------------------------------------

    @classmethod
    def new(cls, seats: int, options: JSON, seed: bytes) -> QwirkleState:
        s = cls()
        s.seats = seats
        s.options = dict(options)
        s.seed = seed
        s.hands = [[] for _ in range(seats)]
        s.points = [0] * seats
        s.draw_seat = 0
        s.draw_count = HAND_SIZE
        return s

    def to_dict(self) -> JSON:
        d = self._base_dict()
        d.update(
            {
                "board": [list(t) for t in self.board.tiles()],
                "hands": [list(h) for h in self.hands],
                "bag": list(self.bag),
                "points": list(self.points),
                "turn": self.turn,
                "window": self.win,
                "passes": self.passes,
                "over": self.over,
                "dealing": self.dealing,
                "draw_seat": self.draw_seat,
                "draw_count": self.draw_count,
                "returning": list(self.returning),
                "starter": self.starter,
                "start_size": self.start_size,
            }
        )
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QwirkleState:
        """Checked for shape and tile counts; a hand-made position may leave tiles out of
        the game (at most 3 of a kind in all), played games always hold all 108."""
        s = cls()
        s._load_base(data)
        n = s.seats
        if not 1 <= n <= 4:
            raise InvalidState("qwirkle is played by 1 to 4 seats")
        try:
            s.board = Board.from_tiles((int(x), int(y), int(c)) for x, y, c in data["board"])
        except ValueError as exc:
            raise InvalidState(f"bad board: {exc}") from None
        s.hands = [sorted(int(c) for c in h) for h in data["hands"]]
        s.bag = [int(c) for c in data["bag"]]
        s.returning = sorted(int(c) for c in data["returning"])
        s.points = [int(p) for p in data["points"]]
        if len(s.hands) != n or len(s.points) != n or len(s.bag) != KINDS:
            raise InvalidState("hands, points and bag do not match the seats")
        if any(len(h) > HAND_SIZE for h in s.hands):
            raise InvalidState("a hand holds more than 6 tiles")
        total = [0] * KINDS
        for c in [*s.board.cells.values(), *s.returning, *(c for h in s.hands for c in h)]:
            if not 0 <= c < KINDS:
                raise InvalidState(f"no tile {c}")
            total[c] += 1
        if any(b < 0 or t + b > COPIES for t, b in zip(total, s.bag, strict=True)):
            raise InvalidState("more than 3 tiles of one kind")
        s.bag_size = sum(s.bag)
        s.turn = int(data["turn"])
        s.win = int(data["window"])
        s.passes = int(data["passes"])
        s.over = bool(data["over"])
        s.dealing = bool(data["dealing"])
        s.draw_seat = int(data["draw_seat"])
        s.draw_count = int(data["draw_count"])
        s.starter = int(data["starter"])
        s.start_size = int(data["start_size"])
        if not 0 <= s.turn < n or not 0 <= s.draw_seat < n:
            raise InvalidState("turn or draw seat out of range")
        if s.draw_count > s.bag_size or s.draw_count < 0:
            raise InvalidState("the pending draw does not fit the bag")
        return s

    def clone(self) -> QwirkleState:
        s = QwirkleState()
        s.seats = self.seats
        s.options = self.options
        s.seed = self.seed
        s.chance_count = self.chance_count
        s.board = Board(dict(self.board.cells))
        s.hands = [list(h) for h in self.hands]
        s.bag = list(self.bag)
        s.bag_size = self.bag_size
        s.points = list(self.points)
        s.turn = self.turn
        s.win = self.win
        s.passes = self.passes
        s.over = self.over
        s.dealing = self.dealing
        s.draw_seat = self.draw_seat
        s.draw_count = self.draw_count
        s.returning = list(self.returning)
        s.starter = self.starter
        s.start_size = self.start_size
        return s

    # --- whose move ----------------------------------------------------------------------

    def actors(self) -> tuple[int, ...]:
        if self.over or self.draw_count:
            return ()
        return (self.turn,)

    def window(self) -> int:
        return self.win

    def opening_size(self) -> int | None:
        """While the board is empty: how many tiles the active seat's first move places."""
        if self.board.cells:
            return None
        return largest_set(self.hands[self.turn])

    def placements(self, seat: int) -> list[Move]:
        """Every legal placement of `seat` now as (points, ((x, y, code), ...)): for bots."""
        if seat not in self.actors():
            return []
        return placements(self.board, self.hands[seat])

    def legal_actions(self, seat: int) -> list[JSON]:
        if seat not in self.actors():
            return []
        out: list[JSON] = [
            place_action(tiles) for _, tiles in placements(self.board, self.hands[seat])
        ]
        hand = self.hands[seat]
        if self.board.cells and self.bag_size:
            for sub in _sub_multisets(hand, min(HAND_SIZE, self.bag_size)):
                out.append({"type": "swap", "tiles": [tile_json(c) for c in sub]})
        if self._may_pass(seat):
            out.append({"type": "pass"})
        return out

    def _may_pass(self, seat: int) -> bool:
        return self.bag_size == 0 and not has_placement(self.board, self.hands[seat])

    def apply_action(self, seat: object, action: Action) -> list[RuleEvent]:
        seat = self._check_actor(seat)
        kind = action_type(action, ACTION_TYPES)
        if kind == "place":
            return self._place(seat, action)
        if kind == "swap":
            return self._swap(seat, action)
        return self._pass(seat, action)

    def _place(self, seat: int, action: Action) -> list[RuleEvent]:
        check_fields(action, ("tiles",))
        raw = field_of(action, "tiles", list)
        placed = [parse_tile(item, True) for item in raw]
        if not placed:
            raise IllegalAction("place at least one tile", "no-tiles")
        if len(placed) > HAND_SIZE:
            raise IllegalAction("at most 6 tiles can be placed", "too-many-tiles")
        rest = _remove(self.hands[seat], [c for _, _, c in placed])
        if rest is None:
            raise IllegalAction("you do not hold those tiles", "not-in-hand")
        points, qwirkles = check_placement(self.board, placed, self.opening_size())
        placed.sort()
        # Everything is checked: mutate.
        self.board.put(placed)
        self.hands[seat] = rest
        self.points[seat] += points
        self.passes = 0
        place = {"type": "place", "tiles": [{**tile_json(c), "x": x, "y": y} for x, y, c in placed]}
        events: list[RuleEvent] = [Applied(seat, place, {"points": points, "qwirkles": qwirkles})]
        if not rest and not self.bag_size:
            self.points[seat] += END_BONUS
            events.append(Public({"type": "bonus", "seat": seat, "points": END_BONUS}))
            self._finish(events)
            return events
        need = min(HAND_SIZE - len(rest), self.bag_size)
        if need:
            self.draw_seat = seat
            self.draw_count = need
        else:
            self._next_turn(events)
        return events

    def _swap(self, seat: int, action: Action) -> list[RuleEvent]:
        check_fields(action, ("tiles",))
        raw = field_of(action, "tiles", list)
        codes = [parse_tile(item, False)[2] for item in raw]
        if not codes:
            raise IllegalAction("swap at least one tile", "no-tiles")
        if len(codes) > HAND_SIZE:
            raise IllegalAction("at most 6 tiles can be swapped", "too-many-tiles")
        rest = _remove(self.hands[seat], codes)
        if rest is None:
            raise IllegalAction("you do not hold those tiles", "not-in-hand")
        if not self.board.cells:
            raise IllegalAction("the first move of the game must place tiles", "opening-must-place")
        if len(codes) > self.bag_size:
            raise IllegalAction(f"the bag holds only {self.bag_size} tiles", "bag-too-small")
        codes.sort()
        self.hands[seat] = rest
        self.returning = codes
        self.passes = 0
        self.draw_seat = seat
        self.draw_count = len(codes)
        return [
            Private(
                seat,
                Applied(seat, {"type": "swap", "tiles": [tile_json(c) for c in codes]}),
                Applied(seat, {"type": "swap", "count": len(codes)}),
            )
        ]

    def _pass(self, seat: int, action: Action) -> list[RuleEvent]:
        check_fields(action, ())
        if self.bag_size:
            raise IllegalAction("no passing while the bag holds tiles", "bag-not-empty")
        if has_placement(self.board, self.hands[seat]):
            raise IllegalAction("no passing while a placement is legal", "placement-available")
        self.passes += 1
        events: list[RuleEvent] = [Applied(seat, {"type": "pass"})]
        self._next_turn(events)
        return events

    def apply_timeout(self, seat: object) -> list[RuleEvent]:
        seat = self._check_actor(seat)
        self.passes += 1
        events: list[RuleEvent] = [TimedOut(seat)]
        self._next_turn(events)
        return events

    def _next_turn(self, events: list[RuleEvent]) -> None:
        if self.passes >= self.seats:
            self._finish(events)
            return
        self.turn = (self.turn + 1) % self.seats
        self.win += 1
        events.append(Public({"type": "turn", "seat": self.turn}))

    def _finish(self, events: list[RuleEvent]) -> None:
        self.over = True
        over = {"type": "game_over", "scores": self.scores(), "winners": self.winners()}
        events.append(Public(over))

    # --- chance --------------------------------------------------------------------------

    def chance_pending(self) -> bool:
        return self.draw_count > 0 and not self.over

    def sample_chance(self) -> JSON:
        draw = self._draw()
        pool = [c for c in range(KINDS) for _ in range(self.bag[c])]
        tiles = [pool.pop(draw.below(len(pool))) for _ in range(self.draw_count)]
        return {"seat": self.draw_seat, "tiles": [tile_json(c) for c in tiles]}

    def apply_chance(self, outcome: Mapping[str, Any]) -> list[RuleEvent]:
        if not self.chance_pending():
            raise IllegalAction("no chance event is pending", "no-chance-pending")
        codes = self._check_outcome(outcome)
        seat = self.draw_seat
        for c in codes:
            self.bag[c] -= 1
        self.bag_size -= len(codes)
        hand = self.hands[seat]
        hand.extend(codes)
        hand.sort()
        self.chance_count += 1
        self.draw_count = 0
        if self.returning:
            for c in self.returning:
                self.bag[c] += 1
            self.bag_size += len(self.returning)
            self.returning = []
        tiles = [tile_json(c) for c in codes]
        events: list[RuleEvent] = [
            Private(
                seat,
                Public({"type": "drew", "seat": seat, "tiles": tiles, "bag": self.bag_size}),
                Public({"type": "drew", "seat": seat, "count": len(codes), "bag": self.bag_size}),
            )
        ]
        if self.dealing:
            if seat + 1 < self.seats:
                self.draw_seat = seat + 1
                self.draw_count = HAND_SIZE
            else:
                self._start(events)
        else:
            self._next_turn(events)
        return events

    def _check_outcome(self, outcome: Mapping[str, Any]) -> list[int]:
        bad = "impossible-outcome"
        if not isinstance(outcome, Mapping) or set(outcome) != {"seat", "tiles"}:
            raise IllegalAction("a draw is {'seat': S, 'tiles': [...]}", bad)
        seat = outcome["seat"]
        tiles = outcome["tiles"]
        if isinstance(seat, bool) or not isinstance(seat, int) or seat != self.draw_seat:
            raise IllegalAction(f"this draw is for seat {self.draw_seat}", bad)
        if not isinstance(tiles, list) or len(tiles) != self.draw_count:
            raise IllegalAction(f"this draw takes {self.draw_count} tiles", bad)
        codes: list[int] = []
        left = list(self.bag)
        for item in tiles:
            try:
                code = parse_tile(item, False)[2]
            except IllegalAction as exc:
                raise IllegalAction(exc.message, bad) from None
            if not left[code]:
                raise IllegalAction("that tile is not in the bag", bad)
            left[code] -= 1
            codes.append(code)
        return codes

    def _start(self, events: list[RuleEvent]) -> None:
        """The start rule: the biggest line-set in hand starts; ties go to the lower seat."""
        sizes = [largest_set(h) for h in self.hands]
        best = max(sizes)
        self.starter = sizes.index(best)
        self.start_size = best
        self.dealing = False
        self.turn = self.starter
        self.win += 1
        events.append(Public({"type": "start", "seat": self.starter, "size": best}))
        events.append(Public({"type": "turn", "seat": self.turn}))

    # --- results and views ---------------------------------------------------------------

    def is_over(self) -> bool:
        return self.over

    def scores(self) -> list[int]:
        return list(self.points)

    def winners(self) -> list[int]:
        """Most points, then fewest tiles in hand; otherwise a tie."""
        best = max(self.points)
        top = [s for s in range(self.seats) if self.points[s] == best]
        fewest = min(len(self.hands[s]) for s in top)
        return [s for s in top if len(self.hands[s]) == fewest]

    def hidden(self, seat: int) -> list[JSON]:
        """The seat's hand (and tiles it is swapping away) as {color, shape} maps."""
        if not 0 <= seat < self.seats:
            return []
        out = [tile_json(c) for c in self.hands[seat]]
        if self.returning and self.draw_seat == seat:
            out.extend(tile_json(c) for c in self.returning)
        return out

    def view(self, seat: int | None) -> JSON:
        if seat is not None and (
            isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.seats
        ):
            raise IllegalAction(f"there is no seat {seat!r}", "no-such-seat")
        pending = self.chance_pending()
        view: JSON = {
            "game": self.game_name,
            "seats": self.seats,
            "options": dict(self.options),
            "you": seat,
            "window": self.win,
            "turn": None if self.dealing else self.turn,
            "actors": list(self.actors()),
            "chance_pending": pending,
            "drawing": {"seat": self.draw_seat, "count": self.draw_count} if pending else None,
            "starter": None if self.starter < 0 else self.starter,
            "start_size": None if self.starter < 0 else self.start_size,
            "board": [{**tile_json(c), "x": x, "y": y} for x, y, c in self.board.tiles()],
            "hand_sizes": [len(h) for h in self.hands],
            "bag": self.bag_size,
            "passes": self.passes,
            "scores": self.scores(),
            "over": self.over,
            "winners": self.winners() if self.over else [],
            "hand": None,
            "opening_size": None,
        }
        if seat is not None:
            view["hand"] = [tile_json(c) for c in self.hands[seat]]
            if self.returning and self.draw_seat == seat:
                view["returning"] = [tile_json(c) for c in self.returning]
            if seat in self.actors():
                view["opening_size"] = self.opening_size()
        return view

    def render(self, seat: int, name: str = "") -> str:
        points = self.points[seat] if self.over else None
        return render_seat(name, points, self.hands[seat], self.board)


__all__ = ["QwirkleState"]
