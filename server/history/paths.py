"""Where history lives on this machine when the operator does not say: the user's data
directory (XDG), so that `make serve` keeps its games across restarts with no set-up."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.engine import make_url


def data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "dicehall"


def default_db() -> str:
    return f"sqlite:///{data_dir() / 'history.db'}"


def outbox_folder(db: str) -> Path:
    """Beside a SQLite file (`history.db` -> `history.pending/`); for a database elsewhere,
    in the data directory. Processes of one machine may share it: a game is stored once."""
    url = make_url(db)
    file = url.database
    if url.get_backend_name() == "sqlite" and file and file != ":memory:":
        return Path(file).with_suffix(".pending")
    return data_dir() / "pending-games"
