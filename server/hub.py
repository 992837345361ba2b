"""Local fan-out: a room's messages to this process's members.

The hub only routes; each member picks its variant and takes the frame the message has
memoised for that variant and encoding (server/room.py, `Outgoing.frame`).
"""

from __future__ import annotations

from typing import Protocol

from .outgoing import Outgoing


class Member(Protocol):
    """Something that receives a room's messages: a WebSocket session or a house bot."""

    progress: bool
    """It asked for who has answered the open window (the `progress` feature)."""

    def deliver(self, room: str, outgoing: list[Outgoing]) -> None:
        """Queue for sending; never blocks (a slow member is cut off, not waited for)."""

    def deliver_progress(self, room: str, progress: Outgoing) -> None:
        """Who has answered the open window (a `Progress`, unnumbered): for the members
        that asked for it and are up to date with the room."""


class Hub:
    def __init__(self) -> None:
        self._rooms: dict[str, set[Member]] = {}
        self._progress: dict[str, set[Member]] = {}
        """The members of each room that asked for `progress` (few: people, not bots)."""

    def add(self, room: str, member: Member) -> None:
        self._rooms.setdefault(room, set()).add(member)
        if member.progress:
            self._progress.setdefault(room, set()).add(member)

    def remove(self, room: str, member: Member) -> None:
        for rooms in (self._rooms, self._progress):
            members = rooms.get(room)
            if members is not None:
                members.discard(member)
                if not members:
                    del rooms[room]

    def wants_progress(self, room: str) -> bool:
        return room in self._progress

    def members(self, room: str) -> int:
        return len(self._rooms.get(room, ()))

    def deliver(self, room: str, outgoing: list[Outgoing]) -> None:
        members = self._rooms.get(room)
        if members and outgoing:
            for member in list(members):
                member.deliver(room, outgoing)

    def progress(self, room: str, progress: Outgoing) -> None:
        members = self._progress.get(room)
        if members:
            for member in list(members):
                member.deliver_progress(room, progress)
