"""Where history lives on this machine when the operator does not say: the user's data
directory (XDG), so that `make serve` keeps its games across restarts with no set-up; and
keeping its files to their owner.

Why private: a SQLite history holds the secret that signs player keys (docs/history.md,
"Players"), so a user of the machine who could read it could forge any player's key; the
outbox holds finished games on their way to the database. So dicehall creates these
files 0600 and its folders 0700 (whatever the umask), and tightens those an older version
left readable when it opens them, with a warning in the log.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
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


log = logging.getLogger("dicehall.history")

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def private_folder(folder: Path, own: bool) -> None:
    """Make `folder` with its missing parents, each 0700. `own`: the folder is dicehall's
    alone (the data directory, an outbox), so an existing one is tightened too; a folder
    the operator named (where a SQLite file goes) is theirs to set."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):  # (another process made it meanwhile)
            path.mkdir(FOLDER_MODE)
        os.chmod(path, FOLDER_MODE)  # (mkdir's mode passes through the umask)
    if own and not missing:
        _tighten(folder, FOLDER_MODE)


def private_file(path: Path) -> None:
    """Make `path` if missing (empty, 0600); tighten it if others may read it."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
        return
    _tighten(path, FILE_MODE)


def tighten(path: Path) -> None:
    """`path`, if it exists, readable and writable by its owner only."""
    with contextlib.suppress(FileNotFoundError):
        _tighten(path, FILE_MODE)


def _tighten(path: Path, mode: int) -> None:
    now = stat.S_IMODE(path.stat().st_mode)
    if now & 0o077 == 0:
        return
    try:
        os.chmod(path, mode)
    except OSError as exc:  # (not the owner: the operator's to fix, and the log says so)
        log.warning("history: %s is open to other users (mode %04o): %s", path, now, exc)
        return
    log.warning("history: %s was open to other users (mode %04o): now %04o", path, now, mode)
