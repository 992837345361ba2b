"""JSON Schemas of every v1 message, generated from the message types.

    python -m dicehall.protocol.schema --write docs/protocol   # regenerate the committed files
    python -m dicehall.protocol.schema --check docs/protocol   # exit 1 if they are out of date

Layout under the target directory: `v1/client.json` and `v1/server.json` (the unions,
discriminated by `type`), one file per message in `v1/client/` and `v1/server/`, and one
per reply result in `v1/results/` (named after the request type). Every file stands
alone: the definitions it uses are in its own `$defs`. MessagePack frames carry the same
maps as JSON ones, so the schemas describe both encodings.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from .messages import type_name
from .messages.client import CLIENT_MESSAGES, ClientMessage
from .messages.results import RESULTS
from .messages.server import SERVER_MESSAGES, ServerMessageType
from .subprotocols import PREFIX

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _clean(node: Any) -> Any:
    """Docstrings become descriptions; dedent them so output is the same on every Python."""
    if isinstance(node, dict):
        return {
            k: inspect.cleandoc(v) if k == "description" and isinstance(v, str) else _clean(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_clean(v) for v in node]
    return node


def _document(typ: Any, title: str) -> str:
    schema = {"$schema": DRAFT, "title": title, **_clean(msgspec.json.schema(typ))}
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def files() -> dict[str, str]:
    """Relative path -> file content, for every schema file."""
    out = {
        "v1/client.json": _document(ClientMessage, f"{PREFIX}: any client message"),
        "v1/server.json": _document(ServerMessageType, f"{PREFIX}: any server message"),
    }
    for c in CLIENT_MESSAGES:
        out[f"v1/client/{type_name(c)}.json"] = _document(c, f"{PREFIX} client message")
    for s in SERVER_MESSAGES:
        out[f"v1/server/{type_name(s)}.json"] = _document(s, f"{PREFIX} server message")
    for request, result in RESULTS.items():
        name = type_name(request)
        out[f"v1/results/{name}.json"] = _document(result, f"{PREFIX} result of {name}")
    return out


def differences(directory: Path) -> list[str]:
    """What is missing, stale or extra under `directory` (empty when up to date)."""
    wanted = files()
    found = {p.relative_to(directory).as_posix() for p in directory.rglob("*.json") if p.is_file()}
    problems = [f"extra: {p}" for p in sorted(found - wanted.keys())]
    for path, text in sorted(wanted.items()):
        target = directory / path
        if path not in found:
            problems.append(f"missing: {path}")
        elif target.read_text(encoding="utf-8") != text:
            problems.append(f"stale: {path}")
    return problems


def write(directory: Path) -> None:
    for old in [p for p in directory.rglob("*.json") if p.is_file()]:
        old.unlink()
    for name, text in files().items():
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dicehall.protocol.schema", description=__doc__)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", metavar="DIR", type=Path)
    mode.add_argument("--check", metavar="DIR", type=Path)
    args = parser.parse_args(argv)
    if args.write is not None:
        write(args.write)
        return 0
    problems = differences(args.check)
    for line in problems:
        print(line, file=sys.stderr)
    if problems:
        print(
            "regenerate with: python -m dicehall.protocol.schema --write docs/protocol",
            file=sys.stderr,
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
