"""The game server: Starlette edge, sessions, rooms as actors, backends (memory, redis)."""

__version__ = "0.1.0"
