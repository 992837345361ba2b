"""A room's game record: its head made at the start and finished at the end, and both
head and log (`RecordLog`, which the room appends to as the game goes) restored from a
snapshot.

The head and the log are apart because the log is most of a room's memory: it stays
packed until the record is asked for (docs/architecture.md, server/).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dicehall.protocol.messages.server import GameOver
from dicehall.rules import State
from dicehall.rules.records import new_record

from .outgoing import RecordLog
from .seat import Seat
from .snapshot import SavedRoom, SnapshotError


def record_head(
    game: str, options: Mapping[str, Any], seats: list[Seat], state: State
) -> dict[str, Any]:
    """The record of a game that starts, without its log (kept in a `RecordLog`)."""
    names = distinct([s.name or f"seat {i}" for i, s in enumerate(seats)])
    head = new_record(game, options, names, state)
    del head["log"]
    return head


def finish(head: dict[str, Any], seed: str, state: State) -> None:
    """The record of a game that ended: its seed (now that nothing can be drawn from it)
    and its scores by seat name."""
    head["seed"] = seed
    names = head["seats"]
    head["result"] = {"scores": dict(zip(names, state.scores(), strict=True))}


def game_over(room: str, seq: int, state: State, seed: str) -> GameOver:
    return GameOver(
        room=room,
        seq=seq,
        scores=state.scores(),
        winners=state.winners(),
        seed=seed,
        commitment=state.commitment(),
    )


def whole(head: dict[str, Any] | None, log: RecordLog) -> dict[str, Any] | None:
    """The game record so far (built on each call: a copy, not to be changed)."""
    if head is None:
        return None
    return {**head, "log": log.entries()}


def restored(saved: SavedRoom, record_log: bytes) -> tuple[dict[str, Any] | None, RecordLog]:
    """The saved record's head and log, whichever snapshot format holds them: format 1
    kept the log in the head, format 2 packed in the snapshot, later ones in `record_log`,
    the bytes kept beside the snapshot."""
    head = saved.record
    log = RecordLog()
    if saved.format == 1 and head is not None:
        head = dict(head)
        for entry in head.pop("log"):
            log.append(entry)
    elif saved.format == 2:
        log = RecordLog(saved.record_log or b"", saved.record_entries or 0)
    else:
        size = saved.record_bytes or 0
        if len(record_log) < size:
            raise SnapshotError(f"the record log has {len(record_log)} of its {size} bytes")
        log = RecordLog(record_log[:size], saved.record_entries or 0)
    return head, log


def distinct(names: list[str]) -> list[str]:
    """Seat names as a record needs them: distinct (two players may both be "player")."""
    out: list[str] = []
    for name in names:
        candidate, n = name, 2
        while candidate in out:
            candidate, n = f"{name} ({n})", n + 1
        out.append(candidate)
    return out
