"""Games played offline by `dicehall arena --rated`, stored and rated as a server's are.

The arena plays the house bots' own policies through the rules engine; each seat is stored
under the player id the house bots have on a server (`house:KIND`), so arena games and live
games move the same ratings, and a bot author sees a bot's standing among the house bots.
A run's games are keyed `arena-<run>-<k>`: each run is rated anew (its games are new).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence

import msgspec

from dicehall.rules import get_game

from ..connections.identity import house_player
from ..jsonvalue import JsonObject
from .paths import default_db
from .ratings import ladder_of
from .store import FinishedGame, HistoryStore, SeatResult


async def rate_offline(
    db: str | None,
    game: str,
    preset: str | None,
    played: Sequence[tuple[list[str], list[int], dict[str, object]]],
) -> JsonObject:
    """Store `played` ((bot kinds by seat, scores, record) per game) in `db` (default: the
    server's default database) and return the ladder with each bot's standing on it."""
    rules = get_game(game)
    options = rules.resolve_options(None, preset)
    ladder = ladder_of(game, options, rules.resolve_options(), rules.presets)
    if ladder is None:  # (a preset's options are a ladder's by definition)
        raise ValueError(f"{game} with preset {preset!r} has no ladder")
    run, now = secrets.token_hex(4), int(time.time() * 1000)
    store = await HistoryStore.open(db or default_db())
    try:
        for k, (lineup, scores, record) in enumerate(played):
            names = record["seats"]
            if not isinstance(names, list):
                raise ValueError(f"game {k}: its record names no seats")
            seats = [
                SeatResult(seat=i, name=names[i], player=house_player(kind), score=scores[i])
                for i, kind in enumerate(lineup)
            ]
            await store.save(FinishedGame(f"arena-{run}-{k}", game, ladder, now + k, record, seats))
        standings = []
        for kind in dict.fromkeys(kind for lineup, _, _ in played for kind in lineup):
            mine = (await store.ratings_of(house_player(kind))).get(ladder)
            if mine is not None:
                standings.append(msgspec.to_builtins(mine))
        return {"ladder": ladder, "run": run, "stored": len(played), "standings": standings}
    finally:
        await store.close()
