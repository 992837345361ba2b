"""`dicehall replay --json` as a script reads it: the shape docs/records.md documents, the
documented example byte for byte (sheets aside), and the points of every log entry."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.support.cli import dicehall

ROOT = Path(__file__).resolve().parents[2]
RECORDS_MD = ROOT / "docs" / "records.md"


def json_section() -> str:
    text = RECORDS_MD.read_text(encoding="utf-8")
    start = text.index("### `--json`")
    return text[start : text.index("\n## ", start)]


def documented_keys(section: str, after: str) -> list[str]:
    """The first column of the first table after `after`: the keys in documented order."""
    table = section[section.index(after) :].split("\n\n| key")[1].split("\n\n")[0]
    return re.findall(r"^\| `(\w+)` \|", "| key" + table, flags=re.MULTILINE)


def replay_json(record: Any) -> dict[str, Any]:
    out = dicehall("replay", "-", "--json", stdin=json.dumps(record))
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_the_documented_example_is_what_replay_prints() -> None:
    """docs/records.md's record replays to its documented output; sheets are shortened there
    (each documented one is a prefix of the real one followed by ' ...')."""
    blocks = re.findall(r"```json\n(.*?)```", json_section(), flags=re.DOTALL)
    record, documented = (json.loads(b) for b in blocks[:2])
    out = replay_json(record)
    for name, short in documented.pop("sheets").items():
        assert short.endswith(" ...")
        assert out["sheets"][name].startswith(short.removesuffix(" ..."))
    assert list(out.pop("sheets")) == list(record["seats"])
    assert out == documented


def test_the_output_has_exactly_the_documented_keys(tmp_path: Path) -> None:
    """Every game's output and every log item carry the keys of the two tables, in order."""
    section = json_section()
    top = documented_keys(section, "With `--json` it prints")
    item = documented_keys(section, "Each item of `log`")
    assert top[-1] == "log" and item[0] == "index", "the tables were found"
    pattern = str(tmp_path / "{game}.json")
    demo = dicehall("demo", "--seats", "2", "--seed", "cd" * 32, "--record", pattern)
    assert demo.returncode == 0, demo.stderr
    paths = sorted(tmp_path.glob("*.json"))
    assert len(paths) == 4
    for path in paths:
        record = json.loads(path.read_text(encoding="utf-8"))
        out = dicehall("replay", str(path), "--json")
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout)
        assert list(result) == top
        assert [list(i) for i in result["log"]] == [item] * len(record["log"])
        assert [i["index"] for i in result["log"]] == list(range(len(record["log"])))
        totals = {n: sum(i["delta"][n] for i in result["log"]) for n in record["seats"]}
        assert totals == result["scores"] == result["log"][-1]["scores"]


def test_a_record_that_does_not_replay_prints_no_json() -> None:
    record = {"game": "qwinto", "seats": ["Ann"], "log": [{"chance": {"dice": {"red": 1}}}]}
    out = dicehall("replay", "-", "--json", stdin=json.dumps(record))
    assert out.returncode == 1
    assert out.stdout == ""
    assert "log entry 0: " in out.stderr and "[unexpected-chance]" in out.stderr
