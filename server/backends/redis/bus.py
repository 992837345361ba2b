"""Commands for rooms another process runs: sent to the owner, answered, each run once.

The asker publishes the command on the room's command channel; the owner runs it and
answers on the asker's reply channel and in a short-lived reply key (from the commit's own
script when the command committed something: one round trip). Neither side waits for
Redis's reply: the answer is the next thing the asker hears. When no process hears a
command, the script that published it answers "retry" itself. Pub/sub drops what arrives
while a connection is down, so the asker sends a command again each second until answered
(the owner runs each (process, rid) once) and reads the key if the published answer went
missing. A command that may have run on an owner that is gone is failed (`unavailable`),
never run twice; reads are simply asked again.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
from redis.exceptions import RedisError

from dicehall.protocol import errors

from ...hosting.actor import Reply, Rider, RoomActor
from ...rooms.commands import (
    Command,
    CommandType,
    LegalCmd,
    PresenceCmd,
    R,
    ResignCmd,
    SyncCmd,
    TokenCmd,
    WatchCmd,
    result_type,
)
from .backoff import Backoff
from .connect import raw as raw_bytes
from .errors import Gone, Retry
from .keys import command_channel, lease_key, reply_channel, reply_key, snap_key
from .link import Link, Unheard
from .packing import ANSWER, ENCODER, FORWARDED, Answer, AnswerError

if TYPE_CHECKING:
    from .connect import RedisClient

log = logging.getLogger("dicehall.redis")

RETRY_SAFE = (LegalCmd, SyncCmd, TokenCmd, WatchCmd, PresenceCmd, ResignCmd)
"""Commands that may be sent again when their owner vanished before answering: reads,
presence counts, which are not in a snapshot (a new owner counts them from zero), and the
creator's resignation, which does nothing the second time."""

_COMMANDS = msgspec.msgpack.Decoder(CommandType)


@functools.cache
def _result_decoder(cmd: type[Command[R]]) -> msgspec.msgpack.Decoder[R]:
    """A decoder of a command class's result, made the first time one is answered."""
    return msgspec.msgpack.Decoder(result_type(cmd))


def _decode_result(cmd: type[Command[R]], raw: msgspec.Raw) -> R:
    result: R = _result_decoder(cmd).decode(raw)
    return result


def _settle(fut: asyncio.Future[R], cmd: type[Command[R]], answer: Answer) -> None:
    """Give a forwarded command's caller the outcome its owner answered."""
    if fut.done():
        return
    if answer.ok:
        fut.set_result(_decode_result(cmd, answer.result))
    elif answer.retry:
        fut.set_exception(Retry())
    else:
        err = answer.error or {}
        cls = errors.by_code(err.get("code", 0)) or errors.InternalError
        message = err.get("message", "the room's server failed")
        fut.set_exception(cls(message, rule=err.get("rule")))


class RunHere(Protocol):
    """Runs a command on a room this process owns (with its rider, if any)."""

    def __call__(
        self, actor: RoomActor, cmd: Command[R], rider: Rider | None, /
    ) -> Awaitable[R]: ...


class CommandBus:
    def __init__(
        self,
        proc: str,
        link: Callable[[], Link],
        redis: Callable[[], RedisClient],
        *,
        lease_ms: int,
        reply_ms: int,
        cluster: bool,
        actor_of: Callable[[str], RoomActor | None],
        take_over: Callable[[str], Awaitable[bool]],
        run_here: RunHere,
        seen_here: Callable[[str], bool],
    ) -> None:
        self.proc = proc
        self._link = link
        self._redis = redis
        self.lease_ms = lease_ms
        self.reply_ms = reply_ms
        """How long a reply is kept for an asker whose pub/sub connection missed it."""
        self._cluster = cluster
        self._actor_of = actor_of
        self._take_over = take_over
        self._run_here = run_here
        self._seen_here = seen_here
        """Members here have seen the room (so Redis lost it, and its owner rewrites it)."""
        self.replies = reply_channel(proc)
        self.replies_name = self.replies.encode()
        """The reply channel as pub/sub messages name it: compared for every message."""
        self._loop = asyncio.get_running_loop()
        self._owners: dict[str, bytes] = {}
        """The process last known to own each room that commands were forwarded to: no
        GET of the lease per command (a stale entry costs one retry)."""
        self._pending: dict[int, Callable[[Answer], None]] = {}
        """How to settle each forwarded command's future with its answer (`_settle`)."""
        self._served: OrderedDict[tuple[str, int], Answer | None] = OrderedDict()
        """Forwarded commands run lately, by (asking process, rid), with their answers (None:
        running): one sent twice runs once, and the second gets the answer again (the first
        may have been lost, with Redis's data even)."""
        self._ids = itertools.count(1)
        self.forwarded = 0
        """Commands this process sent to another's room (a counter: it never goes down)."""
        self.served = 0
        """Commands this process ran for another (each (process, rid) once)."""

    # --- the asking side ---------------------------------------------------------------

    def owner_of(self, room: str) -> str | None:
        """The process last known to run `room` (None: not known here)."""
        owner = self._owners.get(room)
        return None if owner is None else owner.decode()

    def forget_owner(self, room: str) -> None:
        self._owners.pop(room, None)

    def saw_owner(self, room: str, proc: str) -> None:
        """`proc` published the room's latest messages: it owns the room."""
        if room in self._owners:
            self._owners[room] = proc.encode()

    async def forward(self, room: str, cmd: Command[R]) -> R:
        """Send `cmd` to the room's owner (taking the room over if it has none)."""
        owner = self._owners.get(room)
        if owner is None:
            redis = self._redis()
            held = await redis.get(lease_key(room))
            if held is None:
                if await redis.exists(snap_key(room)):
                    await self._take_over(room)
                    raise Retry
                if self._seen_here(room):  # it was here: Redis lost it; its owner rewrites it
                    raise Retry
                raise errors.NoSuchRoomError(f"no room {room!r}")
            if len(self._owners) >= 10_000:
                self._owners.clear()
            owner = self._owners[room] = raw_bytes(held)
        rid = next(self._ids)
        self.forwarded += 1
        fut: asyncio.Future[R] = self._loop.create_future()
        self._pending[rid] = partial(_settle, fut, type(cmd))
        data = ENCODER.encode({"from": self.proc, "rid": rid, "cmd": cmd})
        # Nobody heard it: the owner is gone, and this process is told to wait it out.
        retry = ENCODER.encode(Answer(rid=rid, ok=False, retry=True))
        unheard = Unheard(reply_key(self.proc, rid), self.replies, retry, self.reply_ms)
        try:
            try:
                try:
                    heard = await self._link().forward(command_channel(room), data, unheard)
                except RedisError:
                    heard = None  # maybe sent: `_answer` sends it again, the owner runs it once
                if heard is False:
                    raise Retry
                return await self._answer(fut, room, owner, rid, data)
            except (RedisError, Gone) as exc:
                self._owners.pop(room, None)
                if isinstance(cmd, RETRY_SAFE):
                    raise Retry from None
                raise errors.UnavailableError(
                    "the room moved to another server while this request was on its way; "
                    "look at the room (resume, legal) before trying again"
                ) from exc
        finally:
            self._pending.pop(rid, None)

    async def _answer(
        self, fut: asyncio.Future[R], room: str, owner: bytes, rid: int, data: bytes
    ) -> R:
        """The owner's answer, from pub/sub or, if that lost it, from its reply key; `Gone`
        once another process holds the lease (the owner died or left), or after two leases
        without an answer.

        While the same owner holds the room the command is sent again each second: a
        command lost with a pub/sub connection (CLIENT KILL, a Redis restart) arrives late
        rather than never, and the owner runs each (process, rid) once."""
        deadline = time.monotonic() + 2 * self.lease_ms / 1000 + 1.0
        resend = time.monotonic() + 1.0
        redis = self._redis()
        while True:
            await self._until_done(fut, 0.25)
            if fut.done():
                return fut.result()
            if time.monotonic() > deadline:
                raise Gone
            try:
                kept = await redis.get(reply_key(self.proc, rid))
                holder = await redis.get(lease_key(room)) if kept is None else owner
            except RedisError:
                continue  # Redis is away: so is the reply, for now
            if kept is not None:
                self.resolve(raw_bytes(kept))
            elif holder not in (None, owner):  # (none: it lapsed, or Redis lost it: wait)
                raise Gone
            elif holder == owner and time.monotonic() > resend:
                resend = time.monotonic() + 1.0
                with contextlib.suppress(RedisError):
                    await self._link().forward(command_channel(room), data, None)

    async def _until_done(self, fut: asyncio.Future[R], timeout: float) -> None:
        """Wait for `fut` at most `timeout` seconds, neither cancelling nor wrapping it:
        `asyncio.wait((fut,), timeout=...)` without its set, and on the kept loop
        (docs/contributing.md, "Hot paths")."""
        if fut.done():
            return
        waiter = self._loop.create_future()

        def wake(_: object = None) -> None:
            if not waiter.done():
                waiter.set_result(None)

        timer = self._loop.call_later(timeout, wake)
        fut.add_done_callback(wake)
        try:
            await waiter
        finally:
            timer.cancel()
            fut.remove_done_callback(wake)

    def resolve(self, data: bytes) -> None:
        """An owner's answer to a forwarded command: the waiting future gets its outcome."""
        try:
            answer = ANSWER.decode(data)
        except msgspec.DecodeError:
            log.warning("dropped a malformed reply: %r", data[:200])
            return
        settle = self._pending.pop(answer.rid, None)
        if settle is not None:
            settle(answer)

    # --- the owner's side --------------------------------------------------------------

    async def serve(self, room: str, data: bytes) -> None:
        """Run a command another process forwarded, once, and answer it."""
        try:
            forwarded = FORWARDED.decode(data)
        except msgspec.DecodeError:
            log.warning("dropped a malformed command for room %s: %r", room, data[:200])
            return
        to, rid = forwarded.sender, forwarded.rid
        key = (to, rid)
        if key in self._served:
            done = self._served[key]
            if done is not None:
                await self._send_answer(to, done)
            return
        self._served[key] = None
        self.served += 1
        while len(self._served) > 1000:
            self._served.popitem(last=False)
        rode = False

        def ride(result: object) -> Reply:
            """A command that commits is answered by its commit's script: one round trip."""
            nonlocal rode
            rode = True
            body = ENCODER.encode(Answer(rid=rid, ok=True, result=_raw(result)))
            return Reply(to, rid, body)

        try:
            cmd = _read_command(room, forwarded.cmd)
            actor = self._actor_of(room)
            if actor is None:
                raise Retry
            # (a cluster keeps the reply's key on the asker's shard, not the room's)
            result = await self._run_here(actor, cmd, None if self._cluster else ride)
            answer = Answer(rid=rid, ok=True, result=_raw(result))
        except Retry:
            answer = Answer(rid=rid, ok=False, retry=True)  # not run here: ask again
        except errors.ProtocolError as exc:
            error: AnswerError = {"code": exc.code, "message": exc.message, "rule": exc.rule}
            answer = Answer(rid=rid, ok=False, error=error)
        except Exception as exc:
            log.exception("forwarded command failed")
            error = {"code": errors.InternalError.code, "message": str(exc), "rule": None}
            answer = Answer(rid=rid, ok=False, error=error)
        if key in self._served:
            self._served[key] = answer
        if not (rode and answer.ok):
            await self._send_answer(to, answer)

    async def _send_answer(self, to: str, answer: Answer) -> None:
        """Kept in a key (retried while Redis is away, as long as the asker waits) and
        published: the asker reads the key if the publish does not reach it."""
        keep = self.reply_ms
        give_up = time.monotonic() + keep / 1000
        backoff = Backoff(ceiling=1.0)
        data = ENCODER.encode(answer)
        while True:
            try:
                await self._link().answer(reply_key(to, answer.rid), data, keep, reply_channel(to))
                return
            except RedisError:
                if time.monotonic() > give_up:
                    return
                await asyncio.sleep(backoff.next())


def _raw(result: object) -> msgspec.Raw:
    return msgspec.Raw(ENCODER.encode(result))


def _read_command(room: str, raw: msgspec.Raw) -> Command[Any]:
    """One of `CommandType`, each with a result type of its own (not known here: what runs
    it gives back that type, and the answer encodes whatever it is)."""
    try:
        cmd: CommandType = _COMMANDS.decode(raw)
    except msgspec.DecodeError as exc:
        log.warning("room %s: a forwarded command I cannot read: %s", room, exc)
        raise errors.UnavailableError(
            f"the room's server cannot read this command ({exc}): another version?"
        ) from None
    return cmd
