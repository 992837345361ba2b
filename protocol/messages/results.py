"""The `result` of an ok `reply`, one shape per request type.

On the wire `result` is a map; these types document it (schemas under
docs/protocol/v1/results/) and let a client read it typed.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from .client import (
    Act,
    AddBots,
    Create,
    Games,
    Hello,
    Join,
    Leave,
    Legal,
    Ping,
    Request,
    Resume,
    Rooms,
    SendChat,
    Spectate,
    Start,
)
from .common import GameInfo, HeldSeat, RoomInfo
from .fields import (
    Count,
    Cursor,
    Epoch,
    Hex64,
    JsonMap,
    Name,
    PlayerId,
    PlayerKey,
    RoomId,
    Seat,
    Seq,
    ServerUrl,
    Token,
    UnixMillis,
    WindowId,
    Word,
)


class Result(msgspec.Struct, kw_only=True):
    pass


class PlayerIdentity(msgspec.Struct, kw_only=True):
    """Who this connection plays as (the feature `identity`): `id` is public, `key` is
    secret; `hello.key` takes it on any later connection to any process."""

    id: PlayerId
    key: PlayerKey


class HelloResult(Result):
    """`seats`: the seats the tokens gave back; `rejected`: indexes of tokens refused;
    `player`: with the feature `identity` only (absent without it)."""

    name: Name | None = None
    seats: list[HeldSeat] = []
    rejected: list[Count] = []
    features: list[Word] = []
    player: PlayerIdentity | msgspec.UnsetType = msgspec.UNSET
    """(UNSET, not None, so that a connection without the feature never sees the field.)"""


class GamesResult(Result):
    games: list[GameInfo]


class RoomsResult(Result):
    """One page of the public rooms, in an order that holds from page to page. `total`:
    how many there are in all (of the game asked for); `next`: the `cursor` of the page
    after (null: this is the last). Both are absent from a server before `lobby_pages`."""

    rooms: list[RoomInfo]
    total: Count | None = None
    next: Cursor | None = None


class CreateResult(Result):
    room: RoomInfo


class JoinResult(Result, omit_defaults=True):
    """Keep `token`: `hello` takes it to give the seat back after a reconnect. `url`: where
    the room's server process takes connections (null: nowhere else to go)."""

    room: RoomId
    seat: Seat
    token: Token
    url: ServerUrl | None = None


class SpectateResult(Result, omit_defaults=True):
    """`url`: where the room's server process takes connections (null: nowhere else)."""

    url: ServerUrl | None = None


class Empty(Result):
    """Nothing to say: the effect shows up as room messages."""


class ActResult(Result, omit_defaults=True):
    """`window`: the turn window the action was taken in. `owes`: the kinds of action the
    seat may still take in that same window, because its part is not done yet (a Yamb
    turn is several actions: roll, roll again, call, write); empty once it is done, and
    then any next window that names the seat is announced by a `window` message.
    `legal`: with the `legal_in_window` feature and `owes` not empty, the seat's legal
    actions now (as a `legal` reply lists them)."""

    window: WindowId | None
    owes: list[Word]
    legal: list[JsonMap] | None = None


class StartResult(Result):
    commitment: Hex64


class AddBotsResult(Result):
    seats: list[Seat]


class LegalResult(Result):
    """`actions`: every legal action of the seat now (empty when it may not act);
    `window`: the open turn window they answer; `view`: the seat's view of the game (null
    when the request said `view: false`)."""

    window: WindowId | None
    actions: list[JsonMap]
    view: JsonMap | None


class ResumeResult(Result, omit_defaults=True):
    """`events`: the missed messages follow, up to `seq`; `snapshot`: a snapshot follows."""

    mode: Literal["events", "snapshot"]
    seq: Seq
    url: ServerUrl | None = None
    """Where the room's server process takes connections (null: nowhere else to go)."""
    epoch: Epoch = 0
    """The room's epoch (absent: 0, a room no failover ever took back)."""


class PingResult(Result):
    time: UnixMillis
    """The server's clock."""
    echo: UnixMillis | None = None


class ChatResult(Result):
    seq: Seq


RESULTS: dict[type[Request], type[Result]] = {
    Hello: HelloResult,
    Games: GamesResult,
    Rooms: RoomsResult,
    Create: CreateResult,
    Join: JoinResult,
    Spectate: SpectateResult,
    Leave: Empty,
    Start: StartResult,
    AddBots: AddBotsResult,
    Act: ActResult,
    Legal: LegalResult,
    Resume: ResumeResult,
    Ping: PingResult,
    SendChat: ChatResult,
}
