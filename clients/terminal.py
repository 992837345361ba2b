"""`dicehall play`: a person at a terminal, speaking protocol v1 like any bot.

It shows the canonical sheets of docs/rules.md (drawn from the seat's view with the game's
`render_view`), a log of what happened, the turn window's countdown, and numbered legal
actions; the player types a number or the action itself. The client library reconnects
and resumes by itself, so a dropped connection only shows as a line in the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
import urllib.request
from collections.abc import Callable
from typing import Any, TextIO

from protocol import errors as E
from protocol.features import PROGRESS
from protocol.messages.server import (
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
from rules import RulesError, get_game
from rules.records import replay

from .client import Client, ConnectionLost, RoomLost, http_url
from .seatstore import SeatStore


def _fetch_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


PAGE = 24
"""Legal actions listed at once (Qwirkle openings can number thousands)."""


def describe(action: dict[str, Any]) -> str:
    """An action as the player would type it: `enter red 3`, `mark green 7`, `pass`..."""
    kind = action["type"]
    if kind in ("roll",) and "dice" in action:
        return "roll " + " ".join(action["dice"])
    if kind == "roll":
        return "roll hold " + " ".join(str(i) for i in action.get("hold", []))
    if kind == "enter":
        return f"enter {action['row']} {action['box']}"
    if kind == "mark":
        return f"mark {action['row']} {action['number']}"
    if kind == "call":
        return f"call {action['row']}"
    if kind == "write":
        return f"write {action['column']} {action['row']}"
    if kind in ("place", "swap"):
        tiles = " ".join(
            f"{t['color']}-{t['shape']}" + (f"@{t['x']},{t['y']}" if "x" in t else "")
            for t in action["tiles"]
        )
        return f"{kind} {tiles}"
    return str(kind)


def parse(text: str, legal: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A number from the list, an action typed as listed, or JSON; None if unrecognised."""
    text = " ".join(text.split())
    if text.isdigit():
        i = int(text) - 1
        return legal[i] if 0 <= i < len(legal) else None
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None
    for action in legal:
        if describe(action) == text:
            return action
    return None


HELP = """\
Type the number of an action, or the action as listed (e.g. `enter red 3`, `pass`),
or a JSON action. `more` lists more actions, `sheets` redraws the sheets, `help` shows
this, `quit` leaves (your seat stays yours: run the same command to come back)."""


class Terminal:
    def __init__(
        self,
        client: Client,
        room: str,
        out: TextIO = sys.stdout,
        read_line: Callable[[], str] = sys.stdin.readline,
    ) -> None:
        self.client = client
        self.room = room
        self.out = out
        self.read_line = read_line
        self.seat: int | None = client.seats.get(room)
        self.names: list[str] = []
        self.view: dict[str, Any] = {}
        self.game = ""
        self.deadline_ms: int | None = None
        self.answered: set[int] = set()
        """Seats whose answer to the open window was said (from `progress`)."""
        self.window: int | None = None
        self.over = False
        self.reconnects = 0

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def sheets(self) -> None:
        if not self.view or not self.game:
            return
        render = get_game(self.game).render_view
        assert render is not None
        for s in range(len(self.names)):
            name = self.names[s]
            if self.game != "qwirkle" or s == self.seat:
                self.say(render(self.view, s, name))
            else:
                hand = self.view.get("hand_sizes", [0] * len(self.names))[s]
                self.say(f"{name}: {self.view['scores'][s]} points, {hand} tiles in hand")
            self.say("")
        dice = self.view.get("roll") or self.view.get("dice")
        if self.game == "yamb" and self.seat is not None:
            dice = self.view["tables"][self.seat].get("dice")
        if dice:
            self.say(f"Dice: {dice}")

    async def refresh(self) -> list[dict[str, Any]]:
        """The seat's view and legal actions, straight from the server (none once over)."""
        try:
            legal = await self.client.legal(self.room)
        except (E.GameOverError, E.NotStartedError):
            return []
        self.view = legal.view or self.view  # (asked with the view: never None)
        self.window = legal.window
        return legal.actions

    def countdown(self) -> str:
        if self.deadline_ms is None:
            return ""
        offset = self.client.clock_offset_ms or 0.0
        left = (self.deadline_ms - offset) / 1000 - time.time()
        return f"[{max(0, round(left))}s] "

    def note(self, message: Any) -> None:
        """One line of the log for a room message."""
        if self.client.reconnects > self.reconnects:
            self.reconnects = self.client.reconnects
            self.say(f"* connection dropped; reconnected to {self.client.url} and caught up")
        match message:
            case Snapshot(info=info):
                self.names = [s.name or f"seat {s.seat}" for s in info.seats]
                self.game = info.game
                if message.seat is not None:
                    self.seat = message.seat
                self.view = message.view or self.view
                if message.turn is not None:
                    self.deadline_ms = message.turn.deadline
            case RoomUpdate(info=info):
                self.names = [s.name or f"seat {s.seat}" for s in info.seats]
                self.game = info.game
                if info.status == "playing" and info.commitment:
                    self.say(f"* game on; dice commitment {info.commitment[:16]}...")
            case Event(event=event):
                if event.get("type") == "answered" and event.get("seat") in self.answered:
                    return  # said when its `progress` came
                self.say("* " + self._event_text(event))
            case Progress(answered=answered):
                for seat in answered:
                    if seat not in self.answered:
                        self.answered.add(seat)
                        self.say(f"* {self._name(seat)} answered")
            case Window(actors=actors, deadline=deadline):
                self.answered = set()
                self.deadline_ms = deadline
                who = ", ".join(self._name(a.seat) for a in actors)
                self.say(f"* turn window {message.window}: {who} to act")
            case WindowClosed(actions=actions):
                for a in actions:
                    if a.default:
                        self.say(f"* {self._name(a.seat)} ran out of time")
            case GameOver(scores=scores, winners=winners):
                self.over = True
                line = ", ".join(f"{self._name(i)} {p}" for i, p in enumerate(scores))
                self.say(
                    f"* game over: {line}; winner(s): " + ", ".join(self._name(w) for w in winners)
                )
                self.say(f"* dice seed revealed: {message.seed}")
            case Chat(sender=sender, text=text):
                self.say(f"<{sender}> {text}")
            case RoomLost(reason=reason):
                self.say(f"* lost the room: {reason}")
                self.over = True

    def _name(self, seat: int) -> str:
        return self.names[seat] if 0 <= seat < len(self.names) else f"seat {seat}"

    def _event_text(self, event: dict[str, Any]) -> str:
        kind = event.get("type")
        seat = event.get("seat")
        who = self._name(seat) if isinstance(seat, int) else ""
        if kind == "applied" and isinstance(event.get("action"), dict):
            return f"{who}: {describe(event['action'])}"
        if kind == "rolled":
            dice = event.get("dice")
            return f"{who + ' ' if who else ''}rolled {dice}"
        if kind == "answered":
            return f"{who} answered"
        if kind == "failed_throw":
            return f"{who} records a failed throw"
        if kind == "turn":
            return f"{who}'s turn"
        rest = {k: v for k, v in event.items() if k not in ("type", "seat")}
        return f"{kind} {who} {json.dumps(rest) if rest else ''}".strip()

    async def ask(self, actions: list[dict[str, Any]]) -> None:
        """Prompt until the player acts, passes the turn to time-out, or quits."""
        shown = 0
        if actions:
            self.sheets()
        while actions and not self.over:
            for i in range(shown, min(len(actions), shown + PAGE)):
                self.say(f"  {i + 1:3}. {describe(actions[i])}")
            shown = min(len(actions), shown + PAGE)
            if shown < len(actions):
                self.say(f"  ... {len(actions) - shown} more: type `more`")
            self.out.write(f"{self.countdown()}your move (help for help): ")
            self.out.flush()
            line = (await asyncio.to_thread(self.read_line)).strip()
            if line in ("", "more"):
                continue
            if line in ("quit", "exit"):
                raise KeyboardInterrupt
            if line == "help":
                self.say(HELP)
                shown = 0
                continue
            if line == "sheets":
                self.sheets()
                shown = 0
                continue
            action = parse(line, actions)
            if action is None:
                self.say(f"! not an action here: {line!r} (type a number from the list)")
                shown = 0
                continue
            try:
                await self.client.act(self.room, action, window=self.window)
            except ConnectionLost:
                self.say("! the connection dropped before the server answered; reconnecting")
                actions = await self.refresh()  # the seat's actions as the room now sees them
                shown = 0
                continue
            except E.ProtocolError as exc:
                rule = f" [{exc.rule}]" if exc.rule else ""
                self.say(f"! {exc.name}: {exc.message}{rule}")
                if isinstance(exc, E.WindowClosedError | E.NotYourTurnError | E.GameOverError):
                    return
                actions = await self.refresh()
                shown = 0
                continue
            actions = await self.refresh()  # a Yamb turn goes on after a roll
            shown = 0
            if actions:
                self.sheets()

    async def run(self) -> None:
        async for message in self.client.messages():
            self.note(message)
            turn = message.turn if isinstance(message, Snapshot) else message
            if isinstance(turn, Window | TurnWindow) and any(
                a.seat == self.seat for a in turn.actors
            ):
                await self.ask(await self.refresh())
            if self.over:
                await self.final()
                return

    async def final(self) -> None:
        """The final sheets, from the game record: replayed here, so the dice are checked."""
        url = http_url(self.client.url or "", f"/api/rooms/{self.room}/record")
        try:
            record = await asyncio.to_thread(_fetch_json, url)
            result = replay(record)
        except (OSError, ValueError, RulesError) as exc:
            self.say(f"! could not check the game record at {url}: {exc}")
            return
        self.say("")
        for text in result.to_json()["sheets"].values():
            self.say(text)
            self.say("")
        fair = "the dice check out" if result.verified else "the record has no seed"
        self.say(f"Game record: {url} ({fair})")


async def play(
    urls: list[str],
    game: str | None,
    room: str | None,
    name: str,
    seats: int,
    turn_window: int | None,
    bot: str,
) -> int:
    store = SeatStore()
    server = urls[0]
    saved = store.get(server, room) if room is not None else None
    tokens = {room: saved} if room is not None and saved is not None else None
    async with Client(
        urls, name=name, encoding="json", features=[PROGRESS], tokens=tokens
    ) as client:
        if room is not None and saved is not None and room not in client.seats:
            store.forget(server, room)  # refused (the room ended, or the seat went to a bot)
            with contextlib.suppress(TimeoutError):
                await client.receive(timeout=0.5)  # (the client says the room was lost)
        if room is None:
            if game is None:
                raise SystemExit("dicehall play: give --game to create a room or --room to join")
            info = await client.create(
                game, seats, turn_window=turn_window, autostart=True, name=f"{name}'s {game}"
            )
            room = info.room
            await client.join(room, name=name)
            if seats > 1:
                await client.add_bots(room, kind=bot)
            print(f"* room {room}: share it with `dicehall play --room {room}`")
        elif room in client.seats:
            print(f"* took your seat back in room {room}")
        else:
            await client.join(room, name=name)
        store.put(server, room, client.tokens[room])
        terminal = Terminal(client, room)
        await terminal.run()
    return 0
