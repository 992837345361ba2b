"""The outbox folder and the writer's pass over it, against real databases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dicehall.server.history.outbox import SpoolOutbox
from dicehall.server.history.store import HistoryStore
from dicehall.server.history.writer import Writer
from tests.server.history.test_store import finished
from tests.support.postgres import PostgresServer


def test_a_game_waits_in_a_file_until_it_is_done(tmp_path: Path) -> None:
    outbox = SpoolOutbox(tmp_path / "pending")
    first, second = finished("a1", [("ada", 3), ("bo", 1)]), finished("b2", [("bo", 2)])
    outbox.put(first)
    outbox.put(second)
    assert outbox.pending() == ["a1", "b2"]
    assert outbox.take("a1") == first
    outbox.done("a1")
    outbox.done("a1")  # (twice: another writer got there first)
    assert outbox.pending() == ["b2"] and outbox.take("a1") is None
    assert SpoolOutbox(tmp_path / "pending").take("b2") == second  # (another process)


def test_a_file_gone_between_the_listing_and_its_stat_is_not_waiting(tmp_path: Path) -> None:
    """(A writer deletes a stored game's file while /metrics counts the files: a listed
    name whose `stat` finds nothing, which a dangling link reproduces every time.)"""
    outbox = SpoolOutbox(tmp_path)
    outbox.put(finished("a1", [("ada", 3)]))
    (tmp_path / "gone.json").symlink_to(tmp_path / "deleted.json")
    assert outbox.pending() == ["a1"]


def test_an_unreadable_file_is_set_aside(tmp_path: Path) -> None:
    outbox = SpoolOutbox(tmp_path)
    (tmp_path / "x1.json").write_text('{"id": "x1"')
    assert outbox.take("x1") is None
    assert outbox.pending() == [] and (tmp_path / "x1.bad").exists()


@pytest.mark.parametrize("bad", ["../etc", "a/b", "", "x" * 65, "a.json"])
def test_only_room_ids_name_files(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError):
        SpoolOutbox(tmp_path).done(bad)


async def test_the_writer_stores_each_game_once_and_reports(
    history_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outbox = SpoolOutbox(tmp_path)
    games = [finished(f"g{i}", [("ada", i), ("bo", 2)], at=i) for i in range(3)]
    for game in games:
        outbox.put(game)
    writer = Writer(history_url, outbox)
    try:
        assert await writer.drain() is True
        outbox.put(games[0])  # (stored already: a crash after the save, before the delete)
        assert await writer.drain() is True
    finally:
        await writer.close()
    reports = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert reports[0] == {"ready": True}
    assert [(r["saved"], r["new"]) for r in reports[1:]] == [
        ("g0", True),
        ("g1", True),
        ("g2", True),
        ("g0", False),
    ]
    assert outbox.pending() == []
    store = await HistoryStore.open(history_url)
    try:
        assert await store.counts() == (3, 2)
    finally:
        await store.close()


async def test_a_game_the_database_refuses_does_not_hold_up_the_rest(
    postgres: PostgresServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outbox = SpoolOutbox(tmp_path)
    outbox.put(finished("good", [("ada", 1), ("bo", 2)]))
    bad = finished("bad", [("x" * 65, 1), ("bo", 2)])  # a player id longer than the column
    outbox.put(bad)
    writer = Writer(postgres.fresh_database(), outbox)
    try:
        assert await writer.drain() is True
    finally:
        await writer.close()
    reports = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {"saved": "good"}.items() <= next(r for r in reports if "saved" in r).items()
    assert next(r for r in reports if "rejected" in r)["rejected"] == "bad"
    assert outbox.pending() == [] and (tmp_path / "bad.bad").exists()
