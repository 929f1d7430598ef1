"""The demo specs filled to the window, by the embedded runner's own count."""

from __future__ import annotations

import pytest

from vibey_gh.config import LocalModels
from vibey_gh.runners.registry import runner_kind
from vibey_gh.slots.corpus.corpus import build_demo_corpus
from vibey_gh.state import StateLayout

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

# Smaller than the 65,536 of docs/performance.md (bench/fill_depth.py) to keep the test short;
# the filled run and the tokenizer are the same.
WINDOW = 16384


def test_the_demo_fills_the_window_by_the_runners_count_where_the_estimate_falls_short(
    layout: StateLayout,
) -> None:
    config = LocalModels()
    with runner_kind(config.runner).prompt_counter(config, layout) as counter:
        counted = build_demo_corpus(window=WINDOW, fill_window=True, counter=counter)
        estimated = build_demo_corpus(window=WINDOW, fill_window=True)
        deepest = max(counted.turns(), key=lambda turn: turn.depth_estimate)
        by_estimate = max(estimated.turns(), key=lambda turn: turn.depth_estimate)
        assert counter.count(deepest.messages, deepest.tools) == deepest.depth_estimate
        estimate_reaches = counter.count(by_estimate.messages, by_estimate.tools)
    assert 0.9 * WINDOW <= deepest.depth_estimate <= WINDOW
    # Source code is more characters a token than the estimate's three: it stops short.
    assert estimate_reaches < 0.9 * WINDOW
    (fill,) = (source for source in counted.sources if source["source"] == "fill")
    assert fill["depth_counted_by"].startswith("embedded tokenizer of ")
