"""The waiting of a room's actor (server/hosting/actor.py): its task, which runs what had to wait
its turn and awaits the commits that cannot be done at once, and its stop.

Apart from the actor because the actor is compiled and these are coroutines: a compiled
coroutine that is cancelled can crash the interpreter (server/compiled.py), and rooms are
stopped and their tasks cancelled on purpose. This module imports the actor; the actor is
handed `run_room` (docs/contributing.md, "Hot paths").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from .actor import RoomActor

log = logging.getLogger("dicehall.room")


async def run_room(actor: RoomActor) -> None:
    """The room's task: its inbox in order, each command's commit awaited before the next
    command runs, until told to stop. Started by the first command that has to wait."""
    while True:
        wakeup = actor.wakeup()
        if wakeup is not None:
            await wakeup
            continue
        item = actor.take()
        if item is None:
            return
        fut = item[1]
        try:
            ran = actor.run_queued(item)
            if ran is not None and ran.pending is not None:
                await ran.pending
                actor.done(ran, fut)
        except asyncio.CancelledError:
            if fut is not None and not fut.done():
                fut.cancel()
            raise
        except Exception as exc:  # a bug must not kill the room for everyone
            log.exception("room %s: %r failed", actor.core.id, item[0])
            if fut is not None and not fut.done():
                fut.set_exception(exc)
        finally:
            actor.finished()


async def stop_room(actor: RoomActor, grace: float = 2.0) -> None:
    """Stop a room's actor: finish the commands already queued (within `grace` seconds; then
    the task is cancelled), and cancel the futures of what was never run."""
    task = actor.halt()
    if task is not None:
        try:
            await asyncio.wait_for(asyncio.shield(task), grace)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    actor.drop_inbox()
