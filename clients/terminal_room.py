"""What the room's messages say, as `dicehall play` prints and follows them.

Every room message becomes a line of the log (printed above the prompt by the console) and
updates what the terminal knows: the names, the seat's view, the open turn window with
its deadline and actors, the windows closed, the game's end. The player's side
(clients/terminal.py) waits on `changed` and reads this state to know when a move is
asked of the seat and when a prompt has lost its window.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dicehall.protocol.messages.server import (
    Chat,
    Event,
    GameOver,
    Progress,
    RoomUpdate,
    Snapshot,
    TurnWindow,
    Window,
    WindowClosed,
)

from .client import Client, RoomLost
from .terminal_console import Console
from .terminal_moves import Numbering, describe
from .terminal_scores import Scoreboard
from .terminal_view import event_text, played_text, status_line


class RoomLog:
    """The room as the messages printed so far tell it (the base of `Terminal`)."""

    def __init__(self, client: Client, room: str, console: Console) -> None:
        self.client = client
        self.room = room
        self.console = console
        self.seat: int | None = client.seats.get(room)
        self.names: list[str] = []
        self.view: dict[str, Any] = {}
        self.game = ""
        self.numbering = Numbering("")
        self.turn: TurnWindow | None = None
        """The open turn window as the messages printed so far tell it."""
        self.latest = -1
        """The newest window announced so far (ids grow within a room)."""
        self.closed: set[int] = set()
        """Windows a `window_closed` ended."""
        self.deadlines: dict[int, int] = {}
        self.done: set[int] = set()
        """Windows this seat has finished its part in (a `window` message re-opens one)."""
        self.answered: set[int] = set()
        """Seats whose answer to the open window was said (from `progress`)."""
        self.held: dict[int, list[int]] = {}
        """Yamb: the dice each seat held in its last roll."""
        self.status: str | None = None
        """The room's status as the messages so far tell it (`open`, `playing`, `over`)."""
        self.board: Scoreboard | None = None
        """The scores and whose turn, from the events; None when the game was not followed
        from its start (a snapshot came in the middle): the view has them then."""
        self.late: dict[int, int] = {}
        """Seats whose `timeout` came and whose default's `applied` has not (yet)."""
        self.defaults: dict[int, int] = {}
        """Defaults of the open window already printed, per seat (its `window_closed` lists
        them again)."""
        self.timed_out: set[int] = set()
        """Windows in which the rules played for this seat (said once, when played)."""
        self.over = False
        self.reconnects = 0
        self.seq = 0
        """The seq of the latest message printed."""
        self.since = 0
        """The client's resumes before this index are of a history a failover took back."""
        self.changed = asyncio.Event()
        """Set by every message that may open, close or end a turn window."""

    def say(self, text: str) -> None:
        self.console.say(text)

    def note(self, message: Any) -> None:
        """One line of the log for a room message, and what it changes about the turn."""
        if self.client.reconnects > self.reconnects:
            self.reconnects = self.client.reconnects
            self.say(f"* connection dropped; reconnected to {self.client.url} and caught up")
        if isinstance(message, Snapshot) and message.seq < self.seq:
            self._rewind(message.seq)
        if not isinstance(message, RoomLost):
            self.seq = message.seq
        match message:
            case Snapshot(info=info):
                self._room(info.game, [s.name or f"seat {s.seat}" for s in info.seats])
                if message.seat is not None:
                    self.seat = message.seat
                self.view = message.view or self.view
                self.status, self.board = info.status, None  # (its past is not in events)
                self._open(message.turn)
                self._status(message.turn, self.view)
            case RoomUpdate(info=info):
                self._room(info.game, [s.name or f"seat {s.seat}" for s in info.seats])
                if info.status == "playing" and self.status != "playing":
                    # once: later updates of a started room (a seat's connection) are not news
                    self.board = Scoreboard(info.game, len(info.seats), info.options)
                    if info.commitment:
                        self.say(f"* game on; dice commitment {info.commitment[:16]}...")
                self.status = info.status
            case Event(event=event):
                self._event(event)
            case Progress(answered=answered):
                self._progress(message.window, answered)
            case Window(window=window, deadline=deadline, actors=actors):
                self.answered = set()
                self.done.discard(window)  # (announced again after a failover)
                self.closed.discard(window)
                self._open(TurnWindow(window=window, deadline=deadline, actors=actors))
                self._status(self.turn, self._picture(window, message.seq))
            case WindowClosed(actions=actions):
                for a in actions:
                    if a.default and a.seat == self.seat:
                        self.timed_out.add(message.window)
                    if a.default and self.defaults.get(a.seat, 0) > 0:
                        self.defaults[a.seat] -= 1  # printed when its event came
                    elif a.default:
                        played = (
                            f": the rules played {describe(self.game, a.action)}"
                            if a.action
                            else ""
                        )
                        self.say(f"* {self._name(a.seat)} ran out of time{played}")
                self.late, self.defaults = {}, {}
                self.closed.add(message.window)
                if self.turn is not None and self.turn.window == message.window:
                    self._open(None)
                self.changed.set()
            case GameOver():
                self._over(message)
            case Chat(sender=sender, text=text):
                self.say(f"<{sender}> {text}")
            case RoomLost(reason=reason):
                self.say(f"* lost the room: {reason}")
                self.over = True
                self.changed.set()

    def _rewind(self, seq: int) -> None:
        """A failover took the room back to `seq` (docs/protocol.md, "Epochs"): the lines
        printed after it never happened, and the windows they opened, closed or saw this
        seat answer are open again (the snapshot that follows says which)."""
        self.say(
            f"* the server went back to an earlier point (message {seq}): what was printed "
            "after it did not happen"
        )
        self.latest = -1
        self.closed, self.done, self.timed_out = set(), set(), set()
        self.answered, self.late, self.defaults = set(), {}, {}
        self.since = len(self.client.resumes)

    def _room(self, game: str, names: list[str]) -> None:
        self.names = names
        if game != self.game:
            self.game, self.numbering = game, Numbering(game)

    def _open(self, turn: TurnWindow | None) -> None:
        self.turn = turn
        if turn is not None:
            self.deadlines[turn.window] = turn.deadline
            self.latest = max(self.latest, turn.window)
        self.changed.set()

    def replayed(self, seq: int) -> bool:
        """Whether the message numbered `seq` is one a resume's catch-up brought (the past,
        after a rejoin or a reconnect) rather than news."""
        caught_up = (r.seq for r in self.client.resumes[self.since :] if r.room == self.room)
        return seq <= max(caught_up, default=0)

    def _picture(self, window: int, seq: int) -> dict[str, Any]:
        """What a window's status line reads: the game as its events left it when the
        window opened; else the seat's view, when it is news (a replayed window's would be
        today's, so it goes without)."""
        if self.board is not None:
            return self.board.view(window)
        return {} if self.replayed(seq) else self.view

    def _status(self, turn: TurnWindow | None, view: dict[str, Any]) -> None:
        if turn is not None:
            seats = [a.seat for a in turn.actors]
            self.say(status_line(turn.window, seats, view, self.names, self.seat))

    def _event(self, event: dict[str, Any]) -> None:
        if self.board is not None:
            self.board.feed(event)
        kind, action, seat = event.get("type"), event.get("action"), event.get("seat")
        late = self.late.get(seat, 0) if isinstance(seat, int) else 0
        if kind == "answered" and (seat in self.answered or late):
            return  # said when its `progress` came / the rules' answer for a time-out
        if isinstance(action, dict) and isinstance(seat, int) and "hold" in action:
            self.held[seat] = list(action["hold"])
        if isinstance(seat, int) and kind == "timeout":
            self.late[seat] = late + 1  # said with the move the rules play for it
        elif isinstance(seat, int) and kind == "applied" and late:
            self._default(seat, event)
        elif (text := event_text(self.game, event, self._name)) is not None:
            self.say("* " + text)

    def _default(self, seat: int, event: dict[str, Any]) -> None:
        """A time-out in one line: who, and what the rules played for them (a Yamb seat
        that never rolled gets two moves: the second says only what was played)."""
        self.late[seat] -= 1
        said = ":" if seat in self.defaults else " ran out of time:"
        self.defaults[seat] = self.defaults.get(seat, 0) + 1
        self.say(f"* {self._name(seat)}{said} the rules played {played_text(self.game, event)}")

    def _progress(self, window: int, answered: list[int]) -> None:
        for seat in answered:
            if seat not in self.answered:
                self.answered.add(seat)
                self.say(f"* {self._name(seat)} answered")
        if self.turn is not None and self.turn.window == window:
            actors = [a for a in self.turn.actors if a.seat not in answered]
            self._open(TurnWindow(window=window, deadline=self.turn.deadline, actors=actors))

    def _over(self, message: GameOver) -> None:
        self.over = True
        self.turn = None
        line = ", ".join(f"{self._name(i)} {p}" for i, p in enumerate(message.scores))
        winners = ", ".join(self._name(w) for w in message.winners)
        self.say(f"* game over: {line}; winner(s): {winners}")
        self.say(f"* dice seed revealed: {message.seed}")
        self.changed.set()

    def _name(self, seat: int) -> str:
        return self.names[seat] if 0 <= seat < len(self.names) else f"seat {seat}"

    def _ours(self) -> TurnWindow | None:
        """The open window if this seat still has its part to play in it."""
        turn = self.turn
        if turn is None or turn.window in self.done:
            return None
        return turn if any(a.seat == self.seat for a in turn.actors) else None

    def _open_for_us(self, window: int) -> bool:
        """Whether `window` may still take this seat's move, as far as the messages printed
        so far tell (they may lag behind the `legal` reply that named it)."""
        if self.over or window in self.closed or self.latest > window:
            return False
        turn = self.turn
        if turn is None or turn.window != window:
            return True
        return any(a.seat == self.seat for a in turn.actors)
