"""Tables of docs/protocol.md rendered from the code, so the reference cannot drift.

    python -m dicehall.protocol.reference --write docs/protocol.md   # refresh the tables
    python -m dicehall.protocol.reference --check docs/protocol.md   # exit 1 if they are stale

Each table sits between `<!-- BEGIN name -->` and `<!-- END name -->` lines.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

import msgspec

from .close import MEANINGS, CloseCode
from .errors import catalogue
from .limits import (
    MAX_ACTION_FIELDS,
    MAX_CHAT,
    MAX_CURSOR,
    MAX_FEATURES,
    MAX_KEY,
    MAX_NAME,
    MAX_OPTION_INT,
    MAX_OPTIONS,
    MAX_PLAYER_ID,
    MAX_REQUEST_ID,
    MAX_ROOM_ID,
    MAX_ROOM_NAME,
    MAX_ROOMS_PAGE,
    MAX_SAFE_INT,
    MAX_SEATS,
    MAX_TOKEN,
    MAX_TOKENS,
    MAX_TURN_WINDOW,
    MAX_WORD,
    Limits,
    ReaderLimits,
)


def errors_table() -> str:
    rows = ["| code | name | meaning |", "|---:|---|---|"]
    rows += [f"| {e.code} | `{e.name}` | {e.meaning} |" for e in catalogue()]
    return "\n".join(rows)


def close_codes_table() -> str:
    rows = ["| code | meaning |", "|---:|---|"]
    rows += [f"| {c.value} | {MEANINGS[c]} |" for c in CloseCode]
    return "\n".join(rows)


def _defaults_table(struct: type[msgspec.Struct]) -> str:
    rows = ["| limit | default | meaning |", "|---|---:|---|"]
    for field in msgspec.structs.fields(struct):
        meta = getattr(field.type, "__metadata__", ())
        text = next((m.description for m in meta if isinstance(m, msgspec.Meta)), "") or ""
        rows.append(f"| `{field.encode_name}` | {field.default} | {text} |")
    return "\n".join(rows)


def limits_table() -> str:
    return _defaults_table(Limits)


def reader_limits_table() -> str:
    rows = ["| limit | default |", "|---|---:|"]
    rows += [f"| `{f.name}` | {f.default} |" for f in msgspec.structs.fields(ReaderLimits)]
    return "\n".join(rows)


def bounds_table() -> str:
    bounds = [
        ("request `id`", f"0 .. {MAX_REQUEST_ID}"),
        ("`seq`, times (unix ms), window ids", f"0 .. {MAX_SAFE_INT} (2^53 - 1)"),
        ("seat", f"0 .. {MAX_SEATS - 1}"),
        (
            "display names, `client`",
            f"1 .. {MAX_NAME} characters, none of Unicode's Cc, Cf, Cs, Zl, Zp; a display name"
            " not a house bot's ([Names](#names))",
        ),
        ("room name", f"1 .. {MAX_ROOM_NAME} characters, none of Cc, Cf, Cs, Zl, Zp"),
        ("room id", f"1 .. {MAX_ROOM_ID} characters of `A-Z a-z 0-9 _ -`"),
        (
            "words (game, option, bot kind, feature...)",
            f"1 .. {MAX_WORD} of `A-Z a-z 0-9 _ . : -`",
        ),
        ("seat token", f"1 .. {MAX_TOKEN} printable ASCII characters"),
        ("tokens in `hello`", f"at most {MAX_TOKENS}"),
        ("player key (`hello.key`)", f"1 .. {MAX_KEY} printable ASCII characters"),
        ("player id", f"1 .. {MAX_PLAYER_ID} characters of `A-Z a-z 0-9 _ - :`"),
        ("features in `hello`", f"at most {MAX_FEATURES}"),
        ("options in `create`", f"at most {MAX_OPTIONS}; integers within ±{MAX_OPTION_INT}"),
        (
            "chat text",
            f"1 .. {MAX_CHAT} characters, no control characters, line separators or bidi controls",
        ),
        ("`turn_window`", f"1 .. {MAX_TURN_WINDOW} seconds"),
        ("`limit` in `rooms`", f"1 .. {MAX_ROOMS_PAGE} (absent: {MAX_ROOMS_PAGE})"),
        ("rooms in one `rooms` reply", f"at most {MAX_ROOMS_PAGE}"),
        ("`cursor` in `rooms`", f"1 .. {MAX_CURSOR} printable ASCII characters"),
        (
            "an action",
            f"at most {MAX_ACTION_FIELDS} fields: `type`, a word, and its game's own, whose"
            " bounds its page gives (docs/games/)",
        ),
    ]
    rows = ["| value | bound |", "|---|---|"]
    rows += [f"| {what} | {bound} |" for what, bound in bounds]
    return "\n".join(rows)


TABLES: dict[str, Callable[[], str]] = {
    "errors": errors_table,
    "close-codes": close_codes_table,
    "limits": limits_table,
    "reader-limits": reader_limits_table,
    "bounds": bounds_table,
}


def render(text: str) -> str:
    """`text` with every marked table replaced by its current rendering."""
    for name, table in TABLES.items():
        pattern = re.compile(rf"(<!-- BEGIN {name} -->\n).*?(<!-- END {name} -->)", flags=re.DOTALL)
        found = pattern.search(text)
        if found is None:
            raise ValueError(f"no <!-- BEGIN {name} --> ... <!-- END {name} --> block")
        text = text[: found.end(1)] + table() + "\n" + text[found.start(2) :]
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dicehall.protocol.reference", description=__doc__
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", metavar="FILE", type=Path)
    mode.add_argument("--check", metavar="FILE", type=Path)
    args = parser.parse_args(argv)
    path: Path = args.write or args.check
    text = path.read_text(encoding="utf-8")
    fresh = render(text)
    if args.write is not None:
        path.write_text(fresh, encoding="utf-8")
        return 0
    if fresh != text:
        print(f"{path}: stale tables; run python -m dicehall.protocol.reference --write {path}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
