"""A room's whole state as plain MessagePack data, so another process can take it over.

The numbered log is not in here: it lives beside the snapshot (the Redis stream), and a
snapshot is written together with the messages it has produced, so the two always agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from protocol.messages.common import SeatAction
from rules import get_game

from .room import RecordLog, RoomCore, Seat

FORMAT = 2
"""2: the record's log as packed bytes (`record_log`, `record_entries`); 1 had it in
`record`, and is still read (a process of the previous version may have written it)."""


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
        "seats": [
            {"kind": s.kind, "name": s.name, "nonce": s.nonce, "bot": s.bot} for s in core.seats
        ],
        "status": core.status,
        "seed": core.seed.hex(),
        "state": core.state.to_dict() if core.state is not None else None,
        "seq": core.seq,
        "window": core.window_id,
        "deadline": core.deadline,
        "done": msgspec.to_builtins(core._done),
        "last_activity": core.last_activity,
        "record": core.record_head,
        "record_log": bytes(core.record_log.data),
        "record_entries": core.record_log.count,
    }


def load(data: Mapping[str, Any], history: int = 1024) -> RoomCore:
    """A core equal to the dumped one; presence starts from zero (connections are per process).

    House bots count as present: the new owner seats them again.
    """
    if data.get("format") not in (1, FORMAT):
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
        Seat(s["kind"], s["name"], s["nonce"], s["bot"], connected=1 if s["kind"] == "bot" else 0)
        for s in data["seats"]
    ]
    core.status = data["status"]
    core.state = game.state_from_dict(data["state"]) if data["state"] is not None else None
    core.seq = data["seq"]
    core.window_id = data["window"]
    core.deadline = data["deadline"]
    core._done = msgspec.convert(data["done"], list[SeatAction])
    core.last_activity = data["last_activity"]
    record = data["record"]
    if data["format"] == 1 and record is not None:
        record = dict(record)
        for entry in record.pop("log"):
            core.record_log.append(entry)
    else:
        core.record_log = RecordLog(data["record_log"], data["record_entries"])
    core.record_head = record
    return core
