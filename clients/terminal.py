"""`dicehall play`: a person at a terminal, speaking protocol v1 like any bot.

Two things run side by side: the room's messages, printed as they come (another seat's
roll and moves, windows opening and closing, chat, the end), and the player's turn: the
sheets (drawn from the seat's view with the game's `render_view`, numbered as typed), the
dice, the numbered legal actions, and a prompt whose countdown to the window's deadline
stays true. The messages print above the prompt, never into the line being typed
(clients/terminal_console.py). A move keeps its number for the whole window
(clients/terminal_moves.py), so the number typed is the move read. The client library
reconnects and resumes by itself, so a dropped connection only shows as a line in the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
import urllib.request
from typing import Any, TextIO

from dicehall.protocol import errors
from dicehall.protocol.features import PROGRESS
from dicehall.protocol.messages.server import Window
from dicehall.rules import RulesError
from dicehall.rules.records import replay

from .client import Client, ClientError, ConnectionLost, http_url
from .playerkeys import PlayerKeyStore
from .seatstore import SeatStore
from .terminal_console import Console
from .terminal_moves import Numbered, describe, hint, parse
from .terminal_room import RoomLog
from .terminal_view import dice_line, legend, sheets


def _fetch_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


PAGE = 24
"""Legal actions listed at once (Qwirkle openings can number thousands)."""

HELP = """\
Type the number of a move, or the move as listed (`enter red 3`, `pass`; the first word
may go: `red 3`), or a JSON action. A move keeps its number for the whole turn window.
`more` lists more moves, `sheets` redraws the sheets, `say TEXT` chats, `help` shows this,
`quit` leaves (your seat stays yours: run the same command to come back)."""


class Terminal(RoomLog):
    def __init__(
        self, client: Client, room: str, out: TextIO = sys.stdout, inp: TextIO | None = None
    ) -> None:
        super().__init__(client, room, Console(out, inp))
        self.window: int | None = None
        """The window the moves on offer answer (from `legal`)."""
        self.offset_ms: float | None = None
        """Server clock minus ours, from a `ping` at the start (the heartbeat's later)."""
        self._waiter: asyncio.Future[str] | None = None
        self._quit: asyncio.Future[None] | None = None
        self._chats: set[asyncio.Task[None]] = set()

    # --- the room's messages, printed as they come ------------------------------------------

    async def _pump(self) -> None:
        """Print the room's messages as they come, whatever the prompt is doing."""
        async for message in self.client.messages():
            if isinstance(message, Window) and not self.replayed(message.seq):
                await self._look()  # (the view now: the `sheets` command draws it)
            self.note(message)
            if self.over:
                return

    async def _look(self) -> None:
        with contextlib.suppress(errors.ProtocolError, ClientError):
            self.view = (await self.client.legal(self.room)).view or self.view

    # --- the player's turn ----------------------------------------------------------------

    async def _play(self) -> None:
        while not self.over:
            self.changed.clear()
            turn = self._ours()
            if turn is None:
                await self.changed.wait()
            else:
                await self.ask(turn.window)

    async def refresh(self) -> list[dict[str, Any]]:
        """The seat's view and legal actions, straight from the server (none once over)."""
        try:
            legal = await self.client.legal(self.room)
        except (errors.GameOverError, errors.NotStartedError):
            return []
        self.view = legal.view or self.view  # (asked with the view: never None)
        self.window = legal.window
        return legal.actions

    def countdown(self) -> str:
        deadline = self.deadlines.get(self.window) if self.window is not None else None
        if deadline is None:
            return ""
        offset = self.client.clock_offset_ms
        offset = self.offset_ms if offset is None else offset
        left = (deadline - (offset or 0.0)) / 1000 - time.time()
        return f"[{max(0, int(left + 0.999))}s] "

    def show_sheets(self) -> None:
        if not self.view or not self.game:
            return
        for text in sheets(self.game, self.view, self.names, self.seat):
            self.say(text)
            self.say("")
        key = legend(self.game)
        if key:
            self.say(key)
        dice = dice_line(self.game, self.view, self.seat, self.held.get(self.seat or 0, []))
        if dice:
            self.say(dice)

    def _list(self, listed: list[Numbered], start: int) -> int:
        """Print a page of moves from `start`; returns where the next page starts."""
        end = min(len(listed), start + PAGE)
        for number, action in listed[start:end]:
            does = hint(self.game, action, self.view, self.seat)
            self.say(
                f"  {number:3}. {describe(self.game, action):<22} ({does})"
                if does
                else f"  {number:3}. {describe(self.game, action)}"
            )
        if end < len(listed):
            self.say(f"  ... {len(listed) - end} more: type `more`")
        return end

    def _prompt(self) -> str:
        return f"{self.countdown()}your move (help for help): "

    async def _line(self, window: int) -> str | None:
        """The next line typed for this window, or None once it cannot take a move."""
        self.console.prompt(self._prompt)
        while self._open_for_us(window):
            self.changed.clear()
            waiter: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            self._waiter = waiter
            changed: asyncio.Future[Any] = asyncio.ensure_future(self.changed.wait())
            await asyncio.wait([waiter, changed], return_when=asyncio.FIRST_COMPLETED)
            changed.cancel()
            self._waiter = None
            if waiter.done():
                return waiter.result()
            waiter.cancel()
        self.console.drop_prompt()
        return None

    async def ask(self, window: int) -> None:
        """Offer the moves of this window until the seat's part is done, or it closes."""
        listed = await self._offer()
        page: int | None = 0
        shown = 0
        while listed:
            if page is not None:
                shown, page = self._list(listed, page), None
            line = await self._line(self.window if self.window is not None else window)
            if line is None:
                if not self.over and self.window not in self.timed_out:  # (that line said it)
                    self.say(f"* turn window {self.window} closed before you answered")
                break
            if line in ("", "more"):
                page = shown if shown < len(listed) else 0
                continue
            action = parse(self.game, line, listed)
            if action is None:
                self.say(f"! not a move here: {line!r} (type a number from the list, or help)")
                continue
            owes = await self._act(action)
            if not owes:
                break
            listed, page = await self._offer(), 0  # a Yamb turn goes on after a roll
        self.done.add(window)
        if self.window is not None:
            self.done.add(self.window)

    async def _offer(self) -> list[Numbered]:
        """The seat's moves now, numbered, after the sheets and the dice they act on."""
        listed = self.numbering.listing(self.window, await self.refresh())
        if listed:
            self.show_sheets()
        return listed

    async def _act(self, action: dict[str, Any]) -> list[str] | bool:
        """Send the move; whether to offer the seat's moves again (a list: what it owes)."""
        if action.get("type") == "roll" and "hold" in action and self.seat is not None:
            self.held[self.seat] = list(action["hold"])
        try:
            result = await self.client.act(self.room, action, window=self.window)
        except ConnectionLost:
            self.say("! the connection dropped before the server answered; reconnecting")
            return True  # the seat's actions as the room now sees them
        except errors.ProtocolError as exc:
            rule = f" [{exc.rule}]" if exc.rule else ""
            self.say(f"! {exc.name}: {exc.message}{rule}")
            closed = errors.WindowClosedError | errors.NotYourTurnError | errors.GameOverError
            return not isinstance(exc, closed)
        return list(result.owes)

    # --- commands that work at any time ---------------------------------------------------

    def _on_line(self, line: str | None) -> None:
        """A line typed: quit, help, sheets and chat at any time; a move only when asked."""
        text = "" if line is None else line.strip()
        asked = self._waiter is not None and not self._waiter.done()
        if line is None or text in ("quit", "exit"):
            if self._quit is not None and not self._quit.done():
                self._quit.set_result(None)
            return
        if text == "help":
            self.say(HELP)
        elif text == "sheets":
            self.show_sheets()
        elif text.startswith("say "):
            task = asyncio.ensure_future(self._chat(text[4:]))
            self._chats.add(task)
            task.add_done_callback(self._chats.discard)
        elif asked and self._waiter is not None:
            self._waiter.set_result(text)
            return
        elif text:
            self.say(f"! no move is asked of you now: {text!r} (wait for your turn)")
        if asked:
            self.console.prompt(self._prompt)  # (Enter took the last one)

    async def _chat(self, text: str) -> None:
        try:
            await self.client.chat(self.room, text)
        except (errors.ProtocolError, ClientError, ValueError) as exc:  # (ValueError: its text)
            self.say(f"! the chat line did not go out: {exc}")

    # --- the whole game -------------------------------------------------------------------

    async def _measure_clock(self) -> None:
        """The server's clock against ours, so that the countdown is true from the start."""
        with contextlib.suppress(errors.ProtocolError, ClientError):
            sent = time.time()
            result = await self.client.ping()
            self.offset_ms = result.time - (sent + time.time()) * 500

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(0.2)
            self.console.tick()

    async def run(self) -> None:
        """Play until the game ends (then show the checked record) or the player quits
        (raises KeyboardInterrupt, as Ctrl-C does)."""
        self._quit = asyncio.get_running_loop().create_future()
        await self._measure_clock()
        self.console.start(self._on_line)
        tasks = [asyncio.ensure_future(c) for c in (self._pump(), self._play(), self._tick())]
        try:
            done, _ = await asyncio.wait(
                [tasks[0], tasks[1], self._quit], return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.console.stop()
        if self._quit.done():
            raise KeyboardInterrupt
        for finished in done:
            finished.result()  # (a client that gave up: its error)
        if self.over:
            await self.final()

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
        key = legend(self.game)
        if key:
            self.say(key)
        fair = "the dice check out" if result.verified else "the record has no seed"
        self.say(f"Game record: {url} ({fair})")


async def default_bot(client: Client, game: str) -> str | None:
    """The opponent the web page seats too (clients/web/js/lobby.js): the strong house bot,
    else the game's first; None leaves the choice to the server."""
    kinds = next((g.bots for g in await client.games() if g.name == game), [])
    return "strong" if "strong" in kinds else next(iter(kinds), None)


async def play(
    urls: list[str],
    game: str | None,
    room: str | None,
    name: str,
    seats: int,
    turn_window: int | None,
    bot: str | None,
    key: str | None = None,
) -> int:
    store = SeatStore()
    server = urls[0]
    saved = store.get(server, room) if room is not None else None
    tokens = {room: saved} if room is not None and saved is not None else None
    client = await connect_as(
        key, urls, name=name, encoding="json", features=[PROGRESS], tokens=tokens
    )
    try:
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
                await client.add_bots(room, kind=bot or await default_bot(client, game))
            print(f"* room {room}: share it with `dicehall play --room {room}`")
        elif room in client.seats:
            print(f"* took your seat back in room {room}")
        else:
            await client.join(room, name=name)
        store.put(server, room, client.tokens[room])
        terminal = Terminal(client, room, inp=sys.stdin)
        await terminal.run()
    finally:
        await client.close()
    return 0


async def connect_as(key: str | None, urls: list[str], **options: Any) -> Client:
    """A connected client playing as `key`'s player, else as the one kept for this server
    (docs/protocol.md, "identity"): the first run gets a new player and keeps its key.
    A kept key the server refuses (another deployment now answers at that address, or it
    lost its secret) makes way for a new player; a `key` given is the caller's, and its
    refusal is theirs to see (`BadKeyError`)."""
    keys = PlayerKeyStore()
    kept = keys.get(urls[0]) if key is None else None
    client = Client(urls, key=key or kept, **options)
    try:
        await client.connect()
    except errors.BadKeyError:
        if kept is None:
            raise
        keys.forget(urls[0])
        print("* this server does not know the player you were here: you play as a new one")
        client = Client(urls, **options)
        await client.connect()
    player = client.player
    if key is None and player is not None:
        keys.put(urls[0], player.key)
    return client
