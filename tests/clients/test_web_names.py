"""The web page never sends a name the server refuses (docs/protocol.md, "Names"): what
clients/web/js/names.js makes of any typed text is a name protocol/names.py takes, and the
two agree on which names are the house bots'. Run in Node, on hypothesis-generated text."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dicehall.protocol.limits import MAX_NAME
from dicehall.protocol.names import display_name_problem, hidden_character, house_bot_name
from tests.support.servers import ROOT

SCRIPT = """
import { cleanName, houseBotName } from './clients/web/js/names.js';
let input = '';
for await (const chunk of process.stdin) input += chunk;
const out = JSON.parse(input).map((text) => {
  const name = cleanName(text, MAX);
  return [name, houseBotName(name), houseBotName(text)];
});
process.stdout.write(JSON.stringify(out));
"""

typed = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60),
    st.builds(
        lambda kind, sep, n, pad: f"{pad}{kind}{sep}bot{sep}{n}{pad}",
        st.from_regex(r"[A-Za-z0-9_.:]{0,8}", fullmatch=True),
        st.sampled_from(["-", " ", "_", "\u3000", " - ", "\u00a0"]),
        st.integers(0, 99),
        st.sampled_from(["", " ", "\u200b", "\u202e"]),
    ),
    st.builds(lambda s: "house:" + s, st.text(max_size=8)),
)


@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node")
    if path is None:
        pytest.fail("node is missing: run `make js` (installs Debian's nodejs and npm)")
    return path


def clean(node: str, texts: list[str]) -> list[tuple[str, bool, bool]]:
    done = subprocess.run(
        [node, "--input-type=module", "-e", SCRIPT.replace("MAX", str(MAX_NAME))],
        cwd=ROOT,
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [tuple(row) for row in json.loads(done.stdout)]


@settings(max_examples=8, deadline=None)
@given(texts=st.lists(typed, min_size=50, max_size=50))
def test_the_page_makes_any_text_a_name_the_server_takes(node: str, texts: list[str]) -> None:
    for text, (name, bot, raw_bot) in zip(texts, clean(node, texts), strict=True):
        assert len(name) <= MAX_NAME and name == name.strip()
        assert hidden_character(name) is None, (text, name)
        assert bot == house_bot_name(name), (text, name)
        if hidden_character(text) is None:
            assert raw_bot == house_bot_name(text), text
        if name and not bot:
            assert display_name_problem(name) is None, (text, name)


def test_the_probes_names_come_out_clean(node: str) -> None:
    probes = ["Ada\u0085", "\u202eAda", "A\u200bda", "strong-bot-1", "Strong Bot 1", "house:strong"]
    cleaned = clean(node, probes)
    assert [name for name, _, _ in cleaned[:3]] == ["Ada", "Ada", "Ada"]
    assert [bot for _, bot, _ in cleaned[3:]] == [True, True, True]
