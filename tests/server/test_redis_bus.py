"""server/backends/redis/bus.py: commands forwarded to a room's owner when what the bus
counts on goes missing; two servers' parts in one event loop and one real Redis, as in
test_redis_backend.py, and a Redis connection of the test's own that overhears the
commands and answers on their channels.

Each case takes a part away on purpose, through the processes' own pub/sub links: the
owner stops hearing its room's command channel (while someone else does, so Redis counts
the command as heard), the asker stops hearing its reply channel, the lease passes to a
process that does not exist, a command arrives twice or for a room nobody runs here,
Redis itself goes away (its own `redis-server`), a cluster's owner hears nothing (its own
cluster).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
import redis

from dicehall.protocol import errors
from dicehall.protocol.messages import client as requests
from dicehall.protocol.messages.server import Chat
from dicehall.server.backends.redis.keys import command_channel, lease_key, reply_channel, reply_key
from dicehall.server.backends.redis.packing import ANSWER, ENCODER, FORWARDED, Answer, Forwarded
from dicehall.server.edge.process import Server
from dicehall.server.edge.settings import Config
from dicehall.server.rooms.commands import ChatCmd, Command, CommandType, LegalCmd
from tests.support.redis import (
    RedisServer,
    backend_connections,
    committed_seq,
    running_cluster,
    running_redis,
)
from tests.support.wait import eventually

from .connections.test_session import create, hello
from .test_redis_backend import backend, processes, two_seats

COMMANDS: msgspec.msgpack.Decoder[Command[Any]] = msgspec.msgpack.Decoder(CommandType)


@pytest.fixture
def db(redis_server: RedisServer) -> tuple[str, redis.Redis]:
    db = redis_server.fresh_db()
    return redis_server.url_db(db), redis_server.client(db)


def stored(r: redis.Redis, key: str | bytes) -> bytes:
    raw = r.get(key)
    assert isinstance(raw, bytes), f"{key!r}: {raw!r}"
    return raw


class Overheard:
    """Every message on the channels the test's connection subscribed to, in order."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, bytes]] = []

    def on_message(self, channel: bytes, data: bytes) -> None:
        self.messages.append((channel.decode(), data))

    def commands(self, room: str) -> list[tuple[Forwarded, Command[Any]]]:
        """The commands forwarded to the room's owner, each with what it asks."""
        channel = command_channel(room)
        forwarded = [FORWARDED.decode(d) for c, d in self.messages if c == channel]
        return [(f, COMMANDS.decode(f.cmd)) for f in forwarded]

    def answers(self, proc: str) -> list[Answer]:
        channel = reply_channel(proc)
        return [ANSWER.decode(d) for c, d in self.messages if c == channel]


@contextlib.asynccontextmanager
async def overhearing(url: str, *channels: str) -> AsyncIterator[Overheard]:
    heard = Overheard()
    client, link = await backend_connections(url, on_message=heard.on_message)
    try:
        for channel in channels:
            await link.subscribe(channel)
        yield heard
    finally:
        await link.close()
        await client.aclose()


async def test_a_command_lost_on_its_way_is_sent_again_until_the_owner_hears_it_once(
    db: tuple[str, redis.Redis],
) -> None:
    """Redis counted the command as heard (by the test), but not by the owner: pub/sub
    lost it, as it does when the owner's connection drops. The asker sends it again each
    second, the same rid, and the owner that hears it again runs it once."""
    url, r = db
    async with processes(url) as (a, b):
        ada, bo, room = await two_seats(a, b)
        owner = backend(a)
        served = owner.bus.served
        async with overhearing(url, command_channel(room)) as heard:
            await owner.link.unsubscribe(command_channel(room))
            said = asyncio.ensure_future(bo.ask(requests.SendChat, room=room, text="again"))
            try:
                await eventually(lambda: len(heard.commands(room)) >= 2, "a second send")
                assert not said.done()
                [rid] = {f.rid for f, _ in heard.commands(room)}
                assert all(isinstance(cmd, ChatCmd) for _, cmd in heard.commands(room))
                await owner.link.subscribe(command_channel(room))
                chat = await asyncio.wait_for(said, 10)
            finally:
                said.cancel()
        assert owner.bus.served == served + 1
        assert chat.seq == committed_seq(r, room)
        chats = [m for m in ada.stream(room) if isinstance(m, Chat)]
        assert [(c.seq, c.text) for c in chats] == [(chat.seq, "again")]
        assert rid in {f.rid for f, _ in heard.commands(room)}


async def test_an_owner_that_keeps_its_lease_but_never_hears_fails_a_write_and_retries_a_read(
    db: tuple[str, redis.Redis],
) -> None:
    """After two leases without an answer the asker gives up on the owner: a chat, which
    may have run, fails `unavailable` (never run twice); a read is asked again (a new rid)
    and answered once the owner hears again."""
    url, r = db
    async with processes(url, lease_ms=1000) as (a, b):
        _, bo, room = await two_seats(a, b)
        owner = backend(a)
        before = committed_seq(r, room)
        async with overhearing(url, command_channel(room)) as heard:
            await owner.link.unsubscribe(command_channel(room))

            def asked(kind: type[Command[Any]]) -> set[int]:
                return {f.rid for f, cmd in heard.commands(room) if isinstance(cmd, kind)}

            chat = asyncio.ensure_future(bo.ask(requests.SendChat, room=room, text="lost"))
            legal = asyncio.ensure_future(bo.ask(requests.Legal, room=room))
            try:
                with pytest.raises(errors.UnavailableError, match="moved to another server"):
                    await asyncio.wait_for(chat, 10)
                await eventually(lambda: len(asked(LegalCmd)) == 2, "the read asked anew")
                assert not legal.done()
                await owner.link.subscribe(command_channel(room))
                with pytest.raises(errors.NotStartedError):  # the owner's own answer
                    await asyncio.wait_for(legal, 10)
            finally:
                chat.cancel()
                legal.cancel()
        assert len(asked(ChatCmd)) == 1, "a write is never asked anew"
        assert committed_seq(r, room) == before, "the chat never ran"


async def test_a_command_whose_room_passed_to_another_process_fails_at_once(
    db: tuple[str, redis.Redis],
) -> None:
    """The lease now names another process: the owner asked is gone, and the asker does
    not wait out its two leases."""
    url, r = db
    async with processes(url) as (a, b):  # (2 s leases: the asker would wait 5 s)
        _, bo, room = await two_seats(a, b)
        owner = backend(a)
        async with overhearing(url, command_channel(room)) as heard:
            await owner.link.unsubscribe(command_channel(room))
            chat = asyncio.ensure_future(bo.ask(requests.SendChat, room=room, text="moved"))
            try:
                await eventually(lambda: bool(heard.commands(room)), "the command sent")
                r.set(lease_key(room), b"proc-elsewhere", px=60_000)
                started = time.monotonic()
                with pytest.raises(errors.UnavailableError, match="moved to another server"):
                    await asyncio.wait_for(chat, 10)
            finally:
                chat.cancel()
        assert time.monotonic() - started < 2 * owner.lease_ms / 1000
        assert backend(b).bus.owner_of(room) is None, "the owner it knew is forgotten"


@pytest.mark.parametrize("kind", ["chat", "legal"])
async def test_an_answer_whose_publish_is_lost_is_read_from_its_key(
    db: tuple[str, redis.Redis], kind: str
) -> None:
    """The asker's pub/sub connection misses the answer (a chat's, from the commit's own
    script; a read's, sent on its own): it reads the answer's key instead."""
    url, r = db
    async with processes(url) as (a, b):
        _, bo, room = await two_seats(a, b)
        asker = backend(b)
        keys = reply_key(asker.proc, 0).removesuffix("0") + "*"
        before = set(r.keys(keys))
        await asker.link.unsubscribe(asker.bus.replies)
        assert r.pubsub_numsub(asker.bus.replies)[0][1] == 0
        if kind == "chat":
            chat = await asyncio.wait_for(bo.ask(requests.SendChat, room=room, text="kept"), 10)
            assert chat.seq == committed_seq(r, room)
        else:
            with pytest.raises(errors.NotStartedError):
                await asyncio.wait_for(bo.ask(requests.Legal, room=room), 10)
        [key] = set(r.keys(keys)) - before
        assert ANSWER.decode(stored(r, key)).ok == (kind == "chat")


async def test_a_command_served_already_is_answered_again_and_not_run_again(
    db: tuple[str, redis.Redis],
) -> None:
    """The same (process, rid) twice (the asker sent it again; the first answer was
    lost): the owner answers with the answer it kept."""
    url, r = db
    async with processes(url) as (a, b):
        ada, bo, room = await two_seats(a, b)
        owner, asker = backend(a), backend(b)
        async with overhearing(url, command_channel(room), asker.bus.replies) as heard:
            chat = await bo.ask(requests.SendChat, room=room, text="once")
            [(forwarded, _)] = heard.commands(room)
            await eventually(lambda: len(heard.answers(asker.proc)) == 1, "the first answer")
            served = owner.bus.served
            assert r.publish(command_channel(room), ENCODER.encode(forwarded)) == 2
            await eventually(lambda: len(heard.answers(asker.proc)) == 2, "the answer again")
        first, again = heard.answers(asker.proc)
        assert again == first
        assert again.rid == forwarded.rid and again.ok
        assert msgspec.msgpack.decode(again.result) == chat.seq
        assert owner.bus.served == served
        assert committed_seq(r, room) == chat.seq
        assert [m.text for m in ada.stream(room) if isinstance(m, Chat)] == ["once"]


async def test_commands_the_owner_cannot_run_are_answered_retry_or_unavailable(
    db: tuple[str, redis.Redis],
) -> None:
    """A command for a room this process does not run (it moved on) is answered "ask
    again"; one it cannot read (another version's) is answered `unavailable`: either way
    the asker hears back at once instead of waiting out the leases."""
    url, r = db
    async with processes(url, n=1) as (a,):
        owner = backend(a)
        room = await create(await hello(a, "Ada"), "qwixx", 2)
        asker = "proc-test"
        ghost = "nosuchroom"
        await owner.link.subscribe(command_channel(ghost))
        async with overhearing(url, reply_channel(asker)) as heard:
            legal = ENCODER.encode(LegalCmd(seat=None, view=False))
            unreadable = msgspec.msgpack.encode({"cmd": "from-the-future"})
            for channel, rid, cmd in (
                (command_channel(ghost), 1, legal),
                (command_channel(room), 2, unreadable),
            ):
                data = ENCODER.encode(Forwarded(sender=asker, rid=rid, cmd=msgspec.Raw(cmd)))
                assert r.publish(channel, data) >= 1
            await eventually(lambda: len(heard.answers(asker)) == 2, "both answered")
        answers = {x.rid: x for x in heard.answers(asker)}
        assert answers[1].retry and not answers[1].ok
        assert not answers[2].ok and not answers[2].retry and answers[2].error is not None
        assert answers[2].error["code"] == errors.UnavailableError.code
        assert ANSWER.decode(stored(r, reply_key(asker, 2))) == answers[2], "kept for the asker"


async def test_a_command_asked_and_one_answered_while_redis_is_away_get_through() -> None:
    """Redis goes away (and comes back empty) with a command on its way each way: the
    asker's publish fails, so it asks again once Redis is back, and the owner's answer is
    sent again until Redis takes it. (The bus's own calls, made while Redis is down: a
    member's request would be refused then, once the process sees Redis is gone.)"""
    with running_redis() as away:
        async with processes(away.url) as (a, b):
            _, _, room = await two_seats(a, b)
            owner, asker = backend(a), backend(b)
            assert asker.bus.owner_of(room) == owner.proc  # (known: no GET of the lease)
            forwarded = asker.bus.forwarded
            away.stop()
            both = (owner, asker)
            await eventually(lambda: not any(x.health.answering for x in both), "Redis missed")
            asked = asyncio.ensure_future(asker.bus.forward(room, LegalCmd(seat=1, view=False)))
            legal = msgspec.Raw(ENCODER.encode(LegalCmd(seat=None, view=False)))
            served = Forwarded(sender="proc-test", rid=1, cmd=legal)
            answering = asyncio.ensure_future(owner.bus.serve(room, ENCODER.encode(served)))
            try:
                await eventually(lambda: asker.bus.forwarded == forwarded + 1, "the forward")
                assert not answering.done() and not asked.done()
                await asyncio.to_thread(away.start)
                await asyncio.wait_for(answering, 10)
                with pytest.raises(errors.NotStartedError):  # (the owner's answer)
                    await asyncio.wait_for(asked, 10)
            finally:
                asked.cancel()
                answering.cancel()
            with away.client() as r:
                kept = ANSWER.decode(stored(r, reply_key("proc-test", 1)))
            assert kept.rid == 1 and kept.error is not None
            assert kept.error["code"] == errors.NotStartedError.code


async def test_in_a_cluster_a_command_nobody_heard_is_sent_anew_until_the_owner_hears_it() -> None:
    """Sharded pub/sub says how many heard a command: none, and it never ran anywhere, so
    even a write is sent again (a new rid) until the owner hears it; it runs once."""
    with running_cluster(3) as nodes:
        servers = [Server(Config(redis=nodes.url, redis_cluster=True)) for _ in range(2)]
        started: list[Server] = []
        try:
            for server in servers:
                await server.start()
                started.append(server)
            a, b = servers
            ada, bo, room = await two_seats(a, b)
            owner, asker = backend(a), backend(b)
            channel = command_channel(room)
            await owner.link.unsubscribe(channel)

            async def nobody_listens() -> bool:  # (the unsubscribe is not waited for)
                counts = await asyncio.to_thread(
                    lambda: [n.cli("pubsub", "shardnumsub", channel) for n in nodes.nodes]
                )
                return all(out.split()[-1] == "0" for out in counts)

            await eventually(nobody_listens, "the owner's unsubscribe")
            before = asker.bus.forwarded
            said = asyncio.ensure_future(bo.ask(requests.SendChat, room=room, text="anew"))
            try:
                await eventually(lambda: asker.bus.forwarded >= before + 3, "sent anew")
                assert not said.done()
                await owner.link.subscribe(channel)
                chat = await asyncio.wait_for(said, 10)
            finally:
                said.cancel()
            chats = [m for m in ada.stream(room) if isinstance(m, Chat)]
            assert [(c.seq, c.text) for c in chats] == [(chat.seq, "anew")]
        finally:
            for server in reversed(started):
                await server.stop()
