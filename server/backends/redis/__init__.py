"""Scale-out: rooms shared by many processes through Redis (backend.py says how)."""

from .backend import RedisBackend

__all__ = ["RedisBackend"]
