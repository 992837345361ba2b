"""The history service: a game the database refuses for good ends its wait as a stored one
does (the backend keeps a finished room until history is done with its game)."""

from __future__ import annotations

from pathlib import Path

from dicehall.server.history.service import HistoryService
from tests.server.history.test_store import finished
from tests.support.postgres import PostgresServer
from tests.support.wait import eventually


async def test_a_game_the_database_refuses_is_done_with_as_a_stored_one_is(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    service = HistoryService(postgres.fresh_database(), tmp_path / "outbox", sweep=0.2)
    service.outbox.put(finished("good", [("ada", 1), ("bo", 2)]))
    service.outbox.put(finished("bad", [("x" * 65, 1), ("bo", 2)]))  # id too long: refused
    done: list[str] = []
    service.on_stored = done.append
    await service.start()
    try:
        await eventually(lambda: sorted(done) == ["bad", "good"], "both done with", timeout=60)
        assert service.saved == 1 and service.failures == 1
        assert service.outbox.pending() == [], "neither is tried again"
    finally:
        await service.stop()
