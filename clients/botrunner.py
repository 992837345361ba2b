"""`dicehall bot`: bot policies playing over the network, one `Client` per seat.

Each seat is a separate connection, as a remote player would be: the bots share nothing
but the server. Without `--room` the first bot creates a private room (it is the host),
every bot joins its seat, the host starts, and they play to the end; the next game gets
a new room. With `--room` the bots take open seats of an existing room.

After every game the runner checks the dice: sha256(revealed seed) must equal the
commitment published at the start, and the game record fetched over HTTP must replay to
the same scores with every roll derived from that seed (`rules.records.replay`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dicehall.protocol import errors
from dicehall.protocol.messages.common import Actor, RoomInfo
from dicehall.protocol.messages.server import GameOver, RoomMessage, RoomUpdate, Snapshot, Window
from dicehall.protocol.subprotocols import Encoding
from dicehall.rules import RulesError
from dicehall.rules.bots import Bot, get_bot
from dicehall.rules.records import replay

from .client import Client, ClientError, ConnectionLost, RoomLost, http_url

log = logging.getLogger("dicehall.bot")

RETRY_UNAVAILABLE = 0.25
"""Seconds before asking again a room that is moving to another process."""

JOIN_TIMEOUT = 30.0
"""Seconds to wait for the snapshot that follows a join."""


class BotError(Exception):
    """The bots could not play or check a game (the cause is in the message)."""


@dataclass
class BotConfig:
    urls: list[str]
    game: str
    seats: int | None = None
    """Bots to seat; None: 2 in a new room, every open seat of `room`."""
    room: str | None = None
    bot: str = "random"
    games: int = 1
    turn_window: int | None = None
    encoding: Encoding = Encoding.MSGPACK
    key: str | None = None
    """The player key every seat plays as (docs/protocol.md, "identity"); None: each seat
    is a new player, as any client's first `hello` makes it."""


@dataclass
class GameReport:
    room: str
    game: str
    scores: dict[str, int]
    winners: list[str]
    seed_verified: bool
    seconds: float
    problems: list[str] = field(default_factory=list)
    """Why the seed did not verify (printed to stderr, not part of the JSON line)."""
    players: dict[str, str] = field(default_factory=dict)
    """The bots' seats by name: the player id each played as (none from a server without
    the `identity` feature)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "room": self.room,
            "game": self.game,
            "scores": self.scores,
            "winners": self.winners,
            "seed_verified": self.seed_verified,
            "seconds": self.seconds,
            "players": self.players,
        }


class SeatBot:
    """One seat: a policy answering every turn window that names the seat.

    On a `window` listing its seat it asks `legal`, lets the policy `decide` and sends
    `act`; it repeats while the reply says the seat still `owes` an action in the same
    window (a Yamb turn is several actions). A late answer (the window closed meanwhile)
    is counted, not fatal: the room applied the rules' default. So are the answers
    `unavailable` and the connections lost under a request: both are asked again.

    It may also only watch (`watch`, no seat: it never acts), and `on_message` sees every
    message of its room, in order, before the bot acts on it: what a test holds against
    the room's log, or a bot runner user logs. `think` paces it like a person: seconds
    before each action.
    """

    def __init__(
        self,
        client: Client,
        kind: str,
        game: str,
        *,
        think: float = 0.0,
        on_message: Callable[[RoomMessage], None] | None = None,
    ) -> None:
        self.client = client
        self.kind = kind
        self.game = game
        self.policy: Bot = get_bot(kind, game)
        self.think = think
        """Seconds the bot takes over each action (a person's pace), 0: none."""
        self.on_message = on_message
        self.room: str | None = None
        self.seat: int | None = None
        self.commitment: str | None = None
        """The dice commitment as this seat saw it published when the game started."""
        self.joined = asyncio.Event()
        """Set once the snapshot after the join arrived (`client.info(room)` is known)."""
        self.actions = 0
        self.late = 0
        self.unavailable = 0
        """`unavailable` answers met (the room was moving between processes; retried)."""
        self.lost = 0
        """Requests that failed with `ConnectionLost` (retried once the client is back)."""

    async def join(self, room: str, seat: int | None = None) -> None:
        """Sit in `seat` (None: any open seat)."""
        result = await self.client.join(room, seat)
        self.room, self.seat = result.room, result.seat

    async def watch(self, room: str) -> None:
        """Spectate `room` without a seat: `run` follows it to the end and never acts."""
        await self.client.spectate(room)
        self.room, self.seat = room, None

    async def run(self) -> GameOver:
        """Play until the room's `game_over`, which is returned."""
        room = self.room
        assert room is not None
        async for message in self.client.messages():
            if isinstance(message, RoomLost):
                if message.room == room:
                    raise BotError(f"seat {self.seat} of room {room} lost: {message.reason}")
                continue
            if message.room != room:
                continue
            if self.on_message is not None:
                self.on_message(message)
            if isinstance(message, Snapshot | RoomUpdate):
                self._note(message.info)
            if isinstance(message, Snapshot):
                self.joined.set()
                if message.turn is not None and self._acts(message.turn.actors):
                    await self._play(message.turn.window)
            elif isinstance(message, Window) and self._acts(message.actors):
                await self._play(message.window)
            elif isinstance(message, GameOver):
                return message
        raise BotError(f"the connection of seat {self.seat} closed before the game ended")

    def _acts(self, actors: list[Actor]) -> bool:
        return self.seat is not None and any(a.seat == self.seat for a in actors)

    def _note(self, info: RoomInfo) -> None:
        if info.commitment is None:
            return
        if self.commitment is None:
            self.commitment = info.commitment
        elif info.commitment != self.commitment:
            raise BotError(
                f"room {info.room} changed its dice commitment from {self.commitment} "
                f"to {info.commitment}"
            )

    async def _play(self, window: int) -> None:
        room = self.room
        assert room is not None
        while True:
            turn = self.client.turn(room)
            if turn is None or turn.window != window or not self._acts(turn.actors):
                return  # already closed: a message still queued says so
            try:
                legal = await self.client.legal(room)
            except (errors.GameOverError, errors.NotStartedError):
                return
            except ConnectionLost:
                self.lost += 1
                continue  # asked again once the client is back
            except errors.UnavailableError:  # the room is moving between servers (Redis)
                self.unavailable += 1
                await asyncio.sleep(RETRY_UNAVAILABLE)
                continue
            if legal.window != window or not legal.actions:
                return
            assert legal.view is not None  # (asked with the view)
            action = self.policy.decide(legal.view, legal.actions)
            if self.think:
                await asyncio.sleep(self.think)  # thinking, not waiting for anything
            try:
                acted = await self.client.act(room, action, window)
            except (errors.WindowClosedError, errors.NotYourTurnError) as exc:
                self.late += 1
                log.warning("seat %s of %s answered late: %s", self.seat, room, exc)
                return
            except errors.GameOverError:
                return
            except ConnectionLost:
                self.lost += 1
                continue  # applied or not, `legal` now tells
            except errors.UnavailableError:
                self.unavailable += 1
                continue  # applied or not, `legal` (retried after a pause) now tells
            self.actions += 1
            if not acted.owes:
                return


def _rotate(urls: list[str], start: int) -> list[str]:
    """Every URL, starting at `start`: seat i connects to URL i mod n first."""
    k = start % len(urls)
    return urls[k:] + urls[:k]


def _fetch_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


async def check_dice(over: GameOver, commitment: str | None, url: str) -> list[str]:
    """Why the game's dice do not verify (empty: they do).

    The seed must hash to the commitment published at the start, and the game record
    must replay with every roll derived from that seed, to the scores announced.
    """
    problems: list[str] = []
    if commitment is None:
        problems.append("no commitment was published at the start")
    elif over.commitment != commitment:
        problems.append(f"game_over names commitment {over.commitment}, not {commitment}")
    if hashlib.sha256(bytes.fromhex(over.seed)).hexdigest() != over.commitment:
        problems.append("sha256(seed) differs from the commitment")
    record_url = http_url(url, f"/api/rooms/{over.room}/record")
    try:
        record = await asyncio.to_thread(_fetch_json, record_url)
    except (OSError, urllib.error.URLError, ValueError) as exc:
        return [*problems, f"cannot fetch the record {record_url}: {exc}"]
    try:
        result = replay(record)
    except RulesError as exc:
        return [*problems, f"the record does not replay: {exc}"]
    if result.verified is not True:
        problems.append("the record carries no seed")
    if record.get("seed") != over.seed:
        problems.append("the record's seed differs from the revealed one")
    if not result.state.is_over() or result.state.scores() != over.scores:
        problems.append(f"the record replays to {result.state.scores()}, not {over.scores}")
    return problems


async def play_game(cfg: BotConfig) -> GameReport:
    """Seat the bots (in a new room, or `cfg.room`), play one game, check its dice."""
    tag = secrets.token_hex(2)
    clients: list[Client] = []
    bots: list[SeatBot] = []
    runs: list[asyncio.Task[GameOver]] = []

    async def seat_bot(room: str, seat: int | None, client: Client | None = None) -> SeatBot:
        index = len(clients)
        if client is None:
            client = Client(
                _rotate(cfg.urls, index),
                name=f"{cfg.bot}-{tag}-{index + 1}",
                encoding=cfg.encoding,
                key=cfg.key,
            )
            clients.append(client)
            await client.connect()
        bot = SeatBot(client, cfg.bot, cfg.game)
        await bot.join(room, seat)
        bots.append(bot)
        runs.append(asyncio.get_running_loop().create_task(bot.run()))
        async with asyncio.timeout(JOIN_TIMEOUT):
            await bot.joined.wait()
        return bot

    try:
        host = Client(cfg.urls, name=f"{cfg.bot}-{tag}-1", encoding=cfg.encoding, key=cfg.key)
        clients.append(host)
        await host.connect()
        began = time.monotonic()
        commitment: str | None = None
        if cfg.room is None:
            seats = cfg.seats or 2
            info = await host.create(
                cfg.game,
                seats,
                turn_window=cfg.turn_window,
                public=False,
                name=f"dicehall bot: {cfg.game}",
            )
            room = info.room
            await seat_bot(room, 0, host)
            await asyncio.gather(*(seat_bot(room, i) for i in range(1, seats)))
            commitment = await host.start(room)
        else:
            room = cfg.room
            await seat_bot(room, None, host)
            wanted = cfg.seats
            if wanted is None:
                wanted = 1 + _open_seats(host.info(room))
            while len(bots) < wanted:
                await seat_bot(room, None)
            info_now = bots[-1].client.info(room)  # the last join's snapshot saw every join
            if info_now is not None and info_now.status == "open" and not _open_seats(info_now):
                # (a room someone else hosts: its host starts it, or it starts by itself)
                with contextlib.suppress(errors.AlreadyStartedError, errors.ForbiddenError):
                    commitment = await host.start(room)
        overs = await asyncio.gather(*runs)
        seconds = round(time.monotonic() - began, 3)
        over = overs[0]
        problems: list[str] = []
        if any(o.seed != over.seed or o.scores != over.scores for o in overs):
            problems.append("the seats saw different game_over messages")
        for bot in bots:
            if commitment is None:
                commitment = bot.commitment
            if bot.commitment != commitment:
                problems.append(f"seat {bot.seat} saw commitment {bot.commitment}")
        problems += await check_dice(over, commitment, host.url or cfg.urls[0])
        names = _names(host.info(room), len(over.scores))
        players = {
            names[bot.seat]: player.id
            for bot in bots
            if bot.seat is not None and (player := bot.client.player) is not None
        }
        return GameReport(
            room=room,
            game=cfg.game,
            scores={names[i]: score for i, score in enumerate(over.scores)},
            winners=[names[i] for i in over.winners],
            seed_verified=not problems,
            seconds=seconds,
            problems=problems,
            players=players,
        )
    finally:
        for task in runs:
            task.cancel()
        await asyncio.gather(*runs, return_exceptions=True)
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)


def _open_seats(info: RoomInfo | None) -> int:
    return 0 if info is None else sum(s.kind == "open" for s in info.seats)


def _names(info: RoomInfo | None, seats: int) -> list[str]:
    if info is None:
        return [f"seat {i}" for i in range(seats)]
    return [s.name or f"seat {s.seat}" for s in info.seats]


def describe_error(exc: BaseException) -> str:
    if isinstance(exc, errors.ProtocolError) and exc.code:
        return f"{exc.name} ({exc.code}): {exc}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


async def run_bots(
    cfg: BotConfig,
    emit: Callable[[dict[str, Any]], None],
    warn: Callable[[str], None],
) -> int:
    """Play `cfg.games` games one after the other; emit one JSON-able dict per game.

    Returns the exit status: 0 when every game ended with verified dice, 1 on any protocol
    error (reported through `warn`) or failed check.
    """
    status = 0
    for _ in range(cfg.games):
        try:
            report = await play_game(cfg)
        except (errors.ProtocolError, ClientError, BotError, RulesError, TimeoutError) as exc:
            warn(f"dicehall bot: {describe_error(exc)}")
            return 1
        emit(report.to_json())
        for problem in report.problems:
            warn(f"dicehall bot: room {report.room}: {problem}")
        if not report.seed_verified:
            status = 1
    return status
