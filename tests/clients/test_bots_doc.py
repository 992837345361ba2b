"""The complete example bot of docs/bots.md plays a whole game against a real server."""

from __future__ import annotations

import asyncio
import re
import types

import pytest

from tests.support.servers import ROOT, running_server


def example() -> types.ModuleType:
    text = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
    [code] = re.findall(r"```python\n(.*?)\n```", text, flags=re.DOTALL)
    module = types.ModuleType("docs_bots_example")
    exec(compile(code, "docs/bots.md", "exec"), module.__dict__)
    return module


def test_the_example_bot_plays_a_game_to_its_end(capsys: pytest.CaptureFixture[str]) -> None:
    module = example()
    with running_server() as server:
        asyncio.run(asyncio.wait_for(module.main(server.ws), 120))
    scores = re.fullmatch(r"scores: \[(-?\d+), (-?\d+)\]\n", capsys.readouterr().out)
    assert scores is not None, "main() prints the final scores once the game is over"


def test_the_example_bot_only_marks_within_two_boxes() -> None:
    bot = example().Skipper("qwixx")
    view = {"you": 0, "sheets": [{"rows": {"red": [2, 3], "green": []}}]}
    legal = [
        {"type": "mark", "row": "red", "number": 7},
        {"type": "mark", "row": "red", "number": 5},
        {"type": "mark", "row": "green", "number": 12},
        {"type": "pass"},
    ]
    assert bot.decide(view, legal) == {"type": "mark", "row": "green", "number": 12}
    assert bot.decide(view, [legal[0], legal[3]]) == {"type": "pass"}
