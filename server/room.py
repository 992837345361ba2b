"""One room's logic, sans I/O: seats, the rules state, turn windows, the numbered log.

`RoomCore` is driven by plain calls that carry the time (`now`, unix seconds) and answers
with room messages to fan out; it never sleeps, reads a clock or touches a socket. The
actor in server/actor.py gives it an inbox and a timer. Because all of it is here, the
room's behaviour (windows, defaults, resume, hidden information) is tested without
sockets, and its whole state is a snapshot a new owner can take over.
"""

from __future__ import annotations

import struct
import time
import zlib
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from protocol import errors as E
from protocol.codec import Frame, encode
from protocol.messages.common import Actor, RoomInfo, SeatAction, SeatInfo
from protocol.messages.server import (
    Chat,
    Event,
    GameOver,
    Progress,
    RoomMessage,
    RoomUpdate,
    Snapshot,
    TurnWindow,
    Window,
    WindowClosed,
)
from protocol.subprotocols import Encoding
from rules import Game, IllegalAction, RulesError, State
from rules.bots import bot_names
from rules.fair import new_seed
from rules.records import new_record

SeatKind = Literal["open", "human", "bot"]
Status = Literal["open", "playing", "over"]
ANSWERED = "answered"
"""The rules' event for "this seat's answer to the shared window is in, content held"
(Qwinto and Qwixx: docs/games/)."""


@dataclass
class Seat:
    kind: SeatKind = "open"
    name: str | None = None
    nonce: str | None = None
    """Part of the seat token; a new holder gets a new one, so old tokens die."""
    bot: str | None = None
    connected: int = 0
    """Live connections holding the seat (house bots count as one)."""
    left: bool = False
    """Given up with `leave` after the start, and not taken back since (a merely
    disconnected seat is not `left`: its holder may be on the way back)."""


@dataclass(slots=True)
class Outgoing:
    """One numbered room message: `message` for everyone, `private[seat]` for that seat.

    Frames are memoised per (variant, encoding, stamped): a message is encoded once per
    encoding and view (and once more with `sent_us` for members with the `timestamps`
    feature), however many members receive it.
    """

    message: RoomMessage
    private: dict[int, RoomMessage] = field(default_factory=dict)
    produced: float = field(default_factory=time.monotonic)
    sent_us: int | None = None
    """The `timestamps` feature's stamp: set when the first member that asked is served."""
    _frames: dict[tuple[int | None, Encoding, bool], Frame] = field(
        default_factory=dict, repr=False
    )

    @property
    def seq(self) -> int:
        return self.message.seq

    def for_seat(self, seat: int | None) -> RoomMessage:
        if seat is not None and seat in self.private:
            return self.private[seat]
        return self.message

    @classmethod
    def from_msgpack(cls, public: bytes, private: dict[int, bytes] | None = None) -> Outgoing:
        """A message as another process or the log encoded it: its MessagePack frame is
        kept for the members who take that encoding, so they get it without an encode."""
        out = cls(
            _LOG_DECODER.decode(public),
            {s: _LOG_DECODER.decode(b) for s, b in private.items()} if private else {},
        )
        out._frames[(None, Encoding.MSGPACK, False)] = public
        for seat, frame in (private or {}).items():
            out._frames[(seat, Encoding.MSGPACK, False)] = frame
        return out

    def frame(self, seat: int | None, encoding: Encoding, stamped: bool = False) -> Frame:
        """The frame for `seat`; `stamped` adds `sent_us` (the `timestamps` feature).

        One stamp per message, taken at its fan-out, shared by every member that asked:
        still one encoding per (view, encoding, stamped), whatever the number of members.
        """
        variant = seat if seat is not None and seat in self.private else None
        key = (variant, encoding, stamped)
        frame = self._frames.get(key)
        if frame is None:
            message = self.for_seat(variant)
            if stamped and hasattr(message, "sent_us"):
                if self.sent_us is None:
                    self.sent_us = time.time_ns() // 1000
                message = msgspec.structs.replace(message, sent_us=self.sent_us)
            frame = self._frames[key] = encode(message, encoding)
        return frame


_LOG_DECODER = msgspec.msgpack.Decoder(
    RoomUpdate | Event | Window | WindowClosed | GameOver | Chat | Progress
)
_LOG_ENCODER = msgspec.msgpack.Encoder()


LOG_BLOCK = 32
"""Messages the log compresses together: 32 MessagePack frames of a Qwixx room (~90 bytes
each, ~123 as bytes objects) pack to ~20 bytes a message with zlib level 1; appending
takes 1.1 µs a message instead of 0.5 (docs/benchmarks.md, "Memory")."""


def _pack_block(frames: list[bytes]) -> bytes:
    head = struct.pack(f"<{len(frames)}I", *map(len, frames))
    return zlib.compress(head + b"".join(frames), 1)


def _unpack_block(block: bytes) -> list[bytes]:
    data = zlib.decompress(block)
    at = 4 * LOG_BLOCK
    frames: list[bytes] = []
    for size in struct.unpack_from(f"<{LOG_BLOCK}I", data):
        frames.append(data[at : at + size])
        at += size
    return frames


class MessageLog:
    """A room's last `maxlen` messages, each kept as its MessagePack bytes, the older ones
    compressed `LOG_BLOCK` at a time.

    A room sends thousands of messages; as message objects (structs, the engine's event
    maps) each took over a kilobyte and half a dozen objects the garbage collector walks
    again and again. As bytes an entry is ~125 bytes and nothing to walk; compressed in
    blocks of 32, ~20 (docs/benchmarks.md, "Load" and "Memory"). The newest messages (fewer
    than a block) stay as they are: the public bytes are the MessagePack frame the fan-out
    sends anyway. Seqs are consecutive, so only the last is kept; the few private variants
    (a Qwirkle draw) sit beside, by seq. The oldest block may still hold messages that aged
    out: they are skipped, and the block goes when all of its messages have. Iterating
    gives `Outgoing`s back, decoded: only a resume or a takeover reads the log.
    """

    __slots__ = ("_blocks", "_count", "_last", "_private", "_tail", "maxlen")

    def __init__(self, maxlen: int) -> None:
        self.maxlen = maxlen
        self._blocks: deque[bytes] = deque()
        self._tail: list[bytes] = []
        self._count = 0
        """Messages kept: at most `maxlen` (the blocks and the tail may hold a few more)."""
        self._private: dict[int, dict[int, bytes]] = {}
        self._last = 0

    def append(self, out: Outgoing) -> None:
        if self._count and out.seq != self._last + 1:  # never in practice: start afresh
            self._blocks.clear()
            self._tail = []
            self._private.clear()
            self._count = 0
        public = out.frame(None, Encoding.MSGPACK)
        assert isinstance(public, bytes)
        tail = self._tail
        tail.append(public)
        self._last = out.seq
        if out.private:
            self._private[out.seq] = {s: _LOG_ENCODER.encode(m) for s, m in out.private.items()}
        if self._count < self.maxlen:
            self._count += 1
        elif self._private:  # one aged out
            first = self._last - self.maxlen + 1
            for seq in [q for q in self._private if q < first]:
                del self._private[seq]
        if len(tail) == LOG_BLOCK:
            self._blocks.append(_pack_block(tail))
            self._tail = []
        while self._blocks and self._stored() - LOG_BLOCK >= self._count:
            self._blocks.popleft()  # every message in it aged out

    def _stored(self) -> int:
        return len(self._blocks) * LOG_BLOCK + len(self._tail)

    def _frames(self, start: int) -> Iterator[bytes]:
        """The public frames of the messages kept, from index `start` on."""
        at = self._stored() - self._count + start
        for i, block in enumerate(self._blocks):
            if at < (i + 1) * LOG_BLOCK:
                yield from _unpack_block(block)[max(0, at - i * LOG_BLOCK) :]
        yield from self._tail[max(0, at - len(self._blocks) * LOG_BLOCK) :]

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Outgoing]:
        first = self.first_seq or 0
        for i, public in enumerate(self._frames(0), first):
            yield Outgoing.from_msgpack(public, self._private.get(i))

    @property
    def first_seq(self) -> int | None:
        return self._last - self._count + 1 if self._count else None

    def messages(self, start: int, seat: int | None) -> list[RoomMessage]:
        """The messages from index `start` on, as `seat` sees them."""
        first = self.first_seq or 0
        out: list[RoomMessage] = []
        for i, public in enumerate(self._frames(start), first + start):
            private = self._private.get(i) if seat is not None else None
            data = private.get(seat, public) if private is not None and seat is not None else public
            out.append(_LOG_DECODER.decode(data))
        return out


_RECORD_ENCODER = msgspec.msgpack.Encoder()
_RECORD_DECODER = msgspec.msgpack.Decoder()


class RecordLog:
    """A game record's log as MessagePack, one entry after the other in one buffer.

    Rooms keep their record for the whole game, and as Python maps its entries cost ~450
    bytes each (40-70 KB per Qwixx game); packed they cost a few dozen, nothing for the
    garbage collector to walk, and a snapshot copies them as one bytes value.
    """

    __slots__ = ("count", "data")

    def __init__(self, data: bytes = b"", count: int = 0) -> None:
        self.data = bytearray(data)
        self.count = count

    def append(self, entry: Mapping[str, Any]) -> None:
        self.data += _RECORD_ENCODER.encode(entry)
        self.count += 1

    def entries(self) -> list[dict[str, Any]]:
        # packed entries behind an array header are one MessagePack array
        head = struct.pack(">BI", 0xDD, self.count)
        entries: list[dict[str, Any]] = _RECORD_DECODER.decode(head + self.data)
        return entries

    def __len__(self) -> int:
        return self.count


class RoomCore:
    """The authoritative room. Every method validates before it changes anything."""

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
        self.log = MessageLog(history)
        self.record_head: dict[str, Any] | None = None
        """The game record without its log (None before the start)."""
        self.record_log = RecordLog()
        self.window_id: int | None = None
        self.deadline: float | None = None
        """Absolute unix time at which the open window closes."""
        self._done: list[SeatAction] = []
        self._answers: list[dict[str, Any]] = []
        """The open window's `answered` events, kept back (`_keeps_back`) until it resolves."""
        self.last_activity = 0.0
        self.autostart = autostart
        self.host_key = host_key
        """Proof of being the creator, who hosts until it sits down (then its seat does);
        empty once the creator gave the role up, or for a room nobody created."""
        self.host: int | None = None
        """The seat that hosts: starts the game and adds bots (see `may_host`)."""

    @property
    def record(self) -> dict[str, Any] | None:
        """The game record so far (built on each call: a copy, not to be changed)."""
        if self.record_head is None:
            return None
        return {**self.record_head, "log": self.record_log.entries()}

    # --- lobby -------------------------------------------------------------------------

    def info(self) -> RoomInfo:
        return RoomInfo(
            room=self.id,
            name=self.name,
            game=self.game.name,
            options=self.options,
            status=self.status,
            public=self.public,
            turn_window=self.turn_window,
            seats=[
                SeatInfo(seat=i, kind=s.kind, name=s.name, connected=s.connected > 0)
                for i, s in enumerate(self.seats)
            ],
            spectators=self.spectators,
            commitment=self.state.commitment() if self.state is not None else None,
            host=self.host,
        )

    def lobby_key(self) -> tuple[Any, ...]:
        """What of `info()` can change after creation (commitment only with status):
        equal keys, equal lobby entries. A commit compares it instead of building the
        entry: most commits change nothing the lobby shows."""
        return (
            self.status,
            self.spectators,
            self.host,
            tuple((s.kind, s.name, s.connected > 0) for s in self.seats),
        )

    def open_seats(self) -> list[int]:
        return [i for i, s in enumerate(self.seats) if s.kind == "open"]

    # --- the host -------------------------------------------------------------------------
    # The creator hosts (by `host_key`) until it sits; then its seat does, whichever
    # connection holds it. The role passes on when the host goes (see `_pass_host`).

    def may_host(self, host_key: str | None, seat: int | None) -> None:
        if self.host is not None:
            if seat == self.host:
                return
        elif host_key and host_key == self.host_key:
            return
        who = "the creator" if self.host is None else f"seat {self.host}"
        raise E.ForbiddenError(f"only the room's host ({who}) may do that")

    def resign(self, host_key: str) -> list[Outgoing]:
        """The creator went away without sitting down: the role passes on. Idempotent (a
        second call finds the key gone); always a room update when it acts, so that the
        backend keeps the change even when nobody sits to take the role yet."""
        if self.host is not None or not host_key or host_key != self.host_key:
            return []
        self._pass_host()
        return [self._room_update()]

    def _pass_host(self) -> bool:
        """Give the role to the next seated person after the host in seat order, one with
        a connection first; with nobody seated, to the next person who sits down."""
        n = len(self.seats)
        after = self.host if self.host is not None else n - 1
        order = [(after + step) % n for step in range(1, n + 1)]
        people = [i for i in order if i != self.host and self._may_take_host(i)]
        present = [i for i in people if self.seats[i].connected]
        host = (present or people)[0] if people else None
        if host is None:
            self.host_key = ""  # nobody sits: the next person to sit hosts, not the creator
        changed = host != self.host
        self.host = host
        return changed

    def _may_take_host(self, seat: int) -> bool:
        s = self.seats[seat]
        return s.kind == "human" and not s.left

    def _host_absent(self) -> bool:
        return self.host is not None and self.seats[self.host].connected == 0

    def join(
        self, name: str, seat: int | None, nonce: str, now: float, host_key: str | None = None
    ) -> tuple[int, list[Outgoing]]:
        """Seat a human in an open seat, before the start. The creator (`host_key`) takes
        the host role to its seat; anyone takes it when nobody hosts, and it passes on
        when the host's seat has no connection."""
        self._not_started()
        if seat is None:
            free = self.open_seats()
            if not free:
                raise E.RoomFullError("every seat is taken")
            seat = free[0]
        elif not 0 <= seat < len(self.seats):
            raise E.NoSuchSeatError(f"this room has seats 0..{len(self.seats) - 1}")
        elif self.seats[seat].kind != "open":
            raise E.SeatTakenError(f"seat {seat} is taken")
        self.seats[seat] = Seat("human", name, nonce, connected=1)
        if self.host is None and (not self.host_key or host_key == self.host_key):
            self.host = seat
        elif self._host_absent():
            self._pass_host()
        return seat, [self._room_update(), *self._autostart(now)]

    def leave(self, seat: int) -> list[Outgoing]:
        """Before the start the seat reopens; during the game it stays, and times out."""
        s = self._seat(seat)
        if self.status == "open":
            self.seats[seat] = Seat()
        else:
            s.connected = 0
            s.left = True
        if seat == self.host:
            self._pass_host()
        return [self._room_update()]

    def _autostart(self, now: float) -> list[Outgoing]:
        if self.autostart and self.status == "open" and not self.open_seats():
            return self.start(now)
        return []

    def add_bots(
        self, kind: str, count: int | None, now: float
    ) -> tuple[list[int], list[Outgoing]]:
        if kind not in bot_names(self.game.name):
            raise E.NoSuchBotError(f"no bot {kind!r}; bots: {bot_names(self.game.name)}")
        self._not_started()
        free = self.open_seats()
        if count is not None:
            free = free[:count]
        if not free:
            raise E.RoomFullError("no open seat for a bot")
        for i in free:
            self.seats[i] = Seat("bot", f"{kind}-bot-{i}", None, bot=kind, connected=1)
        return free, [self._room_update(), *self._autostart(now)]

    def set_connected(self, seat: int, delta: int) -> list[Outgoing]:
        """A connection holding `seat` came or went; members see who is there."""
        s = self.seats[seat]
        was = s.connected > 0
        s.connected = max(0, s.connected + delta)
        if delta > 0:
            s.left = False  # a token took it back
        elif (
            seat == self.host
            and not s.connected
            and any(
                self.seats[i].connected for i in range(len(self.seats)) if self._may_take_host(i)
            )
        ):
            self._pass_host()
            return [self._room_update()]
        return [self._room_update()] if (s.connected > 0) != was else []

    @property
    def deserted(self) -> bool:
        """The game is over and nobody will come back to it: every seat a person held was
        given up with `leave` (none is merely disconnected, whose holder may resume to see
        the end) and nobody watches. House bots do not count: they go with the room."""
        return (
            self.status == "over"
            and self.spectators == 0
            and all(s.left for s in self.seats if s.kind == "human")
        )

    def closable(self, now: float, idle_seconds: float, over_seconds: float) -> bool:
        """Nobody is in the room and it has been quiet long enough: `idle_seconds`, or
        `over_seconds` once the game is over, or no time at all once it is `deserted`.

        Nobody: no connected person in a seat, no spectator. House bots do not count: they
        never leave by themselves, and they go with the room."""
        if self.spectators > 0 or any(s.kind == "human" and s.connected for s in self.seats):
            return False
        if self.deserted:
            return True
        limit = over_seconds if self.status == "over" else idle_seconds
        return now - self.last_activity > limit

    def forget_presence(self) -> None:
        """Nobody is connected (a process took the room over: connections are per
        process, and each comes back with `hello` or `spectate`); house bots are, since
        the new owner seats them again."""
        for s in self.seats:
            s.connected = 1 if s.kind == "bot" else 0
        self.spectators = 0

    def spectate(self, delta: int) -> None:
        self.spectators = max(0, self.spectators + delta)

    def check_token(self, seat: int, nonce: str) -> bool:
        return 0 <= seat < len(self.seats) and self.seats[seat].nonce == nonce

    # --- the game ------------------------------------------------------------------------

    def start(self, now: float) -> list[Outgoing]:
        if self.status != "open":
            raise E.AlreadyStartedError("the game has already started")
        if any(s.kind == "open" for s in self.seats):
            raise E.ForbiddenError("every seat must be taken (add bots for empty ones)")
        self.state = self.game.new_state(len(self.seats), self.options, self.seed)
        self.status = "playing"
        names = _distinct([s.name or f"seat {i}" for i, s in enumerate(self.seats)])
        self.record_head = new_record(self.game.name, self.options, names, self.state)
        del self.record_head["log"]
        self.record_log = RecordLog()
        out = [self._room_update()]
        out += self._advance([], now)
        return out

    def act(
        self, seat: int, action: Mapping[str, Any], window: int | None, now: float
    ) -> list[Outgoing]:
        state = self._playing()
        self._seat(seat)
        if window is not None and window != self.window_id:
            raise E.WindowClosedError(
                f"window {window} is closed; the open one is {self.window_id}"
            )
        if seat not in state.actors():
            raise E.NotYourTurnError(f"seat {seat} may not act now")
        try:
            events = state.apply_action(seat, action)
        except IllegalAction as exc:
            raise E.IllegalActionError(exc.message, rule=exc.rule) from None
        # a command's action is its own fresh map: no copy per entry of the record
        self._log({"seat": seat, "action": action if type(action) is dict else dict(action)})
        if self._keeps_back(state, events):
            self._answers += events
            self.last_activity = now
            return []
        return self._advance(events, now)

    def owes(self, seat: int, window: int | None) -> list[str]:
        """The kinds of action `seat` may still take in `window` after acting in it: its
        part is not done (a Yamb turn is several actions). Empty once the window moved
        on, since a `window` message announces the next one."""
        state = self.state
        if window is None or window != self.window_id or state is None or self.status != "playing":
            return []
        if seat not in state.actors():
            return []
        return state.legal_kinds(seat)

    def _keeps_back(self, state: State, events: list[dict[str, Any]]) -> bool:
        """An answer to a shared window that leaves it open (Qwinto, Qwixx) only says that
        the seat answered: its `answered` event waits, unnumbered, for the window to
        resolve, and goes out then, before what resolved it. So such an answer needs no
        commit of its own (one commit per window instead of one per answer: a failover may
        lose it, and the window is announced again: docs/protocol.md, "What a failover
        keeps"), and members who asked for it see who answered at once (`progress`)."""
        return (
            bool(events)
            and state.window() == self.window_id
            and not state.is_over()
            and not state.chance_pending()
            and all(e.get("type") == ANSWERED and "for" not in e for e in events)
        )

    def progress(self) -> Progress | None:
        """Who has answered the open window so far, while their answers are kept back: the
        `progress` feature's message (unnumbered: `seq` is the last message's)."""
        if not self._answers or self.window_id is None:
            return None
        answered = [e["seat"] for e in self._answers]
        return Progress(room=self.id, seq=self.seq, window=self.window_id, answered=answered)

    def expire(self, now: float) -> list[Outgoing]:
        """The deadline passed: apply the rules' defaults until this window closes."""
        state = self._playing()
        if self.deadline is None or now < self.deadline:
            return []
        window = self.window_id
        events: list[dict[str, Any]] = []
        out: list[Outgoing] = []
        while not state.is_over() and state.window() == window:
            if state.chance_pending():
                events += self._chance(state)
                continue
            seat = state.actors()[0]
            events += state.apply_timeout(seat)
            self._log({"seat": seat, "timeout": True})
        out += self._advance(events, now)
        return out

    def _advance(self, events: list[dict[str, Any]], now: float) -> list[Outgoing]:
        """Resolve chance, then turn the engine's events and window changes into messages."""
        state = self.state
        assert state is not None
        if self._answers:
            events, self._answers = self._answers + events, []
        while state.chance_pending():
            events += self._chance(state)
        out = self._events(events)
        self.last_activity = now
        if state.is_over():
            out += self._close_window()
            out += self._game_over()
        elif state.window() != self.window_id:
            out += self._close_window()
            out.append(self._open_window(state, now))
        return out

    def _chance(self, state: State) -> list[dict[str, Any]]:
        outcome, events = state.resolve_chance()
        self._log({"chance": outcome})
        return events

    def _events(self, events: list[dict[str, Any]]) -> list[Outgoing]:
        """One message per event; a private event and its public twin share one seq."""
        out: list[Outgoing] = []
        it = iter(events)
        for event in it:
            self._note(event)
            if "for" in event:
                twin = next(it)
                self._note(twin)
                private = {k: v for k, v in event.items() if k != "for"}
                seq = self._next()
                out.append(
                    self._keep(
                        Outgoing(
                            Event(room=self.id, seq=seq, event=twin),
                            {event["for"]: Event(room=self.id, seq=seq, event=private)},
                        )
                    )
                )
            else:
                out.append(self._keep(Outgoing(Event(room=self.id, seq=self._next(), event=event))))
        return out

    def _note(self, event: Mapping[str, Any]) -> None:
        """Collect what each seat did in the open window for its `window_closed`."""
        kind = event.get("type")
        if kind == "applied" and "for" not in event:
            self._done.append(
                SeatAction(seat=event["seat"], action=event.get("action"), default=False)
            )
        elif kind == "timeout":
            self._done.append(SeatAction(seat=event["seat"], action=None, default=True))

    def reopen(self) -> list[Outgoing]:
        """Announce the open turn window again, same id and deadline: a process that took
        the room over has not got the answers its old owner held without committing them
        (docs/protocol.md, "Turn windows and deadlines"), so every seat it lists answers
        again."""
        state = self.state
        if self.status != "playing" or state is None or self.window_id is None:
            return []
        if self.deadline is None:
            return []
        return [self._announce(state)]

    def _open_window(self, state: State, now: float) -> Outgoing:
        self.window_id = state.window()
        self.deadline = now + self.turn_window
        return self._announce(state)

    def _announce(self, state: State) -> Outgoing:
        """The `window` message of the open window (its id and deadline set)."""
        assert self.window_id is not None and self.deadline is not None
        window = Window(
            room=self.id,
            seq=self._next(),
            window=self.window_id,
            deadline=int(self.deadline * 1000),
            actors=_actors(state),
        )
        return self._keep(Outgoing(window))

    def _close_window(self) -> list[Outgoing]:
        if self.window_id is None:
            return []
        done, self._done = _merge_defaults(self._done), []
        msg = WindowClosed(room=self.id, seq=self._next(), window=self.window_id, actions=done)
        self.window_id = None
        self.deadline = None
        return [self._keep(Outgoing(msg))]

    def _game_over(self) -> list[Outgoing]:
        state = self.state
        assert state is not None and self.record_head is not None
        self.status = "over"
        self.record_head["seed"] = self.seed.hex()
        names = self.record_head["seats"]
        self.record_head["result"] = {"scores": dict(zip(names, state.scores(), strict=True))}
        over = GameOver(
            room=self.id,
            seq=self._next(),
            scores=state.scores(),
            winners=state.winners(),
            seed=self.seed.hex(),
            commitment=state.commitment(),
        )
        return [self._keep(Outgoing(over)), self._room_update()]

    def chat(self, seat: int | None, sender: str, text: str) -> list[Outgoing]:
        return [
            self._keep(
                Outgoing(Chat(room=self.id, seq=self._next(), sender=sender, text=text, seat=seat))
            )
        ]

    # --- views and resume -------------------------------------------------------------

    def snapshot(self, seat: int | None) -> Snapshot:
        view = self.state.view(seat) if self.state is not None else {}
        turn = None
        if self.window_id is not None and self.deadline is not None and self.state is not None:
            turn = TurnWindow(
                window=self.window_id,
                deadline=int(self.deadline * 1000),
                actors=_actors(self.state),
            )
        return Snapshot(
            room=self.id, seq=self.seq, seat=seat, view=view, info=self.info(), turn=turn
        )

    def since(self, last_seq: int, seat: int | None) -> list[RoomMessage] | None:
        """The messages after `last_seq` as `seat` saw them, or None if they aged out."""
        if last_seq > self.seq:
            return None
        if last_seq == self.seq:
            return []
        first = self.log.first_seq
        if first is None or first > last_seq + 1:
            return None
        return self.log.messages(last_seq + 1 - first, seat)

    def legal(
        self, seat: int | None, view: bool = True
    ) -> tuple[int | None, list[dict[str, Any]], dict[str, Any] | None]:
        """The open window, the seat's legal actions and its view (None if not `view`),
        also after the game."""
        state = self.state
        if state is None:
            raise E.NotStartedError("the game has not started")
        if seat is not None:
            self._seat(seat)
        seen = state.view(seat) if view else None
        if seat is None or self.status == "over":
            return self.window_id, [], seen
        return self.window_id, state.legal_actions(seat), seen

    # --- helpers --------------------------------------------------------------------------

    def _not_started(self) -> None:
        """Seats are joined and filled with bots before the start only (the catalogue's
        `already-started`); every seat is held once the game runs."""
        if self.status == "over":
            raise E.GameOverError("the game in this room is over")
        if self.status == "playing":
            raise E.AlreadyStartedError("the game has started: its seats are all held")

    def _playing(self) -> State:
        if self.state is None:
            raise E.NotStartedError("the game has not started")
        if self.status == "over":
            raise E.GameOverError("the game is over")
        return self.state

    def _seat(self, seat: int) -> Seat:
        if not 0 <= seat < len(self.seats):
            raise E.NoSuchSeatError(f"no seat {seat}")
        return self.seats[seat]

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def _keep(self, out: Outgoing) -> Outgoing:
        self.log.append(out)
        return out

    def _room_update(self) -> Outgoing:
        return self._keep(Outgoing(RoomUpdate(room=self.id, seq=self._next(), info=self.info())))

    def _log(self, entry: dict[str, Any]) -> None:
        if self.record_head is not None:
            self.record_log.append(entry)


def _actors(state: State) -> list[Actor]:
    """The seats that must act now, with the kinds of action legal for each."""
    return [Actor(seat=s, kinds=state.legal_kinds(s)) for s in state.actors()]


def _distinct(names: list[str]) -> list[str]:
    """Seat names as a record needs them: distinct (two players may both be "player")."""
    out: list[str] = []
    for name in names:
        candidate, n = name, 2
        while candidate in out:
            candidate, n = f"{name} ({n})", n + 1
        out.append(candidate)
    return out


def _merge_defaults(done: Iterable[SeatAction]) -> list[SeatAction]:
    """A time-out followed by the action it produced reads as one defaulted action."""
    out: list[SeatAction] = []
    pending: set[int] = set()
    for item in done:
        if item.default:
            pending.add(item.seat)
            continue
        if item.seat in pending:
            pending.discard(item.seat)
            out.append(SeatAction(seat=item.seat, action=item.action, default=True))
        else:
            out.append(item)
    out.extend(SeatAction(seat=s, action=None, default=True) for s in sorted(pending))
    return out


def rules_error(exc: RulesError) -> E.ProtocolError:
    """The protocol error a rules error becomes at the edge of a room."""
    if isinstance(exc, IllegalAction):
        return E.IllegalActionError(exc.message, rule=exc.rule)
    return E.BadOptionsError(exc.message, rule=exc.rule)
