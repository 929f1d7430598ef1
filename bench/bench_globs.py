"""How long a spec's globs take against a deep tree: the regular expression alone against the
bounded matcher (`lanes.globs`), for 2 to 10 `**/` in a row over a tree 40 folders deep.

The tree is a listing (no files are made): at every depth one `x.py` and one `y.txt`, 82 paths.
Each figure is the median of `--runs` timings with the range; the regular expression alone is
run in a child process and given up after `--limit` seconds (it cannot be interrupted).

    python bench/bench_globs.py [--runs 5] [--limit 30]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from vibey_gh.lanes.globs import Glob, MatchBudget
from vibey_gh.lanes.specs import LaneSpec, resolve_files

DEPTH = 40
FOLDERS = [[f"d{level}" for level in range(depth)] for depth in range(DEPTH + 1)]
LISTING = sorted("/".join([*parts, name]) for parts in FOLDERS for name in ("x.py", "y.txt"))
REGEX_ALONE = (
    "import sys, time\n"
    "from vibey_gh.lanes.globs import glob_regex\n"
    "listing = sys.stdin.read().split()\n"
    "regex = glob_regex(sys.argv[1])\n"
    "started = time.perf_counter()\n"
    "[p for p in listing if regex.match(p)]\n"
    "print(time.perf_counter() - started)\n"
)


def regex_alone(pattern: str, limit_s: float) -> float | None:
    try:
        done = subprocess.run(
            [sys.executable, "-c", REGEX_ALONE, pattern],
            input="\n".join(LISTING),
            capture_output=True,
            text=True,
            timeout=limit_s,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return None
    return float(done.stdout)


def bounded(pattern: str) -> tuple[float, int]:
    budget = MatchBudget("bench")
    started = time.perf_counter()
    Glob(pattern).matching(LISTING, budget)
    return time.perf_counter() - started, budget.total - budget.left


def summary(times: list[float]) -> str:
    low, high = min(times) * 1000, max(times) * 1000
    return f"{statistics.median(times) * 1000:.1f} ms ({low:.1f}–{high:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--limit", type=float, default=30.0)
    args = parser.parse_args()
    print(f"{len(LISTING)} paths, {DEPTH} folders deep; median (range) of {args.runs} runs")
    for count in (2, 4, 6, 8, 10):
        pattern = "**/" * count + "x.py"
        measured = [bounded(pattern) for _ in range(args.runs)]
        steps = measured[0][1]
        alone = regex_alone(pattern, args.limit)
        before = f"{alone * 1000:.1f} ms" if alone is not None else f"over {args.limit:g} s"
        print(
            f"{count:>2} × '**/': bounded {summary([t for t, _ in measured])}, {steps:,} steps; "
            f"regular expression alone {before}"
        )
    spec = LaneSpec("deep", "t", "task", Path("/repo"), ("**/" * 10 + "x.py",))
    started = time.perf_counter()
    resolve_files(spec, LISTING)
    print(f"resolve_files, ten '**/': {(time.perf_counter() - started) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
