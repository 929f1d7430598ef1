"""The draw of whole runs: one unit per run, in the stratum of its deepest turn that fits."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_corpus_support import synthetic_run

from vibey_gh.errors import BadInput
from vibey_gh.slots.corpus.corpus import build_corpus, load_corpus, write_corpus
from vibey_gh.slots.corpus.draw import draw_runs, stratum_of
from vibey_gh.slots.corpus.pool import make_pool

WINDOW = 4000


def runs_of_every_depth(count: int = 16):
    """Runs that end at every depth: run r has 1 + r turns, 250 tokens apart."""
    return make_pool(
        synthetic_run(f"run-{r:02d}", [100 + r * 3 + i * 250 for i in range(1 + r)])
        for r in range(count)
    )


def test_a_run_is_whole_and_in_the_stratum_of_its_deepest_turn() -> None:
    drawn = draw_runs(runs_of_every_depth(), window=WINDOW, runs_per_stratum=2, seed=0)
    assert [s.segments for s in drawn.strata] == [2, 2, 2, 2]
    pool_turns = {run.run_id: len(run.turns) for run in runs_of_every_depth().runs}
    for unit in drawn.segments:
        indices = [turn.index for turn in unit.turns]
        assert indices == list(range(pool_turns[unit.run_id]))
        assert unit.stratum == stratum_of(max(t.depth_estimate for t in unit.turns), WINDOW)
        assert unit.id == f"{unit.run_id}#0-{indices[-1]}"
    assert len({unit.run_id for unit in drawn.segments}) == len(drawn.segments)
    assert [unit.stratum for unit in drawn.segments] == [0, 1, 2, 3, 0, 1, 2, 3]


def test_a_run_is_cut_before_its_first_turn_over_the_window() -> None:
    pool = make_pool([synthetic_run("long", [100, 3900, 4100, 200]), synthetic_run("b", [50])])
    drawn = draw_runs(pool, window=WINDOW, runs_per_stratum=1, seed=0)
    assert drawn.dropped_over_window == 2
    by_run = {unit.run_id: [t.index for t in unit.turns] for unit in drawn.segments}
    assert by_run == {"long": [0, 1], "b": [0]}
    assert [s.available for s in drawn.strata] == [1, 0, 0, 1]


def test_the_draw_is_seeded_and_short_strata_are_reported() -> None:
    def ids(seed: int) -> list[str]:
        pool = make_pool(synthetic_run(f"r{i}", [100, 200]) for i in range(12))
        return [
            u.id for u in draw_runs(pool, window=WINDOW, runs_per_stratum=3, seed=seed).segments
        ]

    assert ids(3) == ids(3)
    assert ids(3) != ids(4)
    pool = make_pool(synthetic_run(f"r{i}", [100, 200]) for i in range(12))
    drawn = draw_runs(pool, window=WINDOW, runs_per_stratum=3, seed=0)
    assert [s.shortfall for s in drawn.strata] == [0, 3, 3, 3]


def test_a_run_whose_turn_zero_does_not_fit_is_left_out_and_named() -> None:
    pool = make_pool([synthetic_run("a", [300]), synthetic_run("deep", [5000])])
    drawn = draw_runs(pool, window=WINDOW, runs_per_stratum=1, seed=0)
    assert [unit.run_id for unit in drawn.segments] == ["a"]
    assert [entry["run"] for entry in drawn.left_out] == ["deep"]
    with pytest.raises(BadInput, match="smaller than turn 0 of run deep"):
        draw_runs(
            make_pool([synthetic_run("deep", [5000])]), window=WINDOW, runs_per_stratum=1, seed=0
        )


def test_a_run_keeps_its_turns_up_to_the_first_without_room_for_its_answer() -> None:
    pool = make_pool([synthetic_run("r", [100, 1000, 3500, 3900])])
    drawn = draw_runs(pool, window=WINDOW, runs_per_stratum=1, seed=0, answer_cap=300)
    assert [t.depth_estimate for t in drawn.segments[0].turns] == [100, 1000, 3500]
    assert drawn.dropped_over_window == 1


def test_a_corpus_of_runs_says_its_shape_and_reads_back(tmp_path: Path) -> None:
    corpus = build_corpus(
        runs_of_every_depth(), window=WINDOW, segments_per_stratum=2, shape="runs"
    )
    assert corpus.whole_runs and corpus.segment_turns == 0
    assert corpus.body_json()["shape"] == "runs"
    path = tmp_path / "runs.json"
    write_corpus(corpus, path)
    assert load_corpus(path) == corpus
    segments = build_corpus(runs_of_every_depth(), window=WINDOW, segments_per_stratum=2)
    assert "shape" not in segments.body_json() and segments.shape == "segments"


def test_an_unknown_shape_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="--shape must be runs or segments"):
        build_corpus(runs_of_every_depth(), window=WINDOW, shape="laps")
