"""A room taken over from its snapshot behaves exactly as the original would have."""

from __future__ import annotations

import json
from dataclasses import dataclass
from random import Random
from typing import Any

import msgspec
import pytest

from dicehall.rules import all_games, get_game
from dicehall.server.rooms import snapshot
from dicehall.server.rooms.room import RoomCore
from dicehall.server.rooms.snapshot import SavedRoom


def playing_room(game: str, seats: int, seed: bytes) -> RoomCore:
    core = RoomCore("r1", get_game(game), get_game(game).resolve_options(), seats, 30, seed=seed)
    for i in range(seats):
        core.join(f"P{i}", i, f"nonce{i}", now=0.0)
    core.start(now=0.0)
    return core


def step(core: RoomCore, rng: Random, now: float) -> list[dict[str, object]]:
    """One action of a random actor (or an expiry), returning the messages as builtins."""
    assert core.state is not None
    if rng.random() < 0.1:
        out = core.expire(now + 10_000)
    else:
        seat = rng.choice(core.state.actors())
        action = rng.choice(core.state.legal_actions(seat))
        out = core.act(seat, action, core.window_id, now)
    return [msgspec.to_builtins(o.message) for o in out]


@pytest.mark.parametrize("game", [g.name for g in all_games()])
def test_a_restored_room_continues_identically(game: str) -> None:
    original = playing_room(game, 2, bytes(32))
    rng = Random(game)
    for _ in range(15):
        if original.status == "over":
            break
        step(original, rng, 1.0)
    data = snapshot.decode(msgspec.msgpack.encode(original.save()))
    restored = RoomCore.restore(
        data, record_log=bytes(original.record_log.data) + b"later", presence=True
    )
    assert restored.save() == original.save()
    assert restored.snapshot(0) == original.snapshot(0)
    a, b = Random(7), Random(7)
    while original.status != "over":
        assert step(original, a, 2.0) == step(restored, b, 2.0)
    assert restored.record == original.record
    assert restored.status == "over"


def as_map(saved: SavedRoom) -> dict[str, Any]:
    """A snapshot as the map it is written as (what an earlier version wrote, and read)."""
    data: dict[str, Any] = msgspec.msgpack.decode(msgspec.msgpack.encode(saved))
    return data


def read(data: dict[str, Any], **options: Any) -> RoomCore:
    return RoomCore.restore(snapshot.decode(msgspec.msgpack.encode(data)), **options)


def test_snapshots_of_the_previous_formats_are_read() -> None:
    """Formats 1 (record log as maps) and 2 (its bytes inside) may still be in Redis
    during a rolling upgrade."""
    original = playing_room("qwixx", 2, bytes(32))
    rng = Random(1)
    for _ in range(10):
        step(original, rng, 1.0)
    original.forget_presence()  # (an earlier format kept none)
    data = as_map(original.save())
    old = {k: v for k, v in data.items() if k not in ("record_bytes", "record_entries")}
    one = old | {"format": 1, "record": original.record}
    two = old | {
        "format": 2,
        "record_log": bytes(original.record_log.data),
        "record_entries": original.record_log.count,
    }
    for previous in (json.loads(json.dumps(one)), two):
        restored = read(previous)
        assert restored.record == original.record
        assert restored.save() == original.save()


def test_what_this_version_writes_has_the_keys_the_previous_one_reads() -> None:
    """The previous version read the map by these keys (the optional ones with a default):
    during a rolling upgrade each reads what the other writes."""
    required = {
        *("format", "id", "game", "options", "turn_window", "public", "name", "autostart"),
        *("host_key", "seats", "status", "seed", "state", "seq", "window", "deadline"),
        *("done", "last_activity", "record", "record_bytes", "record_entries"),
    }
    optional = {"host", "spectators", "answers"}
    core = playing_room("qwixx", 2, bytes(32))
    keys = set(as_map(core.save()))
    assert required <= keys <= required | optional
    seat = as_map(core.save())["seats"][0]
    assert (
        {"kind", "name", "nonce", "bot"}
        <= set(seat)
        <= {*("kind", "name", "nonce", "bot", "connected", "left", "player", "legal")}
    )
    # `player` is new within format 5: the previous version's seat passes over it
    assert msgspec.msgpack.decode(msgspec.msgpack.encode(seat), type=PreviousSeat) == (
        PreviousSeat("human", "P0", "nonce0", None, 1, False)
    )


@dataclass
class PreviousSeat:
    """server/rooms/seat.py's Seat before the `identity` feature, as that version reads one."""

    kind: str = "open"
    name: str | None = None
    nonce: str | None = None
    bot: str | None = None
    connected: int = 0
    left: bool = False


def test_a_seat_keeps_its_player_through_a_snapshot_and_an_old_one_has_none() -> None:
    core = RoomCore("r3", get_game("qwixx"), get_game("qwixx").resolve_options(), 3, 30)
    core.join("Ann", 0, "n0", now=0.0, player="Zq4mR8tWc2Lx0bNs")
    core.join("Bob", 1, "n1", now=0.0)  # (a connection without an identity)
    core.add_bots("strong", None, now=0.0)
    assert core.players() == ["Zq4mR8tWc2Lx0bNs", None, "house:strong"]
    restored = read(as_map(core.save()), presence=True)
    assert restored.players() == core.players()
    assert restored.save() == core.save()
    written_before = as_map(core.save())
    for seat in written_before["seats"]:
        del seat["player"]
    assert read(written_before).players() == [None, None, None]


def test_a_record_log_shorter_than_the_snapshot_says_is_refused() -> None:
    original = playing_room("qwixx", 2, bytes(32))
    step(original, Random(2), 1.0)
    log = bytes(original.record_log.data)
    assert RoomCore.restore(original.save(), record_log=log).record == original.record
    with pytest.raises(snapshot.SnapshotError):
        RoomCore.restore(original.save(), record_log=log[:-1])


def test_presence_restarts_from_zero_but_bots_stay() -> None:
    core = RoomCore("r2", get_game("qwixx"), get_game("qwixx").resolve_options(), 2, 30)
    core.join("Ann", 0, "n", now=0.0)
    core.add_bots("random", None, now=0.0)
    restored = RoomCore.restore(core.save())
    assert [s.connected for s in restored.seats] == [0, 1]
    assert restored.host == 0  # the host role is kept, with the seat
    assert restored.check_token(0, "n")
    with pytest.raises(snapshot.SnapshotError):
        read({**as_map(core.save()), "format": 99})
    with pytest.raises(snapshot.SnapshotError):
        snapshot.decode(msgspec.msgpack.encode({"format": 5, "id": "r2"}))


@pytest.mark.parametrize("game", ["qwinto", "qwixx"])
def test_answers_kept_back_are_in_the_snapshot_and_come_out_when_the_window_resolves(
    game: str,
) -> None:
    original = playing_room(game, 3, bytes(32))
    assert original.state is not None
    while len(original.state.actors()) < 3:  # (Qwinto: the active seat chooses dice first)
        seat = original.state.actors()[0]
        original.act(seat, original.state.legal_actions(seat)[0], original.window_id, 1.0)
    assert original.act(1, {"type": "pass"}, original.window_id, 1.0) == []
    progress = original.progress()
    assert progress is not None and progress.answered == [1]
    data = snapshot.decode(msgspec.msgpack.encode(original.save()))
    restored = RoomCore.restore(data, record_log=bytes(original.record_log.data), presence=True)
    assert restored.progress() == progress
    a, b = Random(3), Random(3)
    while original.status != "over":
        assert step(original, a, 2.0) == step(restored, b, 2.0)


def test_a_format_4_snapshot_has_no_answers_kept_back() -> None:
    """Before format 5 every answer was shown (and committed) as it came."""
    original = playing_room("qwixx", 2, bytes(32))
    data = as_map(original.save())
    data.pop("answers", None)  # (written only when some are kept back)
    restored = read(data | {"format": 4}, record_log=bytes(original.record_log.data))
    assert restored.progress() is None and restored.save().answers == []


def test_an_epoch_and_the_seq_every_epoch_shares_go_through_a_snapshot() -> None:
    core = playing_room("qwixx", 2, bytes(32))
    rng = Random(1)
    for _ in range(4):
        step(core, rng, 1.0)
    core.rewind()
    seq = core.seq
    data = snapshot.decode(msgspec.msgpack.encode(core.save()))
    restored = RoomCore.restore(data, record_log=bytes(core.record_log.data), presence=True)
    assert (restored.epoch, restored.kept_seq) == (1, seq)
    assert restored.snapshot(0).epoch == 1
    # the previous version's snapshots have neither: epoch 0
    old = as_map(core.save())
    del old["epoch"], old["kept_seq"]
    older = snapshot.decode(msgspec.msgpack.encode(old))
    assert (older.epoch, older.kept_seq) == (0, 0)


def test_a_member_continues_only_where_every_epoch_agrees_or_its_epoch_is_the_rooms() -> None:
    core = playing_room("qwixx", 2, bytes(32))
    rng = Random(2)
    while core.seq < 10:
        step(core, rng, 1.0)
    point = core.seq
    # epoch 0: anything up to the room's seq continues, with or without an epoch
    assert core.continues(point, None) and core.continues(3, 0)
    assert not core.continues(point + 1, None)
    core.rewind()  # taken back here: a member may have seen point + 1... of epoch 0
    while core.seq < point + 4:
        step(core, rng, 1.0)
    assert core.continues(point, None) and core.continues(point, 0)  # nothing past it
    assert not core.continues(point + 2, None) and not core.continues(point + 2, 0)
    assert core.continues(point + 2, 1)  # seen in this epoch: the same messages
    later = core.seq
    core.rewind()  # again, further on: the lowest point is what every epoch shares
    assert (core.epoch, core.kept_seq) == (2, point)
    assert not core.continues(point + 2, 1) and core.continues(later, 2)
    assert core.continues(point - 1, 1)
