"""One room's logic, sans I/O: seats, the rules state, turn windows, the numbered log.

`RoomCore` is driven by plain calls that carry the time (`now`, unix seconds) and answers
with room messages to fan out; it never sleeps, reads a clock or touches a socket. The
actor in server/actor.py gives it an inbox and a timer. Because all of it is here, the
room's behaviour (windows, defaults, resume, hidden information) is tested without
sockets, and its whole state is a snapshot a new owner can take over.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from dicehall.protocol import errors
from dicehall.protocol.messages.common import Actor, RoomInfo, SeatAction, SeatInfo
from dicehall.protocol.messages.server import (
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
from dicehall.rules import (
    Answered,
    Applied,
    Game,
    IllegalAction,
    Private,
    RuleEvent,
    State,
    TimedOut,
    action_kinds,
    get_game,
    held_answer,
)
from dicehall.rules.actions import wire_action
from dicehall.rules.bots import bot_names
from dicehall.rules.fair import new_seed
from dicehall.rules.records import new_record

from .identity import house_player
from .outgoing import Outgoing
from .roomlog import MessageLog, RecordLog
from .seat import Seat, Status
from .snapshot import FORMAT, SavedRoom, SnapshotError


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

    # --- snapshots ---------------------------------------------------------------------

    def save(self) -> SavedRoom:
        """Everything a new owner needs to go on exactly as this room would (but the two
        logs, written beside it: server/snapshot.py). A copy: the room may go on."""
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
            window=self.window_id,
            deadline=self.deadline,
            done=list(self._done),
            answers=[a.wire() for a in self._answers],
            last_activity=self.last_activity,
            record=dict(self.record_head) if self.record_head is not None else None,
            record_bytes=len(self.record_log.data),
            record_entries=self.record_log.count,
        )

    @classmethod
    def restore(
        cls,
        saved: SavedRoom,
        history: int = 1024,
        record_log: bytes = b"",
        presence: bool = False,
    ) -> RoomCore:
        """A room equal to the saved one, with `record_log` the bytes kept beside it.
        Presence starts from zero (connections are per process; house bots count as
        present: the new owner seats them again) unless `presence`: then it is as saved,
        for the journal to run again on, and the caller forgets it after
        (`forget_presence`)."""
        game = get_game(saved.game)
        core = cls(
            saved.id,
            game,
            saved.options,
            len(saved.seats),
            saved.turn_window,
            public=saved.public,
            name=saved.name,
            seed=bytes.fromhex(saved.seed),
            history=history,
            autostart=saved.autostart,
            host_key=saved.host_key,
        )
        core.seats = [s.copy() for s in saved.seats]
        core.spectators = saved.spectators
        if not presence:
            core.forget_presence()
        core.host = saved.host
        core.status = saved.status
        core.state = game.state_from_dict(saved.state) if saved.state is not None else None
        core.seq = saved.seq
        core.window_id = saved.window
        core.deadline = saved.deadline
        core._done = list(saved.done)
        core._answers = [Answered(a["seat"], held=True) for a in saved.answers]
        core.last_activity = saved.last_activity
        record = saved.record
        if saved.format == 1 and record is not None:
            record = dict(record)
            for entry in record.pop("log"):
                core.record_log.append(entry)
        elif saved.format == 2:
            core.record_log = RecordLog(saved.record_log or b"", saved.record_entries or 0)
        else:
            size = saved.record_bytes or 0
            if len(record_log) < size:
                raise SnapshotError(f"the record log has {len(record_log)} of its {size} bytes")
            core.record_log = RecordLog(record_log[:size], saved.record_entries or 0)
        core.record_head = record
        return core

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

    def players(self) -> list[str | None]:
        """Each seat's player id, by seat (None: open, or taken without an identity): who
        a finished game is recorded under."""
        return [s.player for s in self.seats]

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
        raise errors.ForbiddenError(f"only the room's host ({who}) may do that")

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
        self,
        name: str,
        seat: int | None,
        nonce: str,
        now: float,
        host_key: str | None = None,
        player: str | None = None,
        legal: bool = False,
    ) -> tuple[int, list[Outgoing]]:
        """Seat a human (`player`, if it has an identity) in an open seat, before the
        start. The creator (`host_key`) takes the host role to its seat; anyone takes it
        when nobody hosts, and it passes on when the host's seat has no connection."""
        self._not_started()
        if seat is None:
            free = self.open_seats()
            if not free:
                raise errors.RoomFullError("every seat is taken")
            seat = free[0]
        elif not 0 <= seat < len(self.seats):
            raise errors.NoSuchSeatError(f"this room has seats 0..{len(self.seats) - 1}")
        elif self.seats[seat].kind != "open":
            raise errors.SeatTakenError(f"seat {seat} is taken")
        self.seats[seat] = Seat("human", name, nonce, connected=1, player=player, legal=legal)
        if self.host is None and (not self.host_key or host_key == self.host_key):
            self.host = seat
        elif self._host_absent():
            self._pass_host()
        return seat, [self._room_update(), *self._autostart(now)]

    def leave(self, seat: int, now: float = 0.0) -> list[Outgoing]:
        """Before the start the seat reopens (a room left empty closes `empty_seconds`
        after `now`: `closable`); during the game it stays, and times out."""
        s = self._seat(seat)
        if self.status == "open":
            self.seats[seat] = Seat()
            self.last_activity = max(self.last_activity, now)
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
            raise errors.NoSuchBotError(f"no bot {kind!r}; bots: {bot_names(self.game.name)}")
        self._not_started()
        free = self.open_seats()
        if count is not None:
            free = free[:count]
        if not free:
            raise errors.RoomFullError("no open seat for a bot")
        for i in free:
            self.seats[i] = Seat(
                "bot", f"{kind}-bot-{i}", None, bot=kind, connected=1, player=house_player(kind)
            )
        return free, [self._room_update(), *self._autostart(now)]

    def set_connected(self, seat: int, delta: int, now: float = 0.0) -> list[Outgoing]:
        """A connection holding `seat` came or went; members see who is there. The last
        person to go starts the room's quiet time (`closable`) from `now`."""
        s = self.seats[seat]
        was = s.connected > 0
        s.connected = max(0, s.connected + delta)
        if was and not s.connected:
            self.last_activity = max(self.last_activity, now)
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

    def closable(
        self, now: float, idle_seconds: float, over_seconds: float, empty_seconds: float = 0.0
    ) -> bool:
        """Nobody is in the room and it has been quiet long enough: `idle_seconds`, or
        `over_seconds` once the game is over, or no time at all once it is `deserted`, or
        `empty_seconds` (when given) before the start: a room created and never sat in, or
        whose people all went (closed the tab: a reload comes back well within it), is
        lobby spam and a trap for quick match more often than a table waiting for people.

        Nobody: no connected person in a seat, no spectator. House bots do not count: they
        never leave by themselves, and they go with the room."""
        if self.spectators > 0 or any(s.kind == "human" and s.connected for s in self.seats):
            return False
        if self.deserted:
            return True
        limit = over_seconds if self.status == "over" else idle_seconds
        if empty_seconds and self.status == "open":
            limit = min(limit, empty_seconds)
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

    def take_back(self, seat: int, nonce: str, player: str | None, legal: bool = False) -> bool:
        """A seat token is used: True when it holds. The seat is then played as `player`
        (the identity of the connection that holds the token now), unless that is none
        or the game is over (a finished game's players are what it was recorded under),
        and its windows carry its legal actions as the new holder asked (`legal`)."""
        if not self.check_token(seat, nonce):
            return False
        taken = self.seats[seat]
        if player is not None and self.status != "over":
            taken.player = player
        taken.legal = legal
        return True

    # --- the game ------------------------------------------------------------------------

    def start(self, now: float) -> list[Outgoing]:
        if self.status != "open":
            raise errors.AlreadyStartedError("the game has already started")
        if any(s.kind == "open" for s in self.seats):
            raise errors.ForbiddenError("every seat must be taken (add bots for empty ones)")
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
        action = self._wire_action(action)
        state = self._playing()
        self._seat(seat)
        if window is not None and window != self.window_id:
            raise errors.WindowClosedError(
                f"window {window} is closed; the open one is {self.window_id}"
            )
        if seat not in state.actors():
            raise errors.NotYourTurnError(f"seat {seat} may not act now")
        try:
            events = state.apply_action(seat, action)
        except IllegalAction as exc:
            raise errors.IllegalActionError(exc.message, rule=exc.rule) from None
        # a command's action is its own fresh map: no copy per entry of the record
        self._log({"seat": seat, "action": action if type(action) is dict else dict(action)})
        # An answer held back (rules/base.py) waits, unnumbered, for its window to resolve
        # and goes out then, before what resolved it. So it needs no commit of its own
        # (one commit per window, not per answer: a failover may lose it, and the window is
        # announced again: docs/protocol.md, "What a failover keeps"), and members who
        # asked see who answered at once (`progress`).
        held = held_answer(events)
        if held is not None:
            self._answers.append(held)
            self.last_activity = now
            return []
        return self._advance(events, now)

    def _wire_action(self, action: object) -> dict[str, Any]:
        """`action` checked against its game's own schema (rules/actions.py), as a fresh
        plain map. The protocol carries any map with a `type`: a field the game does not
        have, or a value of the wrong type or out of its bounds, is refused here as the
        decoder refuses any other message off its schema (`invalid-message`, saying where)."""
        try:
            return wire_action(self.game.actions, action)
        except msgspec.ValidationError as exc:
            raise errors.InvalidMessageError(_in_action(str(exc))) from None

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

    def progress(self) -> Progress | None:
        """Who has answered the open window so far, while their answers are kept back: the
        `progress` feature's message (unnumbered: `seq` is the last message's)."""
        if not self._answers or self.window_id is None:
            return None
        answered = [a.seat for a in self._answers]
        return Progress(room=self.id, seq=self.seq, window=self.window_id, answered=answered)

    def expire(self, now: float) -> list[Outgoing]:
        """The deadline passed: apply the rules' defaults until this window closes."""
        state = self._playing()
        if self.deadline is None or now < self.deadline:
            return []
        window = self.window_id
        events: list[RuleEvent] = []
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

    def _advance(self, events: list[RuleEvent], now: float) -> list[Outgoing]:
        """Resolve chance, then turn the engine's events and window changes into messages."""
        state = self.state
        assert state is not None
        if self._answers:
            events, self._answers = [*self._answers, *events], []
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

    def _chance(self, state: State) -> list[RuleEvent]:
        outcome, events = state.resolve_chance()
        self._log({"chance": outcome})
        return events

    def _events(self, events: list[RuleEvent]) -> list[Outgoing]:
        """One message per event; both forms of a private one share its seq."""
        out: list[Outgoing] = []
        for event in events:
            seq = self._next()
            if isinstance(event, Private):
                self._note(event.public)
                mine: dict[int, RoomMessage] = {
                    event.seat: Event(room=self.id, seq=seq, event=event.mine.wire())
                }
                sent = Outgoing(Event(room=self.id, seq=seq, event=event.public.wire()), mine)
            else:
                self._note(event)
                sent = Outgoing(Event(room=self.id, seq=seq, event=event.wire()))
            out.append(self._keep(sent))
        return out

    def _note(self, event: RuleEvent) -> None:
        """Collect what each seat did in the open window for its `window_closed` (as
        everyone saw it: a private action's public form)."""
        if isinstance(event, Applied):
            self._done.append(SeatAction(seat=event.seat, action=event.action, default=False))
        elif isinstance(event, TimedOut):
            self._done.append(SeatAction(seat=event.seat, action=None, default=True))

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
        # (each actor whose holder asked gets its legal actions in a copy of its own, for the
        # live fan-out only: one more encode per such seat, one `legal` request less; its
        # kinds come from that list, not from the rules a second time)
        actors: list[Actor] = []
        lists: dict[int, list[dict[str, Any]]] = {}
        for seat in state.actors():
            if self.seats[seat].legal:
                actions = lists[seat] = state.legal_actions(seat)
                actors.append(Actor(seat=seat, kinds=action_kinds(actions)))
            else:
                actors.append(Actor(seat=seat, kinds=state.legal_kinds(seat)))
        window = Window(
            room=self.id,
            seq=self._next(),
            window=self.window_id,
            deadline=int(self.deadline * 1000),
            actors=actors,
        )
        legal: dict[int, RoomMessage] = {
            seat: msgspec.structs.replace(window, legal=actions) for seat, actions in lists.items()
        }
        return self._keep(Outgoing(window, live=legal or None))

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
            raise errors.NotStartedError("the game has not started")
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
            raise errors.GameOverError("the game in this room is over")
        if self.status == "playing":
            raise errors.AlreadyStartedError("the game has started: its seats are all held")

    def _playing(self) -> State:
        if self.state is None:
            raise errors.NotStartedError("the game has not started")
        if self.status == "over":
            raise errors.GameOverError("the game is over")
        return self.state

    def _seat(self, seat: int) -> Seat:
        if not 0 <= seat < len(self.seats):
            raise errors.NoSuchSeatError(f"no seat {seat}")
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


def _in_action(message: str) -> str:
    """A schema error of an action, said as the decoder says one of a message's own fields:
    `act: ... - at `$.action...``."""
    head, at, path = message.rpartition(" - at `$")
    return f"act: {head}{at}.action{path}" if at else f"act: {message} - at `$.action`"


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
