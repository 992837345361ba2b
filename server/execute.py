"""`execute`: the single place where a command meets a `RoomCore`, on the room's owner.

Apart from the commands (commands.py) because this runs for every request a room gets and
compiles (server/compiled.py), while the commands are msgspec Structs whose result types
are read from their bases at run time, which a compiled class would not keep."""

from __future__ import annotations

from typing import Any

from .commands import (
    ActCmd,
    AddBotsCmd,
    ChatCmd,
    Command,
    ExpireCmd,
    JoinCmd,
    LeaveCmd,
    LegalCmd,
    PresenceCmd,
    ReopenCmd,
    ResignCmd,
    StartCmd,
    Sync,
    SyncCmd,
    TokenCmd,
    WatchCmd,
)
from .outgoing import Outgoing
from .room import RoomCore


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
        case SyncCmd(seat=seat, last_seq=last_seq, watch=watch):
            core.spectate(watch)
            messages = core.since(last_seq, seat) if last_seq is not None else None
            progress = core.progress()
            if messages is not None:
                sync = Sync(seq=core.seq, messages=messages, progress=progress)  # type: ignore[arg-type]
                return sync, []
            return Sync(seq=core.seq, snapshot=core.snapshot(seat), progress=progress), []
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
