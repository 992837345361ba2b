"""Which of this process's sessions holds each seat: a seat token taken on another
connection replaces the seat's holder, which is told so (and closes with 4006)."""

from __future__ import annotations

from typing import Protocol


class Holder(Protocol):
    def replaced(self, room: str) -> None:
        """Another connection took this holder's seat in `room` with its token."""


class SeatHolders:
    def __init__(self) -> None:
        self._holders: dict[tuple[str, int], Holder] = {}

    def take(self, room: str, seat: int, holder: Holder) -> bool:
        """`holder` holds the seat now; True when it was taken from another, told so."""
        previous = self._holders.get((room, seat))
        self._holders[(room, seat)] = holder
        if previous is None or previous is holder:
            return False
        previous.replaced(room)
        return True

    def let_go(self, room: str, seat: int, holder: Holder) -> None:
        """`holder` gives the seat up (unless another holds it already)."""
        if self._holders.get((room, seat)) is holder:
            del self._holders[(room, seat)]

    def __len__(self) -> int:
        return len(self._holders)
