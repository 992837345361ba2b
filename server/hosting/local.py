"""The host's rooms by id, with what /metrics counts across them (server/hosting/host.py)."""

from __future__ import annotations

from dicehall.protocol.errors import NoSuchRoomError

from ..rooms.room import RoomCore
from .actor import RoomActor, Tally


class LocalRooms(dict[str, RoomActor]):
    """Room id -> its actor, for the rooms run here, with the counts kept across them."""

    def __init__(self) -> None:
        super().__init__()
        self.rooms_closed = 0
        self.windows_expired = Tally()
        """Turn windows closed by their deadline, in every room this process ever ran."""

    def core(self, room: str) -> RoomCore | None:
        actor = self.get(room)
        return None if actor is None else actor.core

    def game_of(self, room: str) -> str:
        actor = self.get(room)
        if actor is None:
            raise NoSuchRoomError(f"no room {room!r} here")
        return actor.core.game.name

    def stats(self) -> dict[str, int]:
        """The counts both backends report (docs/operations.md, "Metrics")."""
        cores = [a.core for a in self.values()]
        return {
            "rooms": len(cores),
            "rooms_playing": sum(c.status == "playing" for c in cores),
            "seats_taken": sum(s.kind != "open" for c in cores for s in c.seats),
            "windows_expired": self.windows_expired.value,
            "rooms_closed": self.rooms_closed,
        }
