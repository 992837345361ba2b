"""docs/clients.md says what the Python client's shortcuts return (issue 33: `rooms()` and
`create()` were undocumented); this keeps the page's types those of the code."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from dicehall.clients.client import Client

DOC = Path(__file__).parents[2] / "docs" / "clients.md"


def test_the_documented_return_types_are_the_clients() -> None:
    text = DOC.read_text(encoding="utf-8")
    for method in ("games", "rooms", "create"):
        row = re.search(rf"^\| `await client\.{method}\(.*$", text, re.MULTILINE)
        assert row is not None, f"docs/clients.md has no row for {method}()"
        returned = typing.get_type_hints(getattr(Client, method))["return"]
        name = getattr(returned, "__name__", None) or repr(returned)
        if typing.get_origin(returned) is list:
            name = f"list[{typing.get_args(returned)[0].__name__}]"
        assert name in row[0], (method, name, row[0])
