"""Branch coverage per package against its floor in pyproject.toml ([tool.dicehall.coverage]).

    python .ci/coverage_floors.py           # after `coverage combine`: exit 1 below a floor
    python .ci/coverage_floors.py --raise   # raise each floor to what was measured

A floor only rises: `--raise` never lowers one, and a change that drops a package below
its floor fails `make test`. Percentages count lines and branches together, as coverage.py's
own total does.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
TABLE = "[tool.dicehall.coverage]"


def measured() -> dict[str, float]:
    """Percent covered per top-level package, from the combined data file."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "coverage.json"
        subprocess.run(
            [sys.executable, "-m", "coverage", "json", "-q", "-o", str(out)], cwd=ROOT, check=True
        )
        files = json.loads(out.read_text())["files"]
    done: dict[str, int] = {}
    total: dict[str, int] = {}
    for path, data in files.items():
        parts = Path(path).parts  # (dicehall/server/x.py, or server/x.py where resolved)
        package = parts[1] if parts[0] == "dicehall" and len(parts) > 2 else parts[0]
        s = data["summary"]
        done[package] = done.get(package, 0) + s["covered_lines"] + s["covered_branches"]
        total[package] = total.get(package, 0) + s["num_statements"] + s["num_branches"]
    return {p: 100.0 * done[p] / total[p] for p in sorted(total) if total[p]}


def floors() -> dict[str, float]:
    config = tomllib.loads(PYPROJECT.read_text())
    table: dict[str, float] = config["tool"]["dicehall"]["coverage"]
    return table


def raise_floors(now: dict[str, float], old: dict[str, float]) -> None:
    """Rewrite the table with each floor at max(old, measured rounded down)."""
    text = PYPROJECT.read_text()
    for package, floor in old.items():
        new = max(floor, math.floor(now.get(package, 0.0)))
        text = re.sub(
            rf"^({re.escape(package)} = )\d+(\.\d+)?$", rf"\g<1>{new}", text, count=1, flags=re.M
        )
    PYPROJECT.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raise", dest="raise_", action="store_true")
    args = parser.parse_args(argv)
    now, old = measured(), floors()
    failed = False
    for package, floor in old.items():
        got = now.get(package, 0.0)
        verdict = "ok" if got >= floor else "BELOW THE FLOOR"
        failed |= got < floor
        print(f"{package:10} {got:6.2f} %  (floor {floor:g} %)  {verdict}")
    if args.raise_:
        raise_floors(now, old)
        print(f"floors raised where the measure allows: {TABLE} in pyproject.toml")
        return 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
