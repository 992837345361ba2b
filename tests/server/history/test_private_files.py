"""History's files are its owner's alone (issue 39): a SQLite history holds the secret
that signs player keys, so another user of the machine who could read it could forge any
player's key (server/history/paths.py)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from dicehall.server.history.outbox import SpoolOutbox
from dicehall.server.history.store import HistoryStore
from tests.server.history.test_store import finished


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    """The usual umask, under which files are made 0644 unless asked otherwise."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


async def a_game_stored(file: Path) -> None:
    store = await HistoryStore.open(f"sqlite:///{file}")
    try:
        await store.save(finished("r1", [("ada", 10), ("bo", 5)]))
        await store.signing_secret()
    finally:
        await store.close()


async def test_a_new_database_and_the_folders_made_for_it_are_private(tmp_path: Path) -> None:
    file = tmp_path / "made" / "for" / "history.db"
    store = await HistoryStore.open(f"sqlite:///{file}")
    try:
        await store.save(finished("r1", [("ada", 10), ("bo", 5)]))
        # (the -wal and -shm files are there or not as SQLite's version decides: the
        # oldest supported one keeps no -wal open here; each that is there is private)
        made = sorted(file.parent.iterdir())
        assert file in made
        assert {p.name: mode(p) for p in made} == {p.name: 0o600 for p in made}
    finally:
        await store.close()
    assert mode(tmp_path / "made") == mode(tmp_path / "made" / "for") == 0o700


async def test_an_older_versions_database_is_tightened_when_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    data = tmp_path / "dicehall"  # (the default data folder: dicehall's own)
    file = data / "history.db"
    await a_game_stored(file)
    wal = file.with_name("history.db-wal")
    wal.write_bytes(b"")  # (as a killed process leaves it)
    for path in (file, wal):
        path.chmod(0o644)
    data.chmod(0o755)
    store = await HistoryStore.open(f"sqlite:///{file}")
    try:
        assert (mode(data), mode(file)) == (0o700, 0o600)
        assert not wal.exists() or mode(wal) == 0o600, "(SQLite may have removed it)"
        assert await store.counts() == (1, 2)
    finally:
        await store.close()


async def test_a_folder_the_operator_named_is_left_as_it_is(tmp_path: Path) -> None:
    """(It may be shared: /var/lib, a volume. The file in it is private, which suffices.)"""
    folder = tmp_path / "theirs"
    folder.mkdir(0o755)
    await a_game_stored(folder / "history.db")
    assert (mode(folder), mode(folder / "history.db")) == (0o755, 0o600)


def test_the_outbox_and_its_files_are_private(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "pending"
    SpoolOutbox(folder).put(finished("a1", [("ada", 3)]))
    assert mode(folder) == mode(folder.parent) == 0o700
    assert mode(folder / "a1.json") == 0o600

    folder.chmod(0o755)  # an older version's folder and file
    (folder / "a1.json").chmod(0o644)
    SpoolOutbox(folder)
    assert (mode(folder), mode(folder / "a1.json")) == (0o700, 0o600)
