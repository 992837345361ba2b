"""A room's whole state as plain MessagePack data, so another process can take it over.

Two logs are not in here, because they only grow and are written as they grow: the numbered
message log (the Redis stream) and the game record's log (bytes appended beside it; the
snapshot says how many are its own). A snapshot is written together with what it has
added to both, so the three always agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from protocol.messages.common import SeatAction
from rules import get_game

from .room import RecordLog, RoomCore, Seat

FORMAT = 5
"""5: the open window's `answered` events kept back (`answers`: RoomCore._keeps_back);
4: seats' presence (`connected`), `left` and the spectators too, so that the journal of
commands after the snapshot (server/journal.py) runs again exactly as it ran, and a
process of an earlier version, which would not run the journal, refuses it; 3: the
record's log beside the snapshot (`record_bytes` of it, `record_entries` entries); 2 had
its bytes in `record_log`; 1 had it as maps in `record`. All are read."""


def dump(core: RoomCore) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "id": core.id,
        "game": core.game.name,
        "options": core.options,
        "turn_window": core.turn_window,
        "public": core.public,
        "name": core.name,
        "autostart": core.autostart,
        "host_key": core.host_key,
        "host": core.host,
        "seats": [
            {
                "kind": s.kind,
                "name": s.name,
                "nonce": s.nonce,
                "bot": s.bot,
                "connected": s.connected,
                "left": s.left,
            }
            for s in core.seats
        ],
        "spectators": core.spectators,
        "status": core.status,
        "seed": core.seed.hex(),
        "state": core.state.to_dict() if core.state is not None else None,
        "seq": core.seq,
        "window": core.window_id,
        "deadline": core.deadline,
        "done": msgspec.to_builtins(core._done),
        "answers": core._answers,
        "last_activity": core.last_activity,
        "record": core.record_head,
        "record_bytes": len(core.record_log.data),
        "record_entries": core.record_log.count,
    }


def load(
    data: Mapping[str, Any], history: int = 1024, record_log: bytes = b"", presence: bool = False
) -> RoomCore:
    """A core equal to the dumped one, with `record_log` the bytes kept beside it.
    Presence starts from zero (connections are per process; house bots count as present:
    the new owner seats them again) unless `presence`: then it is as dumped, for the
    journal to run again on, and the caller forgets it after (`RoomCore.forget_presence`).
    """
    if data.get("format") not in (1, 2, 3, 4, FORMAT):
        raise ValueError(f"unsupported room snapshot format {data.get('format')!r}")
    game = get_game(data["game"])
    core = RoomCore(
        data["id"],
        game,
        data["options"],
        len(data["seats"]),
        data["turn_window"],
        public=data["public"],
        name=data["name"],
        seed=bytes.fromhex(data["seed"]),
        history=history,
        autostart=data["autostart"],
        host_key=data["host_key"],
    )
    core.seats = [
        Seat(
            s["kind"],
            s["name"],
            s["nonce"],
            s["bot"],
            connected=s.get("connected", 0),
            left=s.get("left", False),
        )
        for s in data["seats"]
    ]
    core.spectators = data.get("spectators", 0)
    if not presence:
        core.forget_presence()
    core.host = data.get("host")  # (absent when written by a version before the host role)
    core.status = data["status"]
    core.state = game.state_from_dict(data["state"]) if data["state"] is not None else None
    core.seq = data["seq"]
    core.window_id = data["window"]
    core.deadline = data["deadline"]
    core._done = msgspec.convert(data["done"], list[SeatAction])
    core._answers = list(data.get("answers", ()))  # (before 5, every answer was shown)
    core.last_activity = data["last_activity"]
    record = data["record"]
    if data["format"] == 1 and record is not None:
        record = dict(record)
        for entry in record.pop("log"):
            core.record_log.append(entry)
    elif data["format"] == 2:
        core.record_log = RecordLog(data["record_log"], data["record_entries"])
    else:
        size = data["record_bytes"]
        if len(record_log) < size:
            raise ValueError(f"the record log has {len(record_log)} of its {size} bytes")
        core.record_log = RecordLog(record_log[:size], data["record_entries"])
    core.record_head = record
    return core
