"""A room's finished game as the history stores it (`FinishedGame`), built from the room.

Runs on the room's loop when its game ends: it reads what the room already holds (the
record, the final scores, the seats' players) and decides the ladder; nothing here waits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .ratings import ladder_of
from .store import FinishedGame, SeatResult

if TYPE_CHECKING:
    from dicehall.server.rooms.room import RoomCore


def finished_game(core: RoomCore, finished_at: int) -> FinishedGame:
    state = core.state
    record = core.record
    if state is None or record is None:
        raise ValueError(f"room {core.id} has no finished game")
    game = core.game
    ladder = ladder_of(game.name, core.options, game.resolve_options(), game.presets)
    names: list[str] = record["seats"]
    players = core.players()
    seats = [
        SeatResult(seat=i, name=names[i], player=players[i], score=score)
        for i, score in enumerate(state.scores())
    ]
    return FinishedGame(
        id=core.id,
        game=game.name,
        ladder=ladder,
        finished_at=finished_at,
        record=record,
        seats=seats,
        public=core.public,
    )
