"""The journal: a snapshot plus the commands run since reach the room of the last commit.

Sans I/O: commands go through `execute.execute` as the actor runs them, with the time
each ran; a snapshot is taken partway and the rest is replayed onto a copy, for every
game, with joins, leaves, presence, chat, spectators, time-outs and the host role mixed in.
"""

from __future__ import annotations

import contextlib
from random import Random
from typing import Any

import msgspec
import pytest

from dicehall.protocol.errors import ProtocolError
from dicehall.rules import all_games, get_game
from dicehall.server.hosting import journal
from dicehall.server.hosting.actor import Entry, execute, kept
from dicehall.server.rooms import snapshot
from dicehall.server.rooms.commands import (
    ActCmd,
    AddBotsCmd,
    ChatCmd,
    Command,
    ExpireCmd,
    JoinCmd,
    LegalCmd,
    PresenceCmd,
    StartCmd,
    SyncCmd,
    TokenCmd,
    WatchCmd,
)
from dicehall.server.rooms.outgoing import Outgoing
from dicehall.server.rooms.room import RoomCore


def run(core: RoomCore, cmd: Command[Any], now: float, ran: list[Entry]) -> list[Outgoing]:
    _, out = execute(core, cmd, now)
    if kept(cmd):
        ran.append((cmd, now))
    return out


def a_command(core: RoomCore, rng: Random, now: float) -> Command[Any]:
    """What a session might send now: mostly answers, sometimes anything else."""
    assert core.state is not None
    roll = rng.random()
    if roll < 0.05:
        return ExpireCmd()
    if roll < 0.10:
        return PresenceCmd(seat=rng.randrange(len(core.seats)), delta=rng.choice((-1, 1)))
    if roll < 0.13:
        return WatchCmd(delta=rng.choice((-1, 1)))
    if roll < 0.16:
        return ChatCmd(seat=0, sender="P0", text=f"hi {now}")
    if roll < 0.19:  # seat 0's token used, by its player or another (the seat takes it)
        return TokenCmd(seat=0, nonce="n0", player=rng.choice(("p0", "p9", None)))
    seat = rng.choice(core.state.actors())
    action = rng.choice(core.state.legal_actions(seat))
    return ActCmd(seat=seat, action=action, window=core.window_id)


@pytest.mark.parametrize("game", [g.name for g in all_games()])
def test_a_snapshot_and_the_commands_since_make_the_same_room(game: str) -> None:
    rng = Random(game)
    core = RoomCore("r1", get_game(game), get_game(game).resolve_options(), 3, 30)
    kept: list[Entry] = []
    log: list[Outgoing] = []
    now = 1_000.0
    log += run(core, JoinCmd(name="P0", seat=0, nonce="n0", host_key=None, player="p0"), now, kept)
    log += run(core, JoinCmd(name="P1", seat=1, nonce="n1"), now, kept)
    log += run(core, AddBotsCmd(kind="random", count=None, seat=0), now, kept)
    log += run(core, StartCmd(seat=0), now, kept)
    snap_at = rng.randrange(3, 30)
    data: bytes | None = None
    for i in range(80):
        if core.status != "playing":
            break
        if i == snap_at:
            data = msgspec.msgpack.encode(core.save())
            since = len(kept)
        now += rng.uniform(0.1, 40.0)
        with contextlib.suppress(ProtocolError):  # refused: changes nothing, not kept
            log += run(core, a_command(core, rng, now), now, kept)
        run(core, LegalCmd(seat=0), now, kept)  # reads are not kept
    assert data is not None
    # (Redis holds the record's log as of the last commit)
    restored = RoomCore.restore(
        snapshot.decode(data), record_log=bytes(core.record_log.data), presence=True
    )
    batch = journal.encode(kept[since:])
    ran = journal.replay(restored, [batch], {o.seq: o for o in log})
    assert ran == len(kept) - since
    assert restored.save() == core.save()
    assert restored.record == core.record
    assert restored.players() == core.players()


def test_reads_are_not_kept() -> None:
    assert not kept(LegalCmd(seat=0))
    # a token that holds gives the seat its new holder's player and `legal_in_window` wish
    assert kept(TokenCmd(seat=0, nonce="x"))
    assert kept(TokenCmd(seat=0, nonce="x", player="p", legal=True))
    assert not kept(SyncCmd(seat=0))
    assert kept(SyncCmd(seat=None, watch=1))  # a spectator counted in
    assert kept(ExpireCmd())


def test_a_replay_that_differs_from_the_log_is_refused() -> None:
    game = get_game("qwixx")
    core = RoomCore("r1", game, game.resolve_options(), 2, 30)
    kept: list[Entry] = []
    run(core, JoinCmd(name="P0", seat=0, nonce="n0"), 1.0, kept)
    data = core.save()
    log = run(core, JoinCmd(name="P1", seat=1, nonce="n1"), 2.0, kept)
    forged = RoomCore("r1", game, game.resolve_options(), 2, 30)
    forged.join("P0", 0, "n0", 1.0)
    other = forged.join("Someone else", 1, "n1", 2.0)[1]
    with pytest.raises(journal.JournalError):
        journal.replay(
            RoomCore.restore(data, presence=True),
            [journal.encode(kept[1:])],
            {o.seq: o for o in other},
        )
    restored = RoomCore.restore(data, presence=True)
    journal.replay(restored, [journal.encode(kept[1:])], {o.seq: o for o in log})
    assert restored.seats[1].name == "P1"
