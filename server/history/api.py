"""The history's HTTP API: what each endpoint answers, built from the store (the Starlette
endpoints in server/edge/app.py only parse the request and send these as JSON).

Every answer is a msgspec Struct, so its JSON Schema is generated from the same classes
(`python -m dicehall.server.history.api` writes docs/history/api.schema.json; a test keeps the two
equal). Paging: a player's games by a `before` cursor (the last game's `next`, stable
while games are added), a leaderboard by `offset`. Every parameter is parsed once, by
server/edge/params.py (a bad one is a 400).
"""

from __future__ import annotations

import asyncio
import functools
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import msgspec

from dicehall.rules import all_games

from ..edge.params import GAME_ID, PLAYER_ID, Params, cursor, identifier, number
from ..jsonvalue import JsonObject
from .replays import NoReplay, ReplaysBusy, ReplayStep
from .store import HistoryStore, PlayedSeat, Standing, StoredGame

if TYPE_CHECKING:
    from .service import HistoryService

MAX_PAGE = 100
"""The most items one page holds (`limit` above it is cut to it)."""
MAX_LIMIT = 10_000
"""The largest `limit` taken (and cut to `MAX_PAGE`); above it, a 400."""
MAX_OFFSET = 1_000_000_000
"""The largest leaderboard `offset` taken: deeper than any board (SQLite and PostgreSQL
refuse an integer of 2**63 or more)."""
MAX_STEP = 1_000_000_000
"""The largest replay `step` taken (a step past the game's end is its end)."""
A_GAME = "a game id (1 to 64 of A-Z a-z 0-9 _ -)"
A_PLAYER = "a player id (1 to 64 of A-Z a-z 0-9 _ : -)"


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Query:
    """One request to the history API."""

    params: Params
    """Its path parameters and query string, as one map."""
    player: str | None = None
    """The player whose key came with it (`Authorization: Bearer KEY`, checked); None:
    no key came."""


T = TypeVar("T")
Answer = Callable[["HistoryService", Query], Awaitable[T]]

_letting_go: set[asyncio.Task[object]] = set()
"""Reads given up at their deadline, still letting go of their connection (SQLAlchemy
closes a connection it drops politely, for up to 2 s more): held here until they end."""


def _let_go(read: asyncio.Task[object]) -> None:
    _letting_go.discard(read)
    if not read.cancelled():
        read.exception()  # (retrieved: how a read given up on ended is no news)


def bounded(answer: Callable[[HistoryStore, Query], Awaitable[T]]) -> Answer[T]:
    """An endpoint on the read store: 503 while the database is not open, and once the
    store's read deadline has passed (PostgreSQL: store.READ_SECONDS): a database out of
    reach (a black-holed path answers nothing, ever) costs a request that long, not the
    30 s of a statement's deadline and more. The read is cancelled then and finishes on
    its own (`_letting_go`): the answer does not wait."""

    @functools.wraps(answer)
    async def endpoint(history: HistoryService, query: Query) -> T:
        store = history.reader
        if store is None:
            raise ApiError(503, "the history database is out of reach; try again soon")
        read = asyncio.ensure_future(answer(store, query))
        try:
            await asyncio.wait([read], timeout=store.read_seconds)
        finally:
            if not read.done():  # (past the deadline, or the request went away)
                read.cancel()
                _letting_go.add(read)
                read.add_done_callback(_let_go)
        if read.done():
            try:
                return read.result()
            except TimeoutError:  # (a statement's own deadline: asyncpg's)
                pass
        within = f" within {store.read_seconds:g} s" if store.read_seconds else ""
        raise ApiError(503, f"the history database did not answer{within}; try again soon")

    return endpoint


class Ladder(msgspec.Struct, frozen=True):
    """A leaderboard: a game under its default rules, or under one of its presets."""

    ladder: str
    game: str
    preset: str | None
    title: str


class Ladders(msgspec.Struct, frozen=True):
    ladders: list[Ladder]


class PlayerGames(msgspec.Struct, frozen=True):
    player: str
    games: list[PlayedSeat]
    """Newest first; each is the player's seat in that game."""
    next: str | None
    """The `before` of the next page; None: this was the last."""


class PlayerInfo(msgspec.Struct, frozen=True):
    id: str
    name: str
    """The name the player last played under."""
    ratings: list[Standing]
    """One per ladder the player has a rated game on, with their rank there."""


class Leaderboard(msgspec.Struct, frozen=True):
    ladder: str
    offset: int
    standings: list[Standing]
    next_offset: int | None
    """The `offset` of the next page; None: this was the last."""


def ladders() -> Ladders:
    out = []
    for game in all_games():
        if game.max_seats < 2:
            continue
        out.append(Ladder(game.name, game.name, None, game.title))
        for preset in sorted(game.presets):
            out.append(
                Ladder(f"{game.name}:{preset}", game.name, preset, f"{game.title} ({preset})")
            )
    return Ladders(out)


def _limit(query: Query, default: int) -> int:
    return min(number(query.params, "limit", 1, MAX_LIMIT, default), MAX_PAGE)


@bounded
async def player_games(store: HistoryStore, query: Query) -> PlayerGames:
    """A player's games; those of private rooms only to the player (docs/history.md,
    "What is public")."""
    player = identifier(query.params, "player", PLAYER_ID, A_PLAYER)
    size, before = _limit(query, 20), cursor(query.params, "before")
    mine = query.player == player
    games = await store.player_games(player, size + 1, before, private=mine)
    more = len(games) > size
    games = games[:size]
    last = games[-1] if games else None
    next_page = f"{last.finished_at}:{last.game_id}" if more and last is not None else None
    return PlayerGames(player, games, next_page)


@bounded
async def player(store: HistoryStore, query: Query) -> PlayerInfo:
    player_id = identifier(query.params, "player", PLAYER_ID, A_PLAYER)
    name = await store.player_name(player_id)
    if name is None:
        raise ApiError(404, "no player with that id has a stored game")
    ratings = sorted((await store.ratings_of(player_id)).values(), key=lambda s: s.ladder)
    return PlayerInfo(player_id, name, ratings)


@bounded
async def leaderboard(store: HistoryStore, query: Query) -> Leaderboard:
    ladder = query.params["ladder"]
    if ladder not in {entry.ladder for entry in ladders().ladders}:
        raise ApiError(404, f"no ladder {ladder[:40]!r}: /api/leaderboards lists them")
    start = number(query.params, "offset", 0, MAX_OFFSET, 0)
    size = _limit(query, 50)
    standings = await store.leaderboard(ladder, start, size + 1)
    more = len(standings) > size
    return Leaderboard(ladder, start, standings[:size], start + size if more else None)


@bounded
async def game(store: HistoryStore, query: Query) -> StoredGame:
    stored = await store.game(identifier(query.params, "game", GAME_ID, A_GAME))
    if stored is None:
        raise ApiError(404, "no stored game with that id")
    return stored


async def replay_step(history: HistoryService, query: Query) -> ReplayStep:
    """Computed by the replay worker, and kept (server/history/replays.py)."""
    step = number(query.params, "step", 0, MAX_STEP, MAX_STEP)
    kept = history.replays.kept(identifier(query.params, "game", GAME_ID, A_GAME), step)
    if kept is not None:
        return kept  # (no read: a stored game never changes)
    stored = await game(history, query)  # (the read is bounded; the replay is CPU only)
    at = min(step, len(stored.record.get("log", [])))
    try:
        return await history.replays.step(stored.id, stored.record, at)
    except ReplaysBusy as exc:
        raise ApiError(503, f"replays are busy ({exc}); try again in a moment") from None
    except NoReplay as exc:
        raise ApiError(500, f"the stored record does not replay: {exc}") from None


def schema() -> JsonObject:
    """The JSON Schema of every answer (msgspec's, from these classes)."""
    kinds = (Ladders, PlayerGames, PlayerInfo, Leaderboard, StoredGame, ReplayStep)
    _, components = msgspec.json.schema_components(kinds, ref_template="#/$defs/{name}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "dicehall history API answers",
        "$defs": components,
    }


if __name__ == "__main__":
    json.dump(schema(), sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
