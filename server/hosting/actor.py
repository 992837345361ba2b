"""A room as an actor: one task, one inbox, one timer for the open window's deadline.

Everything that changes a room passes through it in turn (in the caller's task when the
room is idle, else through its inbox), so the room needs no lock and its messages leave in
sequence order. After a command that made messages the actor hands them to its host's
`commit` (server/hosting/host.py: the store makes them durable, then the hub shows them)
and, when that must be waited for, awaits it before it answers the caller or takes the
next command: nothing is shown that is not committed, and the only thing acknowledged
before its commit is an answer a shared window keeps back, which shows nothing
(rules/base.py, `held_answer`; `RoomCore.act`). The deadline is an absolute time
kept in the core: the timer is only a reminder, re-armed whenever the core's deadline
changes.

Compiled (server/compiled.py): every request to a room passes here, and every command meets
its room in `execute`. Its waiting (the room's task, a commit that must be awaited,
stopping) is in server/hosting/room_task.py, which imports this module and is handed to each
actor as `run`: a compiled module holds no coroutine and imports none of those modules
(docs/contributing.md, "Hot paths").
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from dicehall.protocol.errors import ProtocolError

from ..rooms.commands import (
    ActCmd,
    AddBotsCmd,
    ChatCmd,
    Command,
    ExpireCmd,
    JoinCmd,
    LeaveCmd,
    LegalCmd,
    PresenceCmd,
    R,
    ReopenCmd,
    ResignCmd,
    StartCmd,
    Sync,
    SyncCmd,
    TokenCmd,
    WatchCmd,
)
from ..rooms.outgoing import Outgoing
from ..rooms.room import RoomCore

log = logging.getLogger("dicehall.room")

Entry = tuple[Command[Any], float]
"""A command and the unix time at which the room ran it (server/hosting/journal.py)."""


def kept(cmd: Command[Any]) -> bool:
    """The command may change the room (a read never does; a token that holds gives the
    seat its new holder's player and `legal` wish)."""
    if type(cmd) is LegalCmd:  # (not isinstance: docs/contributing.md, "Hot paths")
        return False
    return not (type(cmd) is SyncCmd and cmd.watch == 0)


def execute(core: RoomCore, cmd: Command[Any], now: float) -> tuple[Any, list[Outgoing]]:
    """Run one command; protocol errors propagate and leave the room unchanged."""
    match cmd:
        case ActCmd(seat=seat, action=action, window=window):
            taken_in = core.window_id
            out = core.act(seat, action, window, now)
            return (taken_in, core.owes(seat, taken_in)), out
        case LegalCmd(seat=seat, view=view):
            return core.legal(seat, view), []
        case ExpireCmd():
            return None, core.expire(now)
        case JoinCmd(name=name, seat=seat, nonce=nonce, host_key=key, player=player, legal=legal):
            return core.join(name, seat, nonce, now, key, player, legal)
        case LeaveCmd(seat=seat):
            return None, core.leave(seat, now)
        case StartCmd(host_key=key, seat=seat):
            core.may_host(key, seat)
            out = core.start(now)
            assert core.state is not None
            return core.state.commitment(), out
        case AddBotsCmd(kind=kind, count=count, host_key=key, seat=seat):
            core.may_host(key, seat)
            return core.add_bots(kind, count, now)
        case ChatCmd(seat=seat, sender=sender, text=text):
            out = core.chat(seat, sender, text)
            return out[0].seq, out
        case SyncCmd(seat=seat, last_seq=last_seq, watch=watch, epoch=epoch):
            core.spectate(watch)
            messages = None
            if last_seq is not None and core.continues(last_seq, epoch):
                messages = core.since(last_seq, seat)
            progress = core.progress()
            seq = core.seq
            if messages is not None:
                sync = Sync(seq=seq, epoch=core.epoch, messages=messages, progress=progress)  # type: ignore[arg-type]
                return sync, []
            snapshot = core.snapshot(seat)
            return Sync(seq=seq, epoch=core.epoch, snapshot=snapshot, progress=progress), []
        case WatchCmd(delta=delta):
            core.spectate(delta)
            return None, []
        case PresenceCmd(seat=seat, delta=delta):
            return None, core.set_connected(seat, delta, now)
        case ReopenCmd():
            return None, core.reopen()
        case ResignCmd(host_key=key):
            return None, core.resign(key)
        case TokenCmd(seat=seat, nonce=nonce, player=player, legal=legal):
            return core.take_back(seat, nonce, player, legal), []
    raise TypeError(f"unknown command {cmd!r}")


class Reply:
    """The encoded answer to a command another process forwarded (`asker`, its request
    id `rid`): a store that shares rooms between processes sends it with the commit the
    command made, in the same round trip; a store alone in its deployment never sees one."""

    __slots__ = ("asker", "data", "rid")

    def __init__(self, asker: str, rid: int, data: bytes) -> None:
        self.asker = asker
        self.rid = rid
        self.data = data


Rider = Callable[[Any], Reply]
"""Turns a forwarded command's result into the `Reply` its commit carries."""


class CommitBatch:
    """A room's messages made by one command, with what else its store may need: the
    commands run since the last commit (`ran`, kept only when the store asks for them:
    server/hosting/journal.py) and a forwarded command's `reply`."""

    __slots__ = ("core", "out", "ran", "reply")

    def __init__(
        self, core: RoomCore, out: list[Outgoing], ran: list[Entry], reply: Reply | None
    ) -> None:
        self.core = core
        self.out = out
        self.ran = ran
        self.reply = reply


Pending = Coroutine[Any, Any, None]
Commit = Callable[[CommitBatch], Pending | None]
"""Commits a batch: None when that is done already (nothing to wait for: the store keeps
nothing elsewhere), else the coroutine the room's task awaits before its next command."""


class Ran:
    """A command the room ran, with what it made, and its commit if that must be awaited
    before the command is answered."""

    __slots__ = ("cmd", "now", "out", "pending", "result")

    def __init__(self, cmd: Command[Any], now: float, result: Any, out: list[Outgoing]) -> None:
        self.cmd = cmd
        self.now = now
        self.result = result
        self.out = out
        self.pending: Pending | None = None


Queued = tuple[Command[Any] | Ran, asyncio.Future[Any] | None, Rider | None]
"""An inbox item: a command to run (or one run already, to commit), the future of its
caller if one waits, and its rider."""


RunTask = Callable[["RoomActor"], Coroutine[Any, Any, None]]
"""The room's task (server/hosting/room_task.py's `run_room`), handed in: see this module's
docstring."""

ShowProgress = Callable[[RoomCore], None]
"""Shows who has answered the open window (`RoomCore.progress`) after an answer that the
room kept back: nothing to commit, so nothing waits."""
BotSpawner = Callable[[str, int, str], None]


class Tally:
    """A count kept by the backend for all its rooms, gone ones included: the source of a
    Prometheus counter, which must never go down when a room closes or moves."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class RoomActor:
    """`commit`: the host's, called in the task that ran the command (the caller's, when
    the command found the room idle); what it returns, if anything, is awaited by the
    room's task before anything else runs. `journal`: the batches carry the commands run
    since the last commit (a store that replays them on another process asks for it)."""

    def __init__(
        self,
        core: RoomCore,
        commit: Commit,
        spawn_bot: BotSpawner | None = None,
        expired: Tally | None = None,
        journal: bool = False,
        progress: ShowProgress | None = None,
        *,
        run: RunTask,
    ) -> None:
        self.core = core
        self._run = run
        self._loop = asyncio.get_running_loop()
        """Kept, as on every hot path (docs/contributing.md, "Hot paths"): a room arms a
        timer for every turn window."""
        self._commit = commit
        self._spawn_bot = spawn_bot
        self._inbox: list[Queued | None] = []
        """Commands waiting for the room's task (None: stop), a list and a future to wake
        the task, not an `asyncio.Queue` (3.3 KB per room in four deques; docs/
        benchmarks/journal.md, "Memory")."""
        self._wakeup: asyncio.Future[None] | None = None
        self._queued = 0
        """Commands in the inbox or being run by the task."""
        self._stopped = False
        self._timer: asyncio.TimerHandle | None = None
        self._fires_at = 0.0
        """The deadline `_timer` was set for (time.time() seconds)."""
        self._armed: float | None = None
        """The room's deadline as of the last `_arm`."""
        self._task: asyncio.Task[None] | None = None
        """Started by the first command that has to wait its turn (most never do: see
        `submit`), not with the room: a task and its coroutine are a kilobyte a room."""
        self._expired = expired
        self._journal: list[Entry] | None = [] if journal else None
        """The commands run since the last commit (server/hosting/journal.py), when kept."""
        self._progress = progress

    def start(self) -> None:
        self._arm()

    def unwritten(self) -> bool:
        """Commands ran since the last commit (answers the room kept back): a hand-over
        writes the room before it lets go, so that none of them is lost."""
        return bool(self._journal)

    def take_journal(self) -> list[Entry]:
        """The commands run since the last commit (answers kept back), for a store that
        writes the room as it is now: the next commit's batch no longer carries them."""
        journal = self._journal
        if not journal:
            return []
        self._journal = []
        return journal

    def submit(self, cmd: Command[R], rider: Rider | None = None) -> asyncio.Future[R]:
        """Run `cmd` in turn; the future gets its result once its messages are committed
        (or is cancelled if the room stops before running it).

        A command that finds the room idle (nothing queued, nothing running) runs at once,
        in the caller's task: the same order as through the inbox, without waking the
        room's task and then the caller's again. Most commands commit nothing (`legal`, an
        answer the window keeps back), and those are done when this returns; so is one
        whose commit is done at once (the memory store's). One whose commit must be
        awaited hands it to the room's task, first in line, so that commits keep their
        order. A caller that loops on calls yields itself (a house bot after each request,
        a connection between the frames of a burst), so it cannot starve the event loop."""
        fut: asyncio.Future[R] = self._loop.create_future()
        if self._queued or self._stopped:
            self._put((cmd, fut, rider))
            return fut
        ran = self._execute(cmd, fut, rider)
        if ran is None:
            return fut
        if ran.pending is not None:
            return self._first_in_line(ran)
        self.done(ran, fut)
        return fut

    # --- for the room's task (server/hosting/room_task.py) ---------------------------------------

    def wakeup(self) -> asyncio.Future[None] | None:
        """What the room's task waits for while the inbox is empty (None: it is not)."""
        if self._inbox:
            return None
        wakeup = self._wakeup = self._loop.create_future()
        return wakeup

    def take(self) -> Queued | None:
        """The next item of the inbox, which is not empty; None: stop."""
        return self._inbox.pop(0)

    def run_queued(self, item: Queued) -> Ran | None:
        """Run a queued command (a `Ran` is one run already); what it made if its commit
        must be awaited (`Ran.pending`, then `done`), else None: it is settled, or failed
        and its caller told."""
        what, fut, rider = item
        if isinstance(what, Ran):
            return what
        ran = self._execute(what, fut, rider)
        if ran is None or ran.pending is not None:
            return ran
        self.done(ran, fut)
        return None

    def done(self, ran: Ran, fut: asyncio.Future[Any] | None) -> None:
        if fut is not None and not fut.done():
            fut.set_result(ran.result)
        self._after(ran.cmd, ran.result)

    def finished(self) -> None:
        """The task is through with an item (run, failed or cancelled)."""
        self._queued -= 1

    def halt(self) -> asyncio.Task[None] | None:
        """Take no more commands; the room's task if it runs, told to stop after what it
        was given."""
        self._stopped = True
        if self._timer is not None:
            self._timer.cancel()
        task = self._task
        if task is None or task.done():
            return None
        self._inbox.append(None)
        self._wake()
        return task

    def drop_inbox(self) -> None:
        """Cancel what the stopped room never ran."""
        inbox, self._inbox = self._inbox, []
        for item in inbox:
            if item is not None:
                what, fut, _ = item
                if isinstance(what, Ran) and what.pending is not None:
                    what.pending.close()  # never committed: its caller is told so
                if fut is not None and not fut.done():
                    fut.cancel()

    # --- in turn -------------------------------------------------------------------------

    def _first_in_line(self, ran: Ran) -> asyncio.Future[Any]:
        """Hand `ran`'s commit to the room's task, to await before anything queued."""
        fut: asyncio.Future[Any] = self._loop.create_future()
        self._queued += 1
        self._inbox.insert(0, (ran, fut, None))
        self._wake()
        return fut

    def _put(self, item: Queued) -> None:
        self._queued += 1
        self._inbox.append(item)
        self._wake()

    def _wake(self) -> None:
        if self._task is None:  # (it finds the inbox as it starts)
            self._task = self._loop.create_task(self._run(self), name=f"room-{self.core.id}")
            return
        wakeup = self._wakeup
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

    def _execute(
        self, cmd: Command[Any], fut: asyncio.Future[Any] | None, rider: Rider | None
    ) -> Ran | None:
        """Run `cmd` on the room and commit what it made (`Ran.pending`: that commit, if
        it must be awaited); None when it failed, and its caller is told."""
        try:
            ran = self._run_here(cmd)
        except Exception as exc:
            if fut is not None and not fut.done():
                fut.set_exception(exc)
            return None
        self._note(ran)
        if ran.out:
            journal: list[Entry] = []
            if self._journal:
                journal, self._journal = self._journal, []
            reply = None if rider is None else rider(ran.result)
            ran.pending = self._commit(CommitBatch(self.core, ran.out, journal, reply))
        elif self._progress is not None and type(cmd) is ActCmd:
            self._progress(self.core)  # an answer the room kept back: who has answered
        return ran

    def _run_here(self, cmd: Command[Any]) -> Ran:
        """Run `cmd` on the room, now; what it raised propagates (a protocol error changed
        nothing; a bug is logged here and must not kill the room for everyone)."""
        now = time.time()
        try:
            result, out = execute(self.core, cmd, now)
        except ProtocolError:
            raise
        except Exception:
            log.exception("room %s: %r failed", self.core.id, cmd)
            raise
        return Ran(cmd, now, result, out)

    def _note(self, ran: Ran) -> None:
        if self._journal is not None and kept(ran.cmd):
            self._journal.append((ran.cmd, ran.now))
        if type(ran.cmd) is ExpireCmd and ran.out and self._expired is not None:
            self._expired.value += 1

    def _after(self, cmd: Command[Any], result: Any) -> None:
        # (`type(...) is`, not isinstance, for the commands: docs/contributing.md, "Hot paths")
        if type(cmd) is AddBotsCmd and self._spawn_bot is not None:
            for seat in result:
                self._spawn_bot(self.core.id, seat, cmd.kind)
        self._arm()

    def _arm(self) -> None:
        """Follow the room's deadline with at most one timer, re-set only when it must
        fire sooner. Every roll opens a window with a later deadline, and cancelling and
        setting a timer each time was 2 % of the samples of a room's work (docs/
        benchmarks/journal.md, "Fewer steps per act and per delivery"): a timer set for an earlier
        deadline is left to fire, and then sets itself for the room's deadline of then."""
        deadline = self.core.deadline
        if deadline == self._armed:
            return
        self._armed = deadline
        if deadline is None:
            return  # (a timer still set finds nothing due when it fires)
        timer = self._timer
        if timer is not None:
            if self._fires_at <= deadline:
                return
            timer.cancel()
        self._set_timer(deadline)

    def _set_timer(self, deadline: float) -> None:
        self._fires_at = deadline
        self._timer = self._loop.call_later(max(0.0, deadline - time.time()), self._expire)

    def _expire(self) -> None:
        self._timer = None
        deadline = self.core.deadline
        if deadline is None:
            return
        if deadline > time.time():  # a later window's deadline: not due yet
            self._set_timer(deadline)
            return
        self._armed = None
        self._put((ExpireCmd(), None, None))
