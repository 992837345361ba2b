"""The transcript in docs/protocol.md is what a real server says today.

A fresh recording has other room ids, tokens, dice and deadlines, so it is compared by
shape: the same messages, events and actions in the same order (tests/protocol/test_docs.py
checks the documented one message by message against the engine and the revealed seed).
"""

from __future__ import annotations

import re

from tests.e2e.transcript import record, shape
from tests.support.servers import ROOT, running_server


def test_a_fresh_recording_has_the_documented_shape() -> None:
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    [block] = re.findall(r"```transcript\n(.*?)\n```", text, flags=re.DOTALL)
    with running_server() as server:
        fresh = record(server.ws)
    assert shape(fresh) == shape(block.splitlines()), (
        "the server's messages changed: python -m tests.e2e.transcript --write docs/protocol.md"
    )
