"""Everything a room holds, and its snapshot: the one place that lists a room's state, so
that what `save` keeps and a restored room takes back is read beside what it is.

`RoomCore` (server/rooms/room.py) inherits them through `RoomView` (server/rooms/roomview.py): plain
base classes, which mypyc compiles as it does any other, so that the room reads its own
fields as directly as before the split.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicehall.protocol.messages.common import SeatAction
from dicehall.rules import Answered, Game, State
from dicehall.rules.fair import new_seed

from . import gamerecord, presence
from .outgoing import MessageLog, RecordLog
from .seat import Seat, Status
from .snapshot import FORMAT, SavedRoom


class RoomState:
    """A room's fields, as a new room has them."""

    def __init__(
        self,
        room_id: str,
        game: Game,
        options: Mapping[str, Any],
        seats: int,
        turn_window: int,
        public: bool = True,
        name: str | None = None,
        seed: bytes | None = None,
        history: int = 1024,
        autostart: bool = False,
        host_key: str = "",
    ) -> None:
        self.id = room_id
        self.game = game
        self.options = dict(options)
        self.turn_window = turn_window
        self.public = public
        self.name = name or f"{game.title} {room_id}"
        self.seats = [Seat() for _ in range(seats)]
        self.spectators = 0
        self.status: Status = "open"
        self.seed = seed if seed is not None else new_seed()
        self.state: State | None = None
        self.seq = 0
        self.epoch = 0
        """Which history `seq` numbers: up by one each time a failover took the room back
        to its last written point (docs/protocol.md, "Epochs")."""
        self.kept_seq = 0
        """Every message up to this seq is the same in every epoch of the room (the lowest
        point a failover took it back to; unused while the epoch is 0)."""
        self.log = MessageLog(history, game.name)
        self.record_head: dict[str, Any] | None = None
        """The game record without its log (None before the start)."""
        self.record_log = RecordLog()
        self.window_id: int | None = None
        self.deadline: float | None = None
        """Absolute unix time at which the open window closes."""
        self._done: list[SeatAction] = []
        self._answers: list[Answered] = []
        """The open window's answers held back (`act`) until it resolves."""
        self.last_activity = 0.0
        self.autostart = autostart
        self.host_key = host_key
        """Proof of being the creator, who hosts until it sits down (then its seat does);
        empty once the creator gave the role up, or for a room nobody created."""
        self.host: int | None = None
        """The seat that hosts: starts the game and adds bots (see `may_host`)."""

    def save(self) -> SavedRoom:
        """Everything a new owner needs to go on exactly as this room would (but the two
        logs, written beside it: server/rooms/snapshot.py). A copy: the room may go on."""
        return SavedRoom(
            format=FORMAT,
            id=self.id,
            game=self.game.name,
            options=dict(self.options),
            turn_window=self.turn_window,
            public=self.public,
            name=self.name,
            autostart=self.autostart,
            host_key=self.host_key,
            host=self.host,
            seats=[s.copy() for s in self.seats],
            spectators=self.spectators,
            status=self.status,
            seed=self.seed.hex(),
            state=self.state.to_dict() if self.state is not None else None,
            seq=self.seq,
            epoch=self.epoch,
            kept_seq=self.kept_seq,
            window=self.window_id,
            deadline=self.deadline,
            done=list(self._done),
            answers=[a.wire() for a in self._answers],
            last_activity=self.last_activity,
            record=dict(self.record_head) if self.record_head is not None else None,
            record_bytes=len(self.record_log.data),
            record_entries=self.record_log.count,
        )

    def _take_saved(self, saved: SavedRoom, record_log: bytes, present: bool) -> None:
        """The rest of `saved` (what the constructor did not take) into this new room, as
        `RoomCore.restore` says."""
        self.seats = [s.copy() for s in saved.seats]
        self.spectators = saved.spectators
        if not present:
            self.forget_presence()
        self.host = saved.host
        self.status = saved.status
        self.state = self.game.state_from_dict(saved.state) if saved.state is not None else None
        self.seq = saved.seq
        self.epoch = saved.epoch
        self.kept_seq = saved.kept_seq
        self.window_id = saved.window
        self.deadline = saved.deadline
        self._done = list(saved.done)
        self._answers = [Answered(a["seat"], held=True) for a in saved.answers]
        self.last_activity = saved.last_activity
        self.record_head, self.record_log = gamerecord.restored(saved, record_log)

    def rewind(self) -> None:
        """This room was taken over from its last written point, and what its process showed
        after that may be lost: a new epoch begins here."""
        self.kept_seq = self.seq if self.epoch == 0 else min(self.kept_seq, self.seq)
        self.epoch += 1

    def continues(self, last_seq: int, epoch: int | None) -> bool:
        """A member that processed the room up to `last_seq` (in `epoch`, when it says)
        saw nothing this room's history does not have."""
        if last_seq > self.seq:
            return False
        return self.epoch == 0 or epoch == self.epoch or last_seq <= self.kept_seq

    def forget_presence(self) -> None:
        """Nobody is connected but house bots (a process took the room over:
        `presence.forget_presence`)."""
        presence.forget_presence(self.seats)
        self.spectators = 0
