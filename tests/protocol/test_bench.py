"""bench/protocol_speed.py runs and measures every candidate (speed itself is not asserted:
docs/benchmarks.md holds the figures, and the script exits 1 when a target is missed)."""

from __future__ import annotations

from bench import protocol_speed as bench


def test_the_hand_validator_is_a_fair_competitor() -> None:
    """It accepts the typical action and refuses what the schema refuses."""
    assert bench.validate_act(bench.ACT) is bench.ACT
    for bad in (
        {**bench.ACT, "id": -1},
        {**bench.ACT, "room": ""},
        {**bench.ACT, "extra": 1},
        {**bench.ACT, "action": {"type": "enter", "box": 10}},
        {**bench.ACT, "action": {"type": "enter", "box": True}},
        {**bench.ACT, "action": {"type": "place", "tiles": [{"color": "red"}]}},
    ):
        try:
            bench.validate_act(bad)
        except ValueError:
            continue
        raise AssertionError(f"accepted {bad}")


def test_every_task_is_measured_for_both_encodings() -> None:
    results = bench.run(batches=3, calls=8)
    assert set(results) == {"decode+validate act", "encode roll event", "per-frame server path"}
    for entries in results.values():
        assert {enc for _, enc, _ in entries} == {"msgpack", "json"}
        assert all(us > 0 for _, _, us in entries)
    table = bench.table(results)
    assert table.count("(chosen)") == 4
