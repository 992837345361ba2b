"""Where rooms live: the seam between one process (memory) and many (redis)."""

from .base import Backend, Rooms, RoomSpec
from .memory import MemoryBackend

__all__ = ["Backend", "MemoryBackend", "RoomSpec", "Rooms"]
