"""How fast a pool builds: turns per second and peak memory (design §9: 1,000 turns ≤ 2 s).

Generates lane specs over a real git repository (this one by default) in a temporary folder,
each reading a seeded selection of the repository's files at HEAD, until the pool holds at
least --turns turns; then builds the pool, draws a corpus and writes it, and prints figures.
A benchmark, not a test: it asserts nothing and is never run by the test suite.

    python bench/bench_corpus.py [--repo PATH] [--turns 1000] [--window 65536]
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from vibey_gh.slots.corpus.corpus import build_corpus, write_corpus
from vibey_gh.slots.corpus.pool import Pool, PoolSources, build_pool
from vibey_gh.slots.corpus.turns import seeded_rank

FILES_PER_SPEC = 26
TEXT_SUFFIXES = (".py", ".md", ".toml", ".txt", ".yml", ".yaml", ".json", ".cfg", "Makefile")


def tracked_text_files(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode()
    return sorted(name for name in out.split("\0") if name.endswith(TEXT_SUFFIXES))


def write_specs(folder: Path, repo: Path, files: list[str], turns: int) -> int:
    per_spec = min(FILES_PER_SPEC, len(files))
    count = math.ceil(turns / (per_spec + 1))
    for number in range(count):
        ranked = sorted(files, key=lambda name: seeded_rank(number, "bench", name))
        spec = {
            "id": f"bench-{number:03d}",
            "title": f"Benchmark lane {number}",
            "task": "Read these files and summarize what they do.",
            "repository": str(repo),
            "files": ranked[:per_spec],
        }
        lines = [f"{key} = {json.dumps(value)}" for key, value in spec.items()]
        (folder / f"bench-{number:03d}.toml").write_text("\n".join(lines) + "\n")
    return count


def timed_build(specs: Path, window: int, out: Path) -> tuple[Pool, float, float, float]:
    start = time.perf_counter()
    pool = build_pool(PoolSources(specs=[specs]))
    built = time.perf_counter()
    corpus = build_corpus(pool, window=window)
    drawn = time.perf_counter()
    write_corpus(corpus, out)
    written = time.perf_counter()
    return pool, built - start, drawn - built, written - drawn


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--window", type=int, default=65536)
    args = parser.parse_args()
    files = tracked_text_files(args.repo)
    if not files:
        print(f"no tracked text files in {args.repo}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as temp:
        folder = Path(temp)
        specs = folder / "specs"
        specs.mkdir()
        count = write_specs(specs, args.repo.resolve(), files, args.turns)
        pool, build_s, draw_s, write_s = timed_build(specs, args.window, folder / "c1.json")
        tracemalloc.start()
        timed_build(specs, args.window, folder / "c2.json")
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        size = (folder / "c1.json").stat().st_size
    max_rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"repository      {args.repo} ({len(files)} tracked text files)")
    print(f"pool            {pool.turn_count:,} turns in {len(pool.runs)} runs ({count} specs)")
    print(f"build pool      {build_s:.3f} s  ->  {pool.turn_count / build_s:,.0f} turns/s")
    print(f"draw corpus     {draw_s:.3f} s (window {args.window:,})")
    print(f"write corpus    {write_s:.3f} s ({size / 1e6:.1f} MB)")
    print(f"total           {build_s + draw_s + write_s:.3f} s  (target: 1,000 turns in <= 2 s)")
    rss_mb = max_rss_kib / 1024
    print(f"peak memory     {traced_peak / 1e6:.1f} MB traced (Python), {rss_mb:.0f} MB RSS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
