"""A room a failover took back to an earlier point (docs/protocol.md, "Epochs"), as its
members see it: the rewind is made here by hand on the real room (`RoomCore.rewind`,
then the hub told, as the Redis relay does), with the real sessions and streams.
"""

from __future__ import annotations

import asyncio

import pytest

from dicehall.protocol import errors
from dicehall.protocol.features import EPOCHS
from dicehall.protocol.messages import client as requests
from dicehall.protocol.messages.server import Snapshot
from dicehall.server.edge.process import Server
from dicehall.server.rooms.room import RoomCore

from .test_session import contiguous, hello, running, seated_pair


def core_of(server: Server, room: str) -> RoomCore:
    core = server.backend.local_room(room)
    assert core is not None
    return core


async def test_resume_says_the_epoch_and_takes_it_only_with_the_feature() -> None:
    async with running() as server:
        ada, _, room, token = await seated_pair(server)
        last_seq = ada.stream(room)[-1].seq
        await ada.session.disconnected()
        plain = await hello(server, "Ada", [token])
        with pytest.raises(errors.InvalidMessageError, match=EPOCHS):
            await plain.ask(requests.Resume, room=room, last_seq=last_seq, epoch=0)
        resumed = await plain.ask(requests.Resume, room=room, last_seq=last_seq)
        assert (resumed.mode, resumed.epoch) == ("events", 0)


async def test_after_a_rewind_only_a_member_that_saw_past_it_gets_a_snapshot() -> None:
    async with running() as server:
        ada, bo, room, token = await seated_pair(server)
        core = core_of(server, room)
        point = core.seq
        await bo.ask(requests.SendChat, room=room, text="lost, as far as the room knows")
        saw_lost = ada.stream(room)[-1].seq
        assert saw_lost > point
        await ada.session.disconnected()
        # taken back to `point`: what followed never happened, and the seqs go on anew
        core.seq = point
        core.rewind()
        await bo.ask(requests.SendChat, room=room, text="the new history")

        back = await hello(server, "Ada", [token], features=(EPOCHS,))
        mark = len(back.out)
        resumed = await back.ask(requests.Resume, room=room, last_seq=saw_lost, epoch=0)
        assert (resumed.mode, resumed.epoch) == ("snapshot", 1)
        caught = back.stream(room, mark)
        assert isinstance(caught[0], Snapshot) and caught[0].epoch == 1
        assert caught[0].seq == resumed.seq == core.seq

        # one that stopped at the point, or that saw this epoch, gets events
        for last, epoch in ((point, 0), (point, None), (point + 1, 1)):
            fields = {} if epoch is None else {"epoch": epoch}
            again = await back.ask(requests.Resume, room=room, last_seq=last, **fields)
            assert (again.mode, again.epoch) == ("events", 1), (last, epoch)
        # without the feature's epoch, past the point is a snapshot: maybe lost ones
        plain = await hello(server, "Ada", [token])
        resumed = await plain.ask(requests.Resume, room=room, last_seq=point + 1)
        assert resumed.mode == "snapshot"


async def test_a_connected_member_gets_a_snapshot_unasked_then_the_new_messages() -> None:
    async with running() as server:
        ada, bo, room, _ = await seated_pair(server)
        core = core_of(server, room)
        point = core.seq
        await bo.ask(requests.SendChat, room=room, text="lost")
        mark = len(ada.out)
        core.seq = point
        core.rewind()
        server.hub.rewound(room)  # (what the relay does when it sees the new epoch)
        await bo.ask(requests.SendChat, room=room, text="new 1")  # held until the snapshot
        for _ in range(100):
            if any(isinstance(m, Snapshot) for m in ada.stream(room, mark)):
                break
            await asyncio.sleep(0)
        await bo.ask(requests.SendChat, room=room, text="new 2")
        stream = ada.stream(room, mark)
        assert isinstance(stream[0], Snapshot) and stream[0].epoch == 1
        assert stream[0].seq <= point + 1
        assert contiguous(stream)[-1] == core.seq == point + 2
        assert [m.text for m in stream[1:] if hasattr(m, "text")][-1] == "new 2"
