"""`--durability behind` with two servers' parts in one event loop and one real Redis
(as tests/server/test_redis_backend.py): commits shown at once and written a period
later, all rooms in one write; a drain writes everything and keeps the epoch; a takeover
from what was written starts a new epoch, and every member is brought into it.
"""

from __future__ import annotations

from typing import Any

import redis

from dicehall.protocol.messages import client as requests
from dicehall.protocol.messages.server import Chat, Snapshot
from dicehall.server.backends.redis.keys import lease_key
from tests.support.redis import committed_log, committed_seq, lease_owner, written_seq
from tests.support.wait import eventually

from .connections.test_session import contiguous, create, hello
from .test_redis_backend import backend, db, processes, two_seats

__all__ = ["db"]  # (the fixture)


def behind(url: str, n: int, period_ms: int, lease_ms: int = 2000) -> Any:
    """`processes` writing their rooms behind, every `period_ms`."""
    return processes(url, n, lease_ms, durability="behind", write_behind_ms=period_ms)


async def test_a_commit_is_shown_at_once_and_every_room_written_once_a_period(
    db: tuple[str, redis.Redis],
) -> None:
    url, r = db
    async with behind(url, 1, 400) as (a,):
        host = await hello(a, "Ada")
        rooms = [await create(host, "qwixx", 2) for _ in range(3)]
        await eventually(lambda: all(r.exists(lease_key(room)) for room in rooms))
        await eventually(lambda: not backend(a).leases.writer.due)
        before = [written_seq(r, room) for room in rooms]
        writes = backend(a).leases.writer.writes
        for room in rooms:
            await host.ask(requests.Join, room=room)
            for i in range(3):
                chat = await host.ask(requests.SendChat, room=room, text=f"{i}")
                assert host.stream(room)[-1].seq == chat.seq  # shown, before any write
        assert [written_seq(r, room) for room in rooms] == before
        await eventually(
            lambda: all(written_seq(r, room) == host.stream(room)[-1].seq for room in rooms)
        )
        # one write per room, not per commit (4 commits each: the join and 3 lines)
        assert backend(a).leases.writer.writes - writes == len(rooms)
        for room in rooms:
            log = committed_log(r, room)
            assert [log[m.seq].for_seat(0) for m in host.stream(room)[1:]] == host.stream(room)[1:]


async def test_a_drain_writes_everything_and_the_next_owner_keeps_the_epoch(
    db: tuple[str, redis.Redis],
) -> None:
    url, r = db
    async with behind(url, 1, 60_000, 10_000) as (a,), behind(url, 1, 60_000, 10_000) as (b,):
        ada, bo, room = await two_seats(a, b, turn_window=600)
        for i in range(5):
            await ada.ask(requests.SendChat, room=room, text=f"{i}")
        shown = ada.stream(room)[-1].seq
        assert written_seq(r, room) < shown  # (a minute's period: nothing written yet)
        await a.stop()
        await eventually(lambda: backend(b).local_room(room) is not None, timeout=5.0)
        core = backend(b).local_room(room)
        assert core is not None and core.epoch == 0 and lease_owner(r, room) == backend(b).proc
        assert committed_seq(r, room) >= shown
        await eventually(lambda: bo.stream(room)[-1].seq >= shown)
        contiguous(bo.stream(room))
        assert not any(isinstance(m, Snapshot) for m in bo.stream(room)[1:])


async def test_a_takeover_from_what_was_written_brings_members_elsewhere_into_a_new_epoch(
    db: tuple[str, redis.Redis],
) -> None:
    """A writes once a minute and loses its lease (as if it froze) with lines shown and not
    written: B takes the room over from what A wrote, in epoch 1. Bo, on B, saw those lines
    too (published at once: he is elsewhere), and is taken back: a snapshot unasked, then
    the new messages only. (A's own members reconnect and resume:
    tests/e2e/test_failover.py.)"""
    url, r = db
    async with behind(url, 2, 60_000, 60_000) as (a, b):
        ada, bo, room = await two_seats(a, b, turn_window=600)
        await backend(a).leases.writer.write_now(room)
        point = written_seq(r, room)
        assert point == ada.stream(room)[-1].seq
        for i in range(3):
            await ada.ask(requests.SendChat, room=room, text=f"lost {i}")
        assert ada.stream(room)[-1].seq == point + 3 and written_seq(r, room) == point
        lost = ["lost 0", "lost 1", "lost 2"]
        await eventually(lambda: [x.text for x in bo.stream(room) if isinstance(x, Chat)] == lost)

        r.delete(lease_key(room))  # as if A had frozen past its lease
        await eventually(lambda: backend(b).local_room(room) is not None, timeout=10.0)
        core = backend(b).local_room(room)
        assert core is not None and (core.epoch, core.seq) == (1, point)
        await eventually(lambda: any(isinstance(m, Snapshot) for m in bo.stream(room)[1:]))
        await bo.ask(requests.SendChat, room=room, text="after")
        stream = bo.stream(room)
        last = max(i for i, x in enumerate(stream) if isinstance(x, Snapshot))
        assert stream[last].epoch == 1 and stream[last].seq >= point
        contiguous(stream[last:])
        assert [x.text for x in stream[last:] if isinstance(x, Chat)] == ["after"]


async def test_members_elsewhere_see_a_commit_before_it_is_written(
    db: tuple[str, redis.Redis],
) -> None:
    """Once a write's publish reached B (Bo is there), A publishes what the room makes at
    once, not a period later with its write: Bo sees Ada's lines while Redis has none."""
    url, r = db
    async with behind(url, 2, 60_000, 60_000) as (a, b):
        ada, bo, room = await two_seats(a, b, turn_window=600)
        await backend(a).leases.writer.write_now(room)  # (its publish reached B)
        point = written_seq(r, room)
        await eventually(lambda: bo.stream(room)[-1].seq == point)
        for i in range(3):
            await ada.ask(requests.SendChat, room=room, text=f"{i}")
        await eventually(
            lambda: [x.text for x in bo.stream(room) if isinstance(x, Chat)] == ["0", "1", "2"]
        )
        assert written_seq(r, room) == point  # (a minute's period: nothing written yet)
        contiguous(bo.stream(room))
