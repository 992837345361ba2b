"""docs/benchmarks.md stays a results page, not a diary (the dated history is
docs/benchmarks/journal.md): at most 600 lines; every fenced block on it is a command
block whose commands exist in the tree (a bench module with the flags it accepts, a
`dicehall` subcommand with the flags its `--help` lists, a script or make target); every
`bench.NAME` it mentions is a bench; and every section of either file that the tree cites
by name or links to by anchor is still there."""

from __future__ import annotations

import functools
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "benchmarks.md"
JOURNAL = ROOT / "docs" / "benchmarks" / "journal.md"
MAX_LINES = 600

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```$", re.MULTILINE | re.DOTALL)
BENCH_IMPORT = re.compile(r"^from (?:\.|bench\.)(\w+) import", re.MULTILINE)
SEARCHED = ("README.md", "docs", "server", "clients", "bench", "tests", "rules", "protocol")
SUFFIXES = {".py", ".md", ".js", ".mjs", ".ts", ".html", ".yaml", ".yml", ".toml", ".conf"}
# A citation by name: docs/benchmarks.md, "Load" / benchmarks/journal.md ("A compiled build").
CITATION = re.compile(r'benchmarks(/journal)?\.md(?:#[\w-]+)?\)?(?:,\s*|\s+\()"([^"]+)"')
# A link with an anchor: (benchmarks/journal.md#memory), (../benchmarks.md#the-ceiling).
ANCHORED = re.compile(r"benchmarks(/journal)?\.md#([\w-]+)")


def fenced_blocks(text: str) -> list[str]:
    return FENCE.findall(text)


def simple_commands(block: str) -> list[list[str]]:
    """The block's commands as token lists: continued lines joined, comments dropped, split
    at `;`, `&&`, `|`, `&`, parentheses and redirections."""
    commands: list[list[str]] = []
    for line in block.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        current: list[str] = []
        for token in lexer:
            if token and set(token) <= set("();<>|&{}"):
                if current:
                    commands.append(current)
                current = []
            else:
                current.append(token)
        if current:
            commands.append(current)
    return commands


def flags(tokens: list[str]) -> list[str]:
    return [t.split("=", 1)[0] for t in tokens if t.startswith("--")]


def bench_source(name: str, seen: frozenset[str] = frozenset()) -> str:
    """bench/NAME.py with the bench modules it imports (where shared options live)."""
    text = (ROOT / "bench" / f"{name}.py").read_text(encoding="utf-8")
    for other in BENCH_IMPORT.findall(text):
        if other not in seen and (ROOT / "bench" / f"{other}.py").is_file():
            text += bench_source(other, seen | {name, other})
    return text


@functools.cache
def dicehall_help(subcommand: str) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "dicehall.clients.cli", subcommand, "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, f"`dicehall {subcommand}` is not a subcommand: {run.stderr}"
    return run.stdout


def module_file(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__main__.py"):
        if candidate.is_file():
            return candidate
    return None


def problems_of(command: list[str]) -> tuple[int, list[str]]:
    """How many of the tree's commands this names, and what is wrong with them."""
    named, wrong = 0, []
    for i, token in enumerate(command):
        rest = command[i + 1 :]
        if token == "-m" and rest:
            module, args = rest[0], rest[1:]
            named += 1
            if module_file(module) is None:
                wrong.append(f"`python -m {module}`: no such module in the tree")
            elif module.startswith("bench."):
                source = bench_source(module.removeprefix("bench."))
                wrong += [
                    f"`{module}` takes no {flag}"
                    for flag in flags(args)
                    if f'"{flag}"' not in source
                ]
            elif module == "dicehall.clients.cli" and args:
                wrong += dicehall_problems(args)
            break
        if Path(token).name == "dicehall" and rest:
            named += 1
            wrong += dicehall_problems(rest)
            break
        if token == "make" and rest:
            named += 1
            makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
            if not re.search(rf"^{re.escape(rest[0])}:", makefile, re.MULTILINE):
                wrong.append(f"`make {rest[0]}`: no such target")
            break
        if token.endswith(".py") and "/" not in token.lstrip("./"):
            named += 1
            if not (ROOT / token).is_file():
                wrong.append(f"{token}: no such file")
            break
    return named, wrong


def dicehall_problems(args: list[str]) -> list[str]:
    subcommand = args[0]
    text = dicehall_help(subcommand)
    return [
        f"`dicehall {subcommand}` takes no {flag}"
        for flag in flags(args[1:])
        if not re.search(rf"{re.escape(flag)}(?![\w-])", text)
    ]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def headings(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return [m.group(1).replace("`", "") for m in re.finditer(r"^#+ (.+)$", text, re.MULTILINE)]


def cited_files() -> list[Path]:
    found = []
    for name in SEARCHED:
        top = ROOT / name
        paths = [top] if top.is_file() else top.rglob("*")
        for path in paths:
            if path.suffix in SUFFIXES and "node_modules" not in path.parts and path.is_file():
                if path == Path(__file__).resolve():
                    continue  # its own examples above
                found.append(path)
    return found


def test_the_page_is_a_results_page_not_a_diary() -> None:
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, (
        f"docs/benchmarks.md has {len(lines)} lines (at most {MAX_LINES}): the dated detail "
        "goes to docs/benchmarks/journal.md, the page keeps the latest figure of each kind"
    )
    assert JOURNAL.is_file()
    first = JOURNAL.read_text(encoding="utf-8").split("\n\n")[1]
    assert "history of measurements" in first and "benchmarks.md" in first


def test_every_command_block_names_commands_that_exist() -> None:
    blocks = fenced_blocks(PAGE.read_text(encoding="utf-8"))
    assert blocks, "the page shows the commands behind its figures"
    wrong = []
    for block in blocks:
        named = 0
        for command in simple_commands(block):
            count, problems = problems_of(command)
            named += count
            wrong += problems
        if not named:
            wrong.append(f"a fenced block that names no command of the tree:\n{block}")
    assert not wrong, "docs/benchmarks.md:\n" + "\n".join(wrong)


def test_every_bench_the_page_mentions_exists() -> None:
    text = PAGE.read_text(encoding="utf-8")
    names = set(re.findall(r"\bbench[./](\w+)", text)) - {"py"}
    missing = sorted(n for n in names if not (ROOT / "bench" / f"{n}.py").is_file())
    assert not missing, f"docs/benchmarks.md names benches that are gone: {missing}"


def test_the_checker_sees_what_it_must() -> None:
    """The parsing above, on commands that are wrong."""
    assert problems_of(simple_commands("python -m bench.rules_speed --only qwixx")[0]) == (1, [])
    assert problems_of(simple_commands("python -m bench.gone --x")[0])[1]
    assert problems_of(simple_commands("nice -n -5 python -m bench.load_ceiling --nope")[0])[1]
    assert not problems_of(simple_commands("python -m bench.load_ceiling --think 1")[0])[1]
    assert problems_of(simple_commands("dicehall loadtest --rooms 3 --sideways")[0])[1]
    assert simple_commands("run 1000; run 3000 | grep x") == [
        ["run", "1000"],
        ["run", "3000"],
        ["grep", "x"],
    ]


def test_every_cited_section_is_still_there() -> None:
    """A file that cites a section of docs/benchmarks.md or of the journal by name (the
    name's beginning is enough, "..." dropped) or by anchor finds it there."""
    targets = {None: PAGE, "/journal": JOURNAL}
    titles = {key: headings(path) for key, path in targets.items()}
    anchors = {key: {slug(h) for h in found} for key, found in titles.items()}
    wrong = []
    for path in cited_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        if "benchmarks" not in text:
            continue
        flat = re.sub(r"\s+", " ", re.sub(r"\n\s*(#|\*|//)?\s*", " ", text))
        where = path.relative_to(ROOT)
        for journal, title in CITATION.findall(flat):
            name = title.removesuffix("...").removesuffix("…").strip()
            if not any(h.startswith(name) for h in titles[journal or None]):
                wrong.append(f'{where}: "{title}" is no section of {targets[journal or None].name}')
        for journal, anchor in ANCHORED.findall(flat):
            if anchor not in anchors[journal or None]:
                wrong.append(f"{where}: #{anchor} is no heading of {targets[journal or None].name}")
    page = PAGE.read_text(encoding="utf-8")
    wrong += [
        f"docs/benchmarks.md: #{anchor} is no heading of its own"
        for anchor in re.findall(r"\]\(#([\w-]+)\)", page)
        if anchor not in anchors[None]
    ]
    assert not wrong, "\n".join(wrong)
