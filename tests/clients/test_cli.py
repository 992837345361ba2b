"""The `dicehall` command as a user runs it: a real process, files on disk, exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.cli import dicehall
from tests.support.sheets import QWINTO_28, QWIXX_26


def write(tmp_path: Path, name: str, data: Any) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_sheet_qwinto_worked_example(tmp_path: Path) -> None:
    sheet = {
        "name": "Jane Doe",
        "rows": {
            "red": [2, 3, 6, None, 9, 11, 12, 13, 15, 16],
            "yellow": [1, 3, 4, 5, None, None, 12, 13, None, None],
            "blue": [1, 3, None, 6, None, 7, None, None, 10, None],
        },
        "failed": 3,
    }
    out = dicehall("sheet", "qwinto", write(tmp_path, "q.json", sheet), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"score": 28, "text": QWINTO_28}
    plain = dicehall("sheet", "qwinto", "-", stdin=json.dumps(sheet))
    assert plain.stdout == QWINTO_28 + "\n"


def test_sheet_qwixx_worked_example(tmp_path: Path) -> None:
    sheet = {
        "name": "Jane Doe",
        "rows": {
            "red": [9, 10, 12],
            "yellow": [3, 6, 7],
            "green": [9, 7, 5, 4, 2],
            "blue": [11, 5],
        },
        "locked": ["green"],
        "failed": 2,
    }
    out = dicehall("sheet", "qwixx", write(tmp_path, "x.json", sheet), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"score": 26, "text": QWIXX_26}


def test_sheet_refuses_a_bad_sheet(tmp_path: Path) -> None:
    bad = {"name": "x", "rows": {"red": [99]}, "failed": 0}
    out = dicehall("sheet", "qwinto", write(tmp_path, "bad.json", bad))
    assert out.returncode == 1
    assert "dicehall sheet:" in out.stderr
    missing = dicehall("sheet", "qwinto", str(tmp_path / "missing.json"))
    assert missing.returncode == 2
    unknown = dicehall("sheet", "chess", write(tmp_path, "c.json", {}))
    assert unknown.returncode == 1 and "unknown-game" in unknown.stderr


def test_demo_record_replays_and_verifies(tmp_path: Path) -> None:
    pattern = str(tmp_path / "{game}.json")
    demo = dicehall("demo", "--seats", "2", "--seed", "ab" * 32, "--record", pattern)
    assert demo.returncode == 0, demo.stderr
    records = sorted(tmp_path.glob("*.json"))
    assert {p.stem for p in records} >= {"qwinto", "qwixx"}
    for path in records:
        out = dicehall("replay", str(path), "--json")
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout)
        assert result["game"] == path.stem
        assert result["over"] is True
        assert result["seed_verified"] is True
        assert set(result["scores"]) == {"Ann", "Bob"}
        assert set(result["sheets"]) == {"Ann", "Bob"}
        text = dicehall("replay", str(path))
        assert text.returncode == 0
        assert "dice verified" in text.stdout


def test_replay_takes_a_stored_game(tmp_path: Path) -> None:
    """What `GET /api/games/{id}` answers (the replay page's download): its `seats` are
    results, not names, and the record is under `record`."""
    demo = dicehall("demo", "qwixx", "--seed", "cd" * 32, "--record", str(tmp_path / "r.json"))
    assert demo.returncode == 0, demo.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    seats = [{"seat": i, "name": n, "player": None} for i, n in enumerate(record["seats"])]
    stored = {"id": "abc", "game": "qwixx", "finished_at": 1, "seats": seats, "record": record}
    out = dicehall("replay", write(tmp_path, "stored.json", stored), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["seed_verified"] is True


def test_replay_names_the_bad_entry_and_rule(tmp_path: Path) -> None:
    record = {
        "game": "qwinto",
        "options": {},
        "seats": ["Ann", "Bob"],
        "log": [
            {"seat": 0, "action": {"type": "roll", "dice": ["red", "blue"]}},
            {"chance": {"dice": {"red": 2, "blue": 3}}},
            {"seat": 0, "action": {"type": "enter", "row": "yellow", "box": 0}},
        ],
    }
    out = dicehall("replay", write(tmp_path, "r.json", record))
    assert out.returncode == 1
    assert "log entry 2" in out.stderr
    assert "[" in out.stderr and "]" in out.stderr


def test_hand_written_record_sets_up_a_position(tmp_path: Path) -> None:
    record = {
        "game": "qwinto",
        "options": {},
        "seats": ["Ann", "Bob"],
        "log": [
            {"seat": 0, "action": {"type": "roll", "dice": ["red", "blue"]}},
            {"chance": {"dice": {"red": 2, "blue": 3}}},
            {"seat": 0, "action": {"type": "enter", "row": "red", "box": 0}},
            {"seat": 1, "action": {"type": "enter", "row": "blue", "box": 9}},
        ],
    }
    out = dicehall("replay", write(tmp_path, "r.json", record), "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["over"] is False
    assert result["seed_verified"] is None
    assert "Red          | 5%" in result["sheets"]["Ann"]
    assert result["sheets"]["Bob"].splitlines()[6].endswith(" 5%")


def test_games_lists_every_game() -> None:
    out = dicehall("games", "--json")
    assert out.returncode == 0
    names = [g["name"] for g in json.loads(out.stdout)]
    assert {"qwinto", "qwixx"} <= set(names)
