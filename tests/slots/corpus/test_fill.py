"""Filling the window: the deepest spec run reads on until its last turn nearly fills it."""

from __future__ import annotations

from pathlib import Path

from test_corpus_support import write_spec

from tests.support.repos import make_repo
from tests.support.simulated import simulated_config
from vibey_gh.runners.registry import runner_kind
from vibey_gh.slots.corpus.corpus import build_corpus
from vibey_gh.slots.corpus.fill import BY_ESTIMATE, FILL_TARGET, FILLED_SUFFIX
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.slots.corpus.summary import corpus_summary
from vibey_gh.slots.corpus.turns import depth_estimate
from vibey_gh.state import StateLayout

FILES = {f"pkg/mod{n:02d}.py": f"VALUE_{n} = {n}\n" * (20 + 7 * n) for n in range(40)}


def test_the_deepest_spec_run_reads_on_to_nearly_the_window(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_repo(repo, FILES)
    spec = write_spec(tmp_path / "specs", "short", ["pkg/mod00.py"], repo)
    window = 8192
    plain = build_pool(PoolSources(specs=[spec]))
    filled = build_pool(PoolSources(specs=[spec], fill_window=True), window=window)
    (plain_run,) = plain.runs
    (run,) = filled.runs
    assert run.run_id == "short" + FILLED_SUFFIX
    assert plain_run.turns[-1].depth_estimate < 0.2 * window
    assert FILL_TARGET * window <= run.turns[-1].depth_estimate <= window
    # The spec's own turns come first, unchanged; the reads go on in path order.
    assert run.turns[1].messages == plain_run.turns[1].messages
    (fill,) = filled.sources
    assert fill["source"] == "fill" and fill["files_added"] == len(run.turns) - 2
    corpus = build_corpus(filled, window=window, segments_per_stratum=1, segment_turns=2)
    summary = corpus_summary(corpus)
    assert summary["strata_detail"][-1]["deepest_estimate"] == run.turns[-1].depth_estimate
    assert summary["deepest_stratum"].startswith("reaches 9")


def test_without_filling_the_summary_says_the_deepest_stratum_cannot_be_filled(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    make_repo(repo, FILES)
    spec = write_spec(tmp_path / "specs", "short", ["pkg/mod00.py", "pkg/mod01.py"], repo)
    corpus = build_corpus(build_pool(PoolSources(specs=[spec])), window=8192, segment_turns=1)
    note = corpus_summary(corpus)["deepest_stratum"]
    assert note.startswith("cannot be filled") and "--fill-window" in note


def test_with_the_runners_count_the_run_fills_the_window_by_that_count(
    tmp_path: Path, layout: StateLayout
) -> None:
    repo = tmp_path / "repo"
    make_repo(repo, FILES)
    spec = write_spec(tmp_path / "specs", "short", ["pkg/mod00.py"], repo)
    window = 8192
    config = simulated_config()
    with runner_kind(config.runner).prompt_counter(config, layout) as counter:
        filled = build_pool(
            PoolSources(specs=[spec], fill_window=True), window=window, counter=counter
        )
        again = build_pool(
            PoolSources(specs=[spec], fill_window=True), window=window, counter=counter
        )
        (run,) = filled.runs
        last = run.turns[-1]
        # Each turn's depth is the runner's own count of it.
        assert [turn.depth_estimate for turn in run.turns] == [
            counter.count(turn.messages, turn.tools) for turn in run.turns
        ]
    # The window, to the files' grain (the next file would pass it).
    assert 0.95 * window <= last.depth_estimate <= window
    # The simulated tokenizer reads four characters a token: by the estimate it is deeper.
    assert depth_estimate(last.messages, last.tools) > window
    assert again.sha256 == filled.sha256
    (fill,) = filled.sources
    assert fill["depth_counted_by"].startswith("simulated tokenizer of ")
    assert fill["deepest_counted"] == last.depth_estimate
    assert fill["deepest_estimate"] == depth_estimate(last.messages, last.tools)
    corpus = build_corpus(filled, window=window, segments_per_stratum=1, segment_turns=2)
    assert corpus.pool.dropped_over_window == 0
    assert corpus.max_depth_estimate == last.depth_estimate


def test_without_a_counter_the_fill_says_it_went_by_the_estimate(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_repo(repo, FILES)
    spec = write_spec(tmp_path / "specs", "short", ["pkg/mod00.py"], repo)
    (fill,) = build_pool(PoolSources(specs=[spec], fill_window=True), window=4096).sources
    assert fill["depth_counted_by"] == BY_ESTIMATE and "deepest_counted" not in fill
