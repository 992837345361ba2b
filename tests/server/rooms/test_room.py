"""RoomCore, sans I/O: seats, starts, turn windows, defaults, the numbered log, views.

Every call carries the time, so windows and deadlines are tested without a clock or a
socket: `now` is whatever the test says it is.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from typing import Any

import pytest

from dicehall.protocol import errors
from dicehall.protocol.messages.server import (
    Chat,
    Event,
    GameOver,
    RoomMessage,
    RoomUpdate,
    Window,
    WindowClosed,
)
from dicehall.protocol.subprotocols import Encoding
from dicehall.rules import Answered, get_game
from dicehall.rules.records import replay
from dicehall.server.rooms.outgoing import Outgoing
from dicehall.server.rooms.room import RoomCore

T0 = 1_767_225_600.0
"""A fixed 'now' (unix seconds)."""
SEED = bytes(range(32))


def room(game: str, seats: int, turn_window: int = 30, **kw: Any) -> RoomCore:
    return RoomCore(
        "r1", get_game(game), get_game(game).resolve_options(), seats, turn_window,
        seed=SEED, host_key="host", **kw,
    )  # fmt: skip


def full(
    game: str, seats: int, turn_window: int = 30, **kw: Any
) -> tuple[RoomCore, list[Outgoing]]:
    """A room whose seats are all taken by people, the creator first; not started."""
    core = room(game, seats, turn_window, **kw)
    out: list[Outgoing] = []
    for i in range(seats):
        out += core.join(f"p{i}", None, f"nonce{i}", T0, "host" if i == 0 else None)[1]
    return core, out


def messages(out: list[Outgoing], kind: type[RoomMessage] = RoomMessage) -> list[Any]:
    return [o.message for o in out if isinstance(o.message, kind)]


def fingerprint(core: RoomCore) -> str:
    """Everything a refused command must leave as it was."""
    return json.dumps(
        {
            "state": core.state.to_dict() if core.state else None,
            "seq": core.seq,
            "log": len(core.log),
            "record": core.record,
            "window": core.window_id,
            "deadline": core.deadline,
            "seats": [dataclasses.asdict(s) for s in core.seats],
            "status": core.status,
            "host": [core.host, core.host_key],
        },
        sort_keys=True,
        default=str,
    )


def play_out(core: RoomCore, rng: random.Random, now: float = T0) -> list[Outgoing]:
    """Random legal answers from every actor until the game ends."""
    out: list[Outgoing] = []
    while core.status == "playing":
        assert core.state is not None
        seat = core.state.actors()[0]
        action = rng.choice(core.state.legal_actions(seat))
        out += core.act(seat, action, core.window_id, now)
    return out


# --- seats and starting -------------------------------------------------------------------------


def test_every_room_message_takes_the_next_seq() -> None:
    core, out = full("qwixx", 2)
    out += core.chat(0, "p0", "hi")
    out += core.start(T0)
    out += play_out(core, random.Random(1))
    assert [o.seq for o in out] == list(range(1, core.seq + 1))
    assert [o.seq for o in core.log] == list(range(1, core.seq + 1))
    kinds = {type(o.message) for o in out}
    assert {RoomUpdate, Chat, Event, Window, WindowClosed, GameOver} <= kinds


def test_joining_fills_open_seats_and_refuses_the_rest() -> None:
    core = room("qwinto", 3)
    assert core.join("a", None, "n0", T0)[0] == 0
    assert core.join("b", 2, "n2", T0)[0] == 2
    before = fingerprint(core)
    with pytest.raises(errors.SeatTakenError):
        core.join("c", 0, "x", T0)
    with pytest.raises(errors.NoSuchSeatError):
        core.join("c", 3, "x", T0)
    assert fingerprint(core) == before
    assert core.join("c", None, "n1", T0)[0] == 1
    with pytest.raises(errors.RoomFullError):
        core.join("d", None, "x", T0)
    info = core.info()
    assert [(s.kind, s.name, s.connected) for s in info.seats] == [
        ("human", "a", True),
        ("human", "c", True),
        ("human", "b", True),
    ]


def test_start_needs_every_seat_held_and_the_host() -> None:
    core = room("qwixx", 2)
    core.join("a", 0, "n0", T0, "host")
    with pytest.raises(errors.ForbiddenError):
        core.start(T0)
    core.may_host(None, 0)
    core.add_bots("random", None, T0)
    out = core.start(T0)
    info = messages(out, RoomUpdate)[0].info
    assert info.status == "playing"
    assert info.commitment == hashlib.sha256(SEED).hexdigest()
    assert messages(out, Window), "the first window opens at the start"
    before = fingerprint(core)
    for refused in (
        lambda: core.start(T0),
        lambda: core.join("late", None, "x", T0),
        lambda: core.add_bots("random", None, T0),
    ):
        with pytest.raises(errors.AlreadyStartedError):
            refused()
    assert fingerprint(core) == before


# --- the host ------------------------------------------------------------------------------


def hosts(out: list[Outgoing]) -> list[int | None]:
    """The host each room update of `out` announces."""
    return [m.info.host for m in messages(out, RoomUpdate)]


def test_a_stranger_who_sits_first_does_not_host_the_creators_room() -> None:
    core = room("qwixx", 3)
    _, out = core.join("stranger", 0, "n0", T0)
    assert core.host is None and hosts(out) == [None]
    before = fingerprint(core)
    for key, seat in ((None, 0), ("not the key", 0), (None, 1), (None, None)):
        with pytest.raises(errors.ForbiddenError, match="the creator"):
            core.may_host(key, seat)
    assert fingerprint(core) == before
    core.may_host("host", None)  # the creator hosts before it sits
    _, out = core.join("creator", 2, "n2", T0, "host")
    assert core.host == 2 and hosts(out) == [2]
    core.may_host(None, 2)  # now its seat hosts, whichever connection holds it
    with pytest.raises(errors.ForbiddenError, match="seat 2"):
        core.may_host("host", 0)


def test_the_role_passes_to_the_next_seated_person_when_the_host_leaves() -> None:
    core = room("qwixx", 4)
    for seat, key in ((1, "host"), (3, None), (0, None)):
        core.join(f"p{seat}", seat, f"n{seat}", T0, key)
    core.add_bots("random", 1, T0)  # seat 2: a bot never hosts
    assert core.host == 1
    out = core.leave(1)
    assert hosts(out) == [3]  # after seat 1 in seat order, skipping the bot
    assert core.seats[1].kind == "open"
    out = core.leave(3)
    assert hosts(out) == [0]  # wrapping round
    out = core.leave(0)
    assert hosts(out) == [None] and core.host_key == ""
    _, out = core.join("newcomer", 3, "n9", T0)  # nobody hosts: the next to sit does
    assert hosts(out) == [3]


def test_a_host_without_a_connection_hands_over_to_a_connected_person() -> None:
    core, _ = full("qwixx", 3)
    assert core.host == 0
    core.set_connected(1, -1)
    out = core.set_connected(0, -1)
    assert hosts(out) == [2]  # seat 1 has no connection either
    out = core.set_connected(0, +1)
    assert hosts(out) == [2]  # it does not come back
    core.set_connected(0, -1)
    out = core.set_connected(2, -1)  # nobody connected to take it: it stays
    assert hosts(out) == [2]
    out = core.set_connected(1, +1)
    assert hosts(out) == [2]  # presence alone does not take it (a failover restores presence)


def test_a_person_who_sits_while_the_host_is_away_takes_the_role() -> None:
    core = room("qwixx", 3)
    core.join("a", 0, "n0", T0, "host")
    core.set_connected(0, -1)
    _, out = core.join("b", 2, "n2", T0)
    assert hosts(out) == [2]


def test_the_creator_who_never_sat_resigns_when_it_goes() -> None:
    core = room("qwixx", 3)
    core.join("a", 1, "n1", T0)
    core.join("b", 2, "n2", T0)
    core.set_connected(1, -1)
    assert core.resign("not the key") == []
    out = core.resign("host")
    assert hosts(out) == [2]  # the first seated person with a connection
    assert core.resign("host") == []  # a second call does nothing

    empty = room("qwixx", 2)
    assert hosts(empty.resign("host")) == [None]  # kept, though nothing shows it
    _, out = empty.join("first", 1, "n", T0)
    assert hosts(out) == [1]


def test_a_host_who_leaves_a_game_in_play_hands_over_too() -> None:
    core, _ = full("qwixx", 2)
    core.may_host(None, 0)
    core.start(T0)
    out = core.leave(0)
    assert hosts(out) == [1]
    assert core.lobby_key() != room("qwixx", 2).lobby_key()


def test_autostart_as_soon_as_every_seat_is_held() -> None:
    core = room("qwixx", 3, autostart=True)
    core.join("a", None, "n0", T0)
    seats, out = core.add_bots("random", 1, T0)
    assert seats == [1] and core.info().status == "open"
    _, out = core.join("b", None, "n2", T0)
    assert core.info().status == "playing"
    assert [type(m) for m in messages(out)][:2] == [RoomUpdate, RoomUpdate]
    assert messages(out, RoomUpdate)[-1].info.status == "playing"

    bots_only = room("qwinto", 2, autostart=True)
    bots_only.add_bots("random", None, T0)
    assert bots_only.status == "playing"


def test_house_bots_take_open_seats_only() -> None:
    core = room("yamb", 4)
    core.join("a", 1, "n1", T0)
    before = fingerprint(core)
    with pytest.raises(errors.NoSuchBotError):
        core.add_bots("grandmaster", None, T0)
    assert fingerprint(core) == before
    assert core.add_bots("random", 2, T0)[0] == [0, 2]
    assert core.add_bots("random", None, T0)[0] == [3]
    with pytest.raises(errors.RoomFullError):
        core.add_bots("random", None, T0)
    assert [s.kind for s in core.seats] == ["bot", "human", "bot", "bot"]


def test_leaving_before_the_start_reopens_the_seat_and_kills_its_token() -> None:
    core, _ = full("qwixx", 2)
    assert core.check_token(1, "nonce1")
    out = core.leave(1)
    assert messages(out, RoomUpdate)[0].info.seats[1].kind == "open"
    assert not core.check_token(1, "nonce1")
    core.join("new", 1, "fresh", T0)
    assert not core.check_token(1, "nonce1")
    assert core.check_token(1, "fresh")
    assert not core.check_token(7, "fresh")


def test_leaving_during_the_game_keeps_the_seat_for_its_token() -> None:
    core, _ = full("qwixx", 2)
    core.start(T0)
    out = core.leave(1)
    seat = messages(out, RoomUpdate)[0].info.seats[1]
    assert (seat.kind, seat.connected) == ("human", False)
    assert core.check_token(1, "nonce1")


def test_a_finished_room_is_deserted_once_every_person_left_it_explicitly() -> None:
    """Deserted: nobody can come back to see the end (the memory backend closes it at once);
    a merely disconnected seat may still resume, a spectator still watches."""
    core, _ = full("qwixx", 3)
    core.start(T0)
    core.leave(0)
    assert core.seats[0].left and not core.deserted, "the game goes on"
    play_out(core, random.Random(2))
    assert core.status == "over" and not core.deserted
    core.set_connected(1, -1)  # seat 1's connection dropped: it may resume
    core.leave(2)
    assert not core.deserted
    core.leave(1)
    assert core.deserted
    core.spectate(+1)
    assert not core.deserted, "someone watches"
    core.spectate(-1)
    assert core.deserted
    core.set_connected(0, +1)  # seat 0's token took it back
    assert not core.seats[0].left and not core.deserted


def test_house_bots_do_not_keep_a_finished_room_from_being_deserted() -> None:
    core = room("qwixx", 2)
    core.join("p0", 0, "nonce0", T0)
    core.add_bots("random", None, T0)
    core.start(T0)
    play_out(core, random.Random(4))
    assert not core.deserted
    core.leave(0)
    assert core.deserted


IDLE, OVER, EMPTY = 600.0, 30.0, 60.0


def closable(core: RoomCore, now: float) -> bool:
    return core.closable(now, IDLE, OVER, EMPTY)


def test_a_room_nobody_sits_in_closes_after_empty_seconds_before_its_game_starts() -> None:
    """Created and never sat in (lobby spam, issue 39): a minute, not ten; house bots are
    nobody. Once the game starts, the idle time-out is the room's."""
    core = room("qwixx", 2)
    core.last_activity = T0  # (its creation: the backends stamp it)
    assert not closable(core, T0 + EMPTY) and closable(core, T0 + EMPTY + 1)
    core.add_bots("random", 1, T0)
    assert closable(core, T0 + EMPTY + 1), "a house bot is nobody"
    core.join("p0", None, "nonce0", T0)
    assert not closable(core, T0 + IDLE + 1), "a person waits at the table"
    core.leave(1, T0 + 100)  # (the last person left: a minute from then)
    assert not closable(core, T0 + 100 + EMPTY) and closable(core, T0 + 100 + EMPTY + 1)


def test_a_room_whose_people_all_went_closes_after_empty_seconds_before_its_start() -> None:
    """Its creator closed the tab (issue 33): the seat is held for a reload, not for ten
    minutes of quick matches seating people with a ghost."""
    core = room("qwixx", 3)
    core.add_bots("random", 1, T0)
    core.join("p0", None, "nonce0", T0)
    core.set_connected(1, +1)  # (a second tab on the same seat)
    core.set_connected(1, -1, T0 + 50)
    assert not closable(core, T0 + IDLE + 1), "one tab still holds the seat"
    core.set_connected(1, -1, T0 + 100)  # (the last person's connection went)
    assert not closable(core, T0 + 100 + EMPTY) and closable(core, T0 + 100 + EMPTY + 1)
    core.set_connected(1, +1, T0 + 130)  # (a reload takes the seat back in time)
    assert not closable(core, T0 + IDLE + 1)
    core.spectate(+1)
    assert not closable(core, T0 + IDLE + 1), "someone watches"


def test_a_started_room_without_people_keeps_the_idle_time_out() -> None:
    core = room("qwixx", 2)
    core.add_bots("random", None, T0)  # (filled, and started by the creator: a game on)
    core.start(T0)
    assert core.last_activity == T0
    assert not closable(core, T0 + EMPTY + 1) and closable(core, T0 + IDLE + 1)


def test_the_lobby_key_changes_whenever_the_lobby_entry_does() -> None:
    """The Redis backend rewrites a room's lobby entry only when `lobby_key` changes."""
    core = room("qwixx", 3)
    seen = [(core.lobby_key(), core.info())]

    def step(*_: object) -> None:
        key, info = core.lobby_key(), core.info()
        if info != seen[-1][1]:
            assert key != seen[-1][0], f"{info} is new, its key is not"
        seen.append((key, info))

    step(core.join("ann", None, "n0", T0))
    step(core.add_bots("random", 1, T0))
    step(core.join("bob", 2, "n2", T0))
    step(core.set_connected(2, -1))
    step(core.spectate(1))
    step(core.start(T0))
    step(core.leave(0))
    step(play_out(core, random.Random(5)))
    assert core.status == "over"
    assert len({info.status for _, info in seen}) == 3, "open, playing and over were seen"


def test_presence_is_announced_only_when_it_changes() -> None:
    core, _ = full("qwixx", 2)
    assert core.set_connected(0, +1) == []  # a second connection on the same seat
    assert core.set_connected(0, -1) == []
    out = core.set_connected(0, -1)
    assert messages(out, RoomUpdate)[0].info.seats[0].connected is False
    out = core.set_connected(0, +1)
    assert messages(out, RoomUpdate)[0].info.seats[0].connected is True


# --- acting and turn windows -------------------------------------------------------------------


def test_refused_actions_change_nothing() -> None:
    core, _ = full("qwinto", 2)
    with pytest.raises(errors.NotStartedError):
        core.act(0, {"type": "pass"}, None, T0)
    core.start(T0)
    assert core.state is not None and core.state.actors() == (0,)
    window = core.window_id
    assert window is not None
    before = fingerprint(core)
    refusals: list[tuple[type[errors.ProtocolError], int, dict[str, Any], int | None]] = [
        (errors.WindowClosedError, 0, {"type": "roll", "dice": ["red"]}, window - 1),
        (errors.WindowClosedError, 0, {"type": "roll", "dice": ["red"]}, window + 1),
        (errors.NotYourTurnError, 1, {"type": "pass"}, window),
        (errors.NoSuchSeatError, 4, {"type": "pass"}, window),
        (errors.IllegalActionError, 0, {"type": "enter", "row": "red", "box": 0}, window),
        (errors.IllegalActionError, 0, {"type": "roll", "dice": ["purple"]}, None),
        (errors.IllegalActionError, 0, {"type": "fly"}, window),
    ]
    for error, seat, action, win in refusals:
        with pytest.raises(error) as caught:
            core.act(seat, action, win, T0 + 1)
        if error is errors.IllegalActionError:
            assert caught.value.body().rule
        assert fingerprint(core) == before


SCHEMA_REFUSALS = [
    (
        "qwinto",
        {"type": "enter", "row": "red", "box": 10},
        "Expected `int` <= 9 - at `$.action.box`",
    ),
    (
        "qwinto",
        {"type": "enter", "box": True},
        "Expected `int | null`, got `bool` - at `$.action.box`",
    ),
    (
        "qwinto",
        {"type": "enter", "colour": "red"},
        "Object contains unknown field `colour` - at `$.action`",
    ),
    (
        "qwinto",
        {"type": "roll", "tiles": []},
        "Object contains unknown field `tiles` - at `$.action`",
    ),
    ("qwixx", {"type": "mark", "number": 13}, "Expected `int` <= 12 - at `$.action.number`"),
    (
        "qwirkle",
        {"type": "swap", "tiles": [{"color": "red"}]},
        "Object missing required field `shape` - at `$.action.tiles[0]`",
    ),
    ("yamb", {"type": "roll", "hold": [6]}, "Expected `int` <= 5 - at `$.action.hold[0]`"),
    ("yamb", {"row": "1"}, "Object missing required field `type` - at `$.action`"),
    ("qwixx", {}, "Object missing required field `type` - at `$.action`"),
    ("qwixx", {"type": 3}, "Expected `str`, got `int` - at `$.action.type`"),
    ("qwinto", {"type": ""}, "Expected `str` of length >= 1 - at `$.action.type`"),
    ("qwirkle", {"type": "x" * 33}, "Expected `str` of length <= 32 - at `$.action.type`"),
]
"""Actions each game's schema refuses, each with the message the decoder gave while the
protocol's `Action` held every game's fields at once (a field of another game's, such as
`tiles` in Qwinto, was the engine's `illegal-action` then)."""


@pytest.mark.parametrize(("game", "action", "message"), SCHEMA_REFUSALS)
def test_an_action_off_its_games_schema_is_refused_and_changes_nothing(
    game: str, action: dict[str, Any], message: str
) -> None:
    """The protocol carries any map with a `type`; the room holds it to its game's own
    schema (`Game.actions`), with the decoder's error, before anything else."""
    core, _ = full(game, 2)
    core.start(T0)
    assert core.state is not None
    before = fingerprint(core)
    with pytest.raises(errors.InvalidMessageError) as caught:
        core.act(core.state.actors()[0], action, core.window_id, T0 + 1)
    assert caught.value.message == f"act: {message}"
    assert fingerprint(core) == before


def test_a_shared_window_closes_when_the_last_actor_answers() -> None:
    core, _ = full("qwixx", 2, turn_window=20)
    out = core.start(T0)
    opened = messages(out, Window)[-1]
    assert {a.seat for a in opened.actors} == {0, 1}
    assert opened.deadline == int((T0 + 20) * 1000)
    seq = core.seq
    out = core.act(1, {"type": "pass"}, opened.window, T0 + 1)
    assert out == [] and core.seq == seq, "the answer is kept back, unnumbered"
    progress = core.progress()
    assert progress is not None and progress.answered == [1] and progress.seq == seq
    with pytest.raises(errors.NotYourTurnError):  # answering twice
        core.act(1, {"type": "pass"}, opened.window, T0 + 2)
    out = core.act(0, {"type": "pass"}, opened.window, T0 + 3)
    events = [m.event for m in messages(out, Event)]
    assert events[:2] == [{"type": "answered", "seat": 1}, {"type": "answered", "seat": 0}]
    assert [m.seq for m in out] == list(range(seq + 1, seq + 1 + len(out))), "no gap"
    assert core.progress() is None
    closed = messages(out, WindowClosed)[0]
    assert closed.window == opened.window
    assert {(a.seat, a.default) for a in closed.actions} == {(0, False), (1, False)}
    following = messages(out, Window)[-1]
    assert following.window != opened.window
    assert following.deadline == int((T0 + 3 + 20) * 1000), "a new window, a new deadline"


@pytest.mark.parametrize(
    ("game", "options"),
    [
        ("qwinto", {}),
        ("qwinto", {"reroll": True}),  # the first answer after a roll that could be rolled again
        ("qwixx", {}),
        ("qwirkle", {}),
        ("yamb", {}),
        ("yamb", {"mode": "simultaneous"}),
    ],
)
def test_an_act_is_kept_back_exactly_when_it_only_answers_a_window_that_stays_open(
    game: str, options: dict[str, Any]
) -> None:
    """Whole games of each game: what the room keeps back for the window's one commit is
    what it kept back when it read the engine's events as strings (one `answered`, the
    same window still open), and each kept answer shows in `progress` at once."""
    rules = get_game(game)
    core = RoomCore("r1", rules, rules.resolve_options(options), 3, 30, seed=SEED)
    core.add_bots("random", None, T0)
    core.start(T0)
    rng = random.Random(f"{game}{options}")
    kept = 0
    while core.status == "playing":
        state = core.state
        assert state is not None
        seat = rng.choice(state.actors())
        action = rng.choice(state.legal_actions(seat))
        probe = state.clone()
        events = probe.apply_action(seat, action)
        answers_only = len(events) == 1 and isinstance(events[0], Answered)
        stays_open = probe.window() == core.window_id and not probe.is_over()
        keep = answers_only and stays_open and not probe.chance_pending()
        seq = core.seq
        out = core.act(seat, action, core.window_id, T0)
        assert (out == []) == keep, (game, events)
        if keep:
            kept += 1
            progress = core.progress()
            assert core.seq == seq and progress is not None and seat in progress.answered
    assert (kept > 0) == (game in ("qwinto", "qwixx"))


def test_expiry_applies_the_defaults_at_the_deadline_and_not_before() -> None:
    core, _ = full("qwinto", 1, turn_window=10)
    core.start(T0)
    assert core.deadline == T0 + 10
    before = fingerprint(core)
    assert core.expire(T0 + 9.99) == []
    assert fingerprint(core) == before
    out = core.expire(T0 + 10)
    closed = messages(out, WindowClosed)[0]
    assert [(a.seat, a.action, a.default) for a in closed.actions] == [
        (0, {"type": "roll", "dice": ["red", "yellow", "blue"]}, True)
    ]
    assert "rolled" in [m.event["type"] for m in messages(out, Event)]
    assert core.deadline == T0 + 20
    out = core.expire(T0 + 20.5)
    closed = messages(out, WindowClosed)[0]
    assert [(a.action, a.default) for a in closed.actions] == [({"type": "pass"}, True)]
    assert core.record is not None
    assert [e for e in core.record["log"] if "timeout" in e] == [
        {"seat": 0, "timeout": True},
        {"seat": 0, "timeout": True},
    ]


def test_a_timed_out_yamb_turn_lists_what_the_default_did() -> None:
    """A seat that never rolled is rolled for, then written for: each step is one entry
    marked as a default (the time-out never shows as an entry of its own)."""
    core, _ = full("yamb", 2, turn_window=5)
    core.start(T0)
    assert core.state is not None
    seat = core.state.actors()[0]
    out = core.expire(T0 + 5)
    closed = messages(out, WindowClosed)[0]
    assert [(a.seat, a.default) for a in closed.actions] == [(seat, True), (seat, True)]
    assert [a.action["type"] for a in closed.actions if a.action] == ["roll", "write"]


def test_a_whole_game_ends_with_the_seed_and_a_record_that_replays() -> None:
    core = room("qwixx", 3)
    for i in range(3):
        core.join("player", None, f"n{i}", T0)  # three people with one name
    core.start(T0)
    out = play_out(core, random.Random(7))
    over = messages(out, GameOver)[0]
    assert core.status == "over"
    assert over.seed == SEED.hex()
    assert hashlib.sha256(bytes.fromhex(over.seed)).hexdigest() == over.commitment
    assert messages(out, RoomUpdate)[-1].info.status == "over"
    assert core.record is not None
    assert core.record["seats"] == ["player", "player (2)", "player (3)"]
    result = replay(json.loads(json.dumps(core.record)))
    assert result.verified is True
    assert result.state.scores() == over.scores
    assert result.state.winners() == over.winners
    before = fingerprint(core)
    with pytest.raises(errors.GameOverError):
        core.act(0, {"type": "pass"}, None, T0)
    assert core.legal(0) == (None, [], core.state.view(0))  # the final view, no actions
    with pytest.raises(errors.GameOverError):
        core.join("late", None, "x", T0)
    assert fingerprint(core) == before


# --- views, hidden information, resume ---------------------------------------------------------


def qwirkle_started() -> tuple[RoomCore, list[Outgoing]]:
    core, out = full("qwirkle", 2)
    out += core.start(T0)
    return core, out


def test_private_events_share_one_seq_and_each_view_is_encoded_once() -> None:
    _, out = qwirkle_started()
    draws = [o for o in out if isinstance(o.message, Event) and o.private]
    assert {next(iter(o.private)) for o in draws} == {0, 1}
    for o in draws:
        (owner,) = o.private
        mine = o.for_seat(owner)
        assert isinstance(mine, Event) and len(mine.event["tiles"]) == 6
        assert mine.seq == o.seq
        for other in (1 - owner, None):
            theirs = o.for_seat(other)
            assert isinstance(theirs, Event) and theirs.seq == o.seq
            assert "tiles" not in theirs.event and theirs.event["count"] == 6
        for encoding in Encoding:
            assert o.frame(owner, encoding) is o.frame(owner, encoding)
            assert o.frame(1 - owner, encoding) is o.frame(None, encoding)
            assert o.frame(owner, encoding) != o.frame(None, encoding)
    assert not any("for" in o.for_seat(s).event for o in draws for s in (0, 1, None))  # type: ignore[attr-defined]


def test_snapshots_show_each_member_only_its_own_view() -> None:
    core, _ = qwirkle_started()
    assert core.state is not None
    for seat in (0, 1):
        snap = core.snapshot(seat)
        assert snap.seq == core.seq and snap.seat == seat
        assert len(snap.view["hand"]) == 6
        assert snap.turn is not None and snap.turn.window == core.window_id
        assert snap.turn.deadline == int(core.deadline * 1000)  # type: ignore[operator]
    spectator = core.snapshot(None)
    assert spectator.view["hand"] is None
    text = json.dumps(spectator.view)
    for seat in (0, 1):
        for tile in core.state.hidden(seat):
            assert json.dumps(tile) not in text
    assert room("qwixx", 2).snapshot(None).view == {}


def test_since_gives_exactly_the_missed_messages_as_that_seat_saw_them() -> None:
    core, out = qwirkle_started()
    assert core.since(core.seq, 0) == []
    assert core.since(core.seq + 1, 0) is None, "a seq from the future: send a snapshot"
    missed = core.since(2, 1)
    assert missed is not None
    assert [m.seq for m in missed] == list(range(3, core.seq + 1))
    assert missed == [o.for_seat(1) for o in out if o.seq > 2]
    assert core.since(0, None) == [o.for_seat(None) for o in out]


def test_since_refuses_messages_that_aged_out() -> None:
    core = room("qwixx", 2, history=8)
    for i in range(2):
        core.join(f"p{i}", None, f"n{i}", T0)
    for i in range(10):
        core.chat(0, "p0", f"line {i}")
    assert core.seq == 12 and [o.seq for o in core.log] == list(range(5, 13))
    assert core.since(3, 0) is None
    kept = core.since(4, 0)
    assert kept is not None and [m.seq for m in kept] == list(range(5, 13))


def test_legal_lists_the_seats_actions_and_the_open_window() -> None:
    core, _ = full("qwinto", 2)
    core.start(T0)
    window, actions, view = core.legal(0)
    assert window == core.window_id
    assert view == core.state.view(0)
    assert {"type": "roll", "dice": ["red", "yellow", "blue"]} in actions
    assert core.legal(1) == (core.window_id, [], core.state.view(1))
    assert core.legal(None) == (core.window_id, [], core.state.view(None))
    with pytest.raises(errors.NoSuchSeatError):
        core.legal(2)
