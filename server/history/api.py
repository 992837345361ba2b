"""The history's HTTP API: what each endpoint answers, built from the store (the Starlette
endpoints in server/app.py only parse the request and send these as JSON).

Every answer is a msgspec Struct, so its JSON Schema is generated from the same classes
(`python -m server.history.api` writes docs/history/api.schema.json; a test keeps the two
equal). Paging: a player's games by a `before` cursor (the last game's `next`, stable
while games are added), a leaderboard by `offset`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import msgspec

from rules import all_games
from rules.errors import RulesError
from rules.records import replay

from .store import HistoryStore, PlayedSeat, Standing, StoredGame

Params = Mapping[str, str]
"""A request's path parameters and query string, as one map."""

MAX_PAGE = 100
"""The most items one page holds (`limit` above it is cut to it)."""


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


T = TypeVar("T")

_letting_go: set[asyncio.Future[Any]] = set()
"""Reads given up at their deadline, still letting go of their connection (SQLAlchemy
closes a connection it drops politely, for up to 2 s more): held here until they end."""


def _let_go(read: asyncio.Future[Any]) -> None:
    _letting_go.discard(read)
    if not read.cancelled():
        read.exception()  # (retrieved: how a read given up on ended is no news)


def bounded(
    answer: Callable[[HistoryStore, Params], Awaitable[T]],
) -> Callable[[HistoryStore, Params], Awaitable[T]]:
    """An endpoint that answers 503 once the store's read deadline has passed (PostgreSQL:
    store.READ_SECONDS): a database out of reach (a black-holed path answers nothing, ever)
    costs a request that long, not the 30 s of a statement's deadline and more. The read
    is cancelled then and finishes on its own (`_letting_go`): the answer does not wait."""

    @functools.wraps(answer)
    async def endpoint(store: HistoryStore, params: Params) -> T:
        read = asyncio.ensure_future(answer(store, params))
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


class ReplayStep(msgspec.Struct, frozen=True):
    """A stored game after its first `step` log entries: what each seat's sheet shows."""

    game_id: str
    step: int
    steps: int
    """The length of the record's log: `step` runs from 0 (the start) to it (the end)."""
    entry: dict[str, Any] | None
    """The log entry that led here (docs/records.md, "--json"), None at step 0."""
    over: bool
    names: list[str]
    scores: list[int]
    sheets: list[str]
    """Every seat's canonical sheet (docs/rules.md), in seat order."""
    views: list[dict[str, Any]]
    """Every seat's view as the protocol's `view` (the web client draws it)."""


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


def _limit(text: str | None, default: int) -> int:
    if text is None:
        return default
    if not text.isdigit() or not 1 <= int(text) <= 10_000:
        raise ApiError(400, "limit must be a whole number from 1")
    return min(int(text), MAX_PAGE)


def _cursor(text: str | None) -> tuple[int, str] | None:
    if text is None:
        return None
    at, _, game_id = text.partition(":")
    if not at.isdigit() or not game_id:
        raise ApiError(400, "before must be a cursor from a page's `next`")
    return int(at), game_id


@bounded
async def player_games(store: HistoryStore, params: Params) -> PlayerGames:
    player = params["player"]
    size = _limit(params.get("limit"), 20)
    games = await store.player_games(player, size + 1, _cursor(params.get("before")))
    more = len(games) > size
    games = games[:size]
    last = games[-1] if games else None
    cursor = f"{last.finished_at}:{last.game_id}" if more and last is not None else None
    return PlayerGames(player, games, cursor)


@bounded
async def player(store: HistoryStore, params: Params) -> PlayerInfo:
    player_id = params["player"]
    name = await store.player_name(player_id)
    if name is None:
        raise ApiError(404, "no player with that id has a stored game")
    ratings = sorted((await store.ratings_of(player_id)).values(), key=lambda s: s.ladder)
    return PlayerInfo(player_id, name, ratings)


@bounded
async def leaderboard(store: HistoryStore, params: Params) -> Leaderboard:
    ladder, offset, limit = params["ladder"], params.get("offset"), params.get("limit")
    if ladder not in {entry.ladder for entry in ladders().ladders}:
        raise ApiError(404, f"no ladder {ladder!r}: /api/leaderboards lists them")
    if offset is not None and not offset.isdigit():
        raise ApiError(400, "offset must be a whole number")
    start, size = int(offset or 0), _limit(limit, 50)
    standings = await store.leaderboard(ladder, start, size + 1)
    more = len(standings) > size
    return Leaderboard(ladder, start, standings[:size], start + size if more else None)


@bounded
async def game(store: HistoryStore, params: Params) -> StoredGame:
    stored = await store.game(params["game"])
    if stored is None:
        raise ApiError(404, "no stored game with that id")
    return stored


async def replay_step(store: HistoryStore, params: Params) -> ReplayStep:
    stored = await game(store, params)  # (the read is bounded; the replay is CPU only)
    game_id, step = stored.id, params.get("step")
    log: list[Any] = stored.record.get("log", [])
    if step is not None and not step.isdigit():
        raise ApiError(400, "step must be a whole number")
    at = min(int(step), len(log)) if step is not None else len(log)
    partial = {k: v for k, v in stored.record.items() if k != "result"}
    partial["log"] = log[:at]
    try:
        done = replay(partial)
    except RulesError as exc:  # (a record stored by another version: RecordError)
        raise ApiError(500, f"the stored record does not replay: {exc}") from None
    state, names = done.state, done.names
    return ReplayStep(
        game_id=game_id,
        step=at,
        steps=len(log),
        entry=done.steps[-1].to_json(names) if done.steps else None,
        over=state.is_over(),
        names=names,
        scores=list(state.scores()),
        sheets=[state.render(i, n) for i, n in enumerate(names)],
        views=[dict(state.view(i)) for i in range(len(names))],
    )


def schema() -> dict[str, Any]:
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
