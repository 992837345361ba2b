"""One room's logic, sans I/O: the commands that seat people and run the game through its
turn windows, and the numbered log of the messages they make.

`RoomCore` is driven by plain calls that carry the time (`now`, unix seconds) and answers
with room messages to fan out; it never sleeps, reads a clock or touches a socket. The
actor in server/hosting/actor.py gives it an inbox and a timer. Because all of it is here and in
the sans-I/O modules beside it, the room's behaviour (windows, defaults, resume, hidden
information) is tested without sockets, and its whole state is a snapshot a new owner
can take over.

What an act goes through (the action checked, the events numbered, the turn window closed
and the next announced, what the seat still owes) stays in this module: the act path
crosses it alone of the room's modules (docs/architecture.md, server/). The rest is
beside it, one job each: its fields and snapshot (roomstate.py), what it shows without
changing (roomview.py), who may sit and who hosts (seating.py), when it may close
(presence.py), the game record (gamerecord.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from dicehall.protocol import errors
from dicehall.protocol.messages.common import Actor, SeatAction
from dicehall.protocol.messages.server import (
    Chat,
    Event,
    Progress,
    RoomMessage,
    RoomUpdate,
    Window,
    WindowClosed,
)
from dicehall.rules import (
    Applied,
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

from . import gamerecord, seating
from .outgoing import Outgoing, RecordLog
from .roomview import RoomView
from .seat import Seat
from .snapshot import SavedRoom


class RoomCore(RoomView):
    """The authoritative room. Every method validates before it changes anything; what
    only reads it is `RoomView`'s."""

    # --- snapshots (`save` and the fields: server/rooms/roomstate.py) ---------------------------

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
        core._take_saved(saved, record_log, presence)
        return core

    # --- seats and the host -----------------------------------------------------------
    # The creator hosts (by `host_key`) until it sits; then its seat does, whichever
    # connection holds it. The role passes on when the host goes (see `_pass_host`).

    def may_host(self, host_key: str | None, seat: int | None) -> None:
        seating.check_host(self.host, self.host_key, host_key, seat)

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
        host = seating.next_host(self.seats, self.host)
        if host is None:
            self.host_key = ""  # nobody sits: the next person to sit hosts, not the creator
        changed = host != self.host
        self.host = host
        return changed

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
        seating.not_started(self.status)
        seat = seating.seat_to_join(self.seats, seat)
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
        seating.not_started(self.status)
        free = self.open_seats()
        if count is not None:
            free = free[:count]
        if not free:
            raise errors.RoomFullError("no open seat for a bot")
        for i in free:
            self.seats[i] = seating.bot_seat(kind, i)
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
        elif seat == self.host and not s.connected and seating.someone_present_may_host(self.seats):
            self._pass_host()
            return [self._room_update()]
        return [self._room_update()] if (s.connected > 0) != was else []

    def spectate(self, delta: int) -> None:
        self.spectators = max(0, self.spectators + delta)

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
        self.record_head = gamerecord.record_head(
            self.game.name, self.options, self.seats, self.state
        )
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
        gamerecord.finish(self.record_head, self.seed.hex(), state)
        over = gamerecord.game_over(self.id, self._next(), state, self.seed.hex())
        return [self._keep(Outgoing(over)), self._room_update()]

    def chat(self, seat: int | None, sender: str, text: str) -> list[Outgoing]:
        return [
            self._keep(
                Outgoing(Chat(room=self.id, seq=self._next(), sender=sender, text=text, seat=seat))
            )
        ]

    # --- helpers --------------------------------------------------------------------------

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
