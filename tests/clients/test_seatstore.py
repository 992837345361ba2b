"""Seat tokens saved between runs of `dicehall play`."""

from __future__ import annotations

from pathlib import Path

import pytest

from dicehall.clients import seatstore
from dicehall.clients.seatstore import SeatStore


def test_tokens_are_kept_per_server_and_room_for_the_user_only(tmp_path: Path) -> None:
    store = SeatStore(tmp_path / "dicehall" / "seats.json")
    assert store.get("ws://a/ws", "r1") is None
    store.put("ws://a/ws", "r1", "st1.r1.0.n.m")
    store.put("ws://b/ws", "r1", "st1.r1.1.n.m")
    assert store.get("ws://a/ws", "r1") == "st1.r1.0.n.m"
    assert store.get("ws://b/ws", "r1") == "st1.r1.1.n.m"
    assert store.path.stat().st_mode & 0o777 == 0o600
    store.forget("ws://a/ws", "r1")
    assert store.get("ws://a/ws", "r1") is None and store.get("ws://b/ws", "r1") is not None


def test_the_oldest_tokens_go_first_and_a_broken_file_counts_as_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seatstore, "KEEP", 3)
    store = SeatStore(tmp_path / "seats.json")
    for i in range(5):
        store.put("ws://a/ws", f"r{i}", f"t{i}")
    assert [store.get("ws://a/ws", f"r{i}") for i in range(5)] == [None, None, "t2", "t3", "t4"]
    store.path.write_text("{not json", encoding="utf-8")
    assert store.get("ws://a/ws", "r4") is None
    store.put("ws://a/ws", "r9", "t9")
    assert store.get("ws://a/ws", "r9") == "t9"


def test_the_state_directory_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert SeatStore().path == tmp_path / "dicehall" / "seats.json"
