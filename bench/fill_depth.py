"""How deep `slots corpus --fill-window` reaches by the runner's own count.

Builds the demo corpus with --fill-window at --window, once filled by the estimate
(characters ÷ 3) and once by the embedded runner's own count (its chat template, then its
tokenizer), then counts the deepest turn of each with that runner and prints the share of the
window it reaches, with the seconds each build took. The counts are deterministic (the same
inputs and tokenizer give the same corpus); the times are this machine's, once.
A benchmark, not a test: it asserts nothing and is never run by the test suite.

    python bench/fill_depth.py [--window 65536]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from vibey_gh.config import LocalModels
from vibey_gh.runners.registry import runner_kind
from vibey_gh.slots.corpus.corpus import Corpus, build_demo_corpus
from vibey_gh.state import StateLayout


def deepest(corpus: Corpus) -> tuple[int, list[dict[str, Any]], list[dict[str, Any]]]:
    turn = max(corpus.turns(), key=lambda turn: turn.depth_estimate)
    return turn.depth_estimate, turn.messages, turn.tools


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=65536)
    args = parser.parse_args()
    window = args.window
    with tempfile.TemporaryDirectory() as folder:
        state = StateLayout(Path(folder) / "state")
        config = LocalModels()
        with runner_kind(config.runner).prompt_counter(config, state) as counter:
            rows = []
            for how, used in (("estimate (characters ÷ 3)", None), ("the runner's count", counter)):
                started = time.monotonic()
                corpus = build_demo_corpus(window=window, fill_window=True, counter=used)
                seconds = time.monotonic() - started
                depth, messages, tools = deepest(corpus)
                counted = counter.count(messages, tools)
                rows.append((how, depth, counted, seconds))
    print(f"counted by {counter.counted_by}; window {window:,}")
    print(
        "| filled by | deepest, as the corpus says | by the runner's count | of the window "
        "| build |"
    )
    print("| --- | --- | --- | --- | --- |")
    for how, depth, counted, seconds in rows:
        print(f"| {how} | {depth:,} | {counted:,} | {counted / window:.1%} | {seconds:.0f} s |")


if __name__ == "__main__":
    main()
