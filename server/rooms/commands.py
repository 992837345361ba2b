"""What a session may ask of a room, as data: run on the room's owner, wherever it lives.

Commands are msgspec Structs so the Redis backend can forward them to the owning process
unchanged; `execute` (execute.py) is the single place where a command meets a
`RoomCore`. Each command names its result type as its base's parameter
(`JoinCmd(Command[int])`): `Backend.call` returns that type, and a forwarded result is
decoded to it (`result_type`).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, get_args

import msgspec

from dicehall.protocol.messages.server import (
    Chat,
    Event,
    GameOver,
    Progress,
    RoomUpdate,
    Snapshot,
    Window,
    WindowClosed,
)

R = TypeVar("R")

RoomMessageType = Snapshot | RoomUpdate | Event | Window | WindowClosed | GameOver | Chat
"""Every numbered room message, decodable by its `type` tag."""


class Sync(msgspec.Struct, kw_only=True):
    """The answer to SyncCmd: `messages` when the log still holds them, else `snapshot`."""

    seq: int
    epoch: int = 0
    messages: list[RoomMessageType] | None = None
    snapshot: Snapshot | None = None
    progress: Progress | None = None
    """Who has answered the open window, as of `seq` (answers not yet shown)."""


LegalAnswer = tuple[int | None, list[dict[str, Any]], dict[str, Any] | None]
"""The open window's id, the seat's legal actions, its view (None when not asked for)."""

Owed = tuple[int | None, list[str]]
"""The window an action was taken in and the kinds the seat still owes in it (`RoomCore.owes`)."""


class Command(msgspec.Struct, Generic[R], tag_field="cmd", kw_only=True):
    """A command whose result is an `R`."""


def result_type(cmd: type[Command[Any]]) -> Any:
    """The `R` a command class declares (`type(None)` for commands without a result)."""
    for base in getattr(cmd, "__orig_bases__", ()):
        args = get_args(base)
        if args:
            return args[0]
    raise TypeError(f"{cmd.__name__} declares no result type")


class JoinCmd(Command[int], tag="join"):
    name: str
    seat: int | None
    nonce: str
    host_key: str | None = None
    """The joiner's proof of having created the room: its seat becomes the host."""
    player: str | None = None
    """The joiner's player id (the `identity` feature), if it has one."""
    legal: bool = False
    """The joiner asked for its legal actions with each window (`legal_in_window`)."""


class HostCmd(Command[R]):
    """A command only the room's host may give: the creator (by `host_key`) until it
    sits, then the seat that hosts (`RoomCore.may_host`)."""

    host_key: str | None = None
    seat: int | None = None


class LeaveCmd(Command[None], tag="leave"):
    seat: int


class StartCmd(HostCmd[str], tag="start"):
    pass


class AddBotsCmd(HostCmd[list[int]], tag="add_bots"):
    kind: str = "random"
    count: int | None = None


class ActCmd(Command[Owed], tag="act"):
    seat: int
    action: dict[str, Any]
    window: int | None = None


class ChatCmd(Command[int], tag="chat"):
    seat: int | None
    sender: str
    text: str


class SyncCmd(Command[Sync], tag="sync"):
    """Catch a member up: the messages after `last_seq`, or a snapshot (last_seq None or
    aged out). `watch` +1/-1 counts a spectator in or out."""

    seat: int | None
    last_seq: int | None = None
    watch: int = 0
    epoch: int | None = None
    """The member's epoch as of `last_seq`, if it said (docs/protocol.md, "Epochs")."""


class WatchCmd(Command[None], tag="watch"):
    delta: int


class PresenceCmd(Command[None], tag="presence"):
    seat: int
    delta: int


class TokenCmd(Command[bool], tag="token"):
    """Does the token hold? With `player`, the seat it gives back is then that player's
    (`RoomCore.take_back`): not a read any more, so the journal keeps it."""

    seat: int
    nonce: str
    player: str | None = None
    legal: bool = False
    """The new holder asked for its legal actions with each window (`legal_in_window`)."""


class LegalCmd(Command[LegalAnswer], tag="legal"):
    seat: int | None
    """None: a spectator (the public view, no actions)."""
    view: bool = True


class ExpireCmd(Command[None], tag="expire"):
    pass


class ReopenCmd(Command[None], tag="reopen"):
    """The room was taken over: announce its open window again (`RoomCore.reopen`)."""


class ResignCmd(Command[None], tag="resign"):
    """The creator's connection closed before it sat down: the host role passes on."""

    host_key: str


CommandType = (
    JoinCmd
    | LeaveCmd
    | StartCmd
    | AddBotsCmd
    | ActCmd
    | ChatCmd
    | SyncCmd
    | WatchCmd
    | PresenceCmd
    | TokenCmd
    | LegalCmd
    | ExpireCmd
    | ResignCmd
    | ReopenCmd
)
