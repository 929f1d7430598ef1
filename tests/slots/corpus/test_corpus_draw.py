"""The draw: quarters of the window, segments of consecutive turns, seeded and reported."""

from __future__ import annotations

import pytest
from test_corpus_support import synthetic_run

from vibey_gh.errors import BadInput
from vibey_gh.slots.corpus.draw import draw_segments, stratum_bounds, stratum_name, stratum_of
from vibey_gh.slots.corpus.pool import make_pool

WINDOW = 4000


def test_strata_are_quarters_of_the_window() -> None:
    assert stratum_bounds(65536) == [(0, 16384), (16384, 32768), (32768, 49152), (49152, 65536)]
    names = [stratum_name(q, 65536) for q in range(4)]
    assert names == ["<16k", "16k–32k", "32k–48k", "≥48k"]
    assert [stratum_name(q, 1000) for q in (0, 3)] == ["<250", "≥750"]


@pytest.mark.parametrize(
    ("depth", "stratum"), [(0, 0), (999, 0), (1000, 1), (1999, 1), (2000, 2), (3000, 3), (4000, 3)]
)
def test_stratum_of(depth: int, stratum: int) -> None:
    assert stratum_of(depth, WINDOW) == stratum


def staircase_pool(runs: int = 12, turns: int = 16, step: int = 250):
    """Runs whose turns deepen steadily, each offset a little so the depths differ."""
    return make_pool(
        synthetic_run(f"run-{r:02d}", [100 + r * 7 + i * step for i in range(turns)])
        for r in range(runs)
    )


def test_segments_are_consecutive_and_in_the_stratum_of_their_deepest_turn() -> None:
    drawn = draw_segments(
        staircase_pool(), window=WINDOW, segments_per_stratum=3, segment_turns=3, seed=0
    )
    assert [s.segments for s in drawn.strata] == [3, 3, 3, 3]
    for segment in drawn.segments:
        indices = [turn.index for turn in segment.turns]
        assert indices == list(range(indices[0], indices[0] + 3))
        assert {turn.run_id for turn in segment.turns} == {segment.run_id}
        assert segment.stratum == stratum_of(max(t.depth_estimate for t in segment.turns), WINDOW)
        assert segment.id == f"{segment.run_id}#{indices[0]}-{indices[-1]}"


def test_segments_never_overlap_and_prefer_distinct_runs() -> None:
    drawn = draw_segments(
        staircase_pool(), window=WINDOW, segments_per_stratum=3, segment_turns=3, seed=4
    )
    turn_ids = [turn.id for segment in drawn.segments for turn in segment.turns]
    assert len(turn_ids) == len(set(turn_ids))
    assert len({segment.run_id for segment in drawn.segments}) == 12


def test_order_is_round_robin_shallow_to_deep() -> None:
    drawn = draw_segments(
        staircase_pool(), window=WINDOW, segments_per_stratum=2, segment_turns=2, seed=1
    )
    assert [segment.stratum for segment in drawn.segments] == [0, 1, 2, 3, 0, 1, 2, 3]


def test_same_seed_same_draw_other_seed_other_draw() -> None:
    def ids(seed: int) -> list[str]:
        drawn = draw_segments(
            staircase_pool(), window=WINDOW, segments_per_stratum=3, segment_turns=3, seed=seed
        )
        return [segment.id for segment in drawn.segments]

    assert ids(0) == ids(0)
    assert ids(0) != ids(1)


def test_turns_over_the_window_are_dropped_and_counted() -> None:
    pool = make_pool([synthetic_run("a", [100, 900, 3900, 4100, 4300]), synthetic_run("b", [50])])
    drawn = draw_segments(pool, window=WINDOW, segments_per_stratum=5, segment_turns=2, seed=0)
    assert drawn.dropped_over_window == 2
    assert all(t.depth_estimate <= WINDOW for s in drawn.segments for t in s.turns)
    # a#0-1 would overlap a#1-2, drawn first because deep strata are filled first
    assert [s.id for s in drawn.segments] == ["a#1-2"]
    assert [s.available for s in drawn.strata] == [1, 0, 0, 1]


def test_a_short_stratum_is_reported_not_filled_from_another() -> None:
    shallow_only = make_pool(synthetic_run(f"r{i}", [100, 200, 300, 400]) for i in range(6))
    drawn = draw_segments(
        shallow_only, window=WINDOW, segments_per_stratum=2, segment_turns=2, seed=0
    )
    assert [s.segments for s in drawn.strata] == [2, 0, 0, 0]
    assert [s.shortfall for s in drawn.strata] == [0, 2, 2, 2]
    assert [s.available for s in drawn.strata] == [18, 0, 0, 0]
    assert all(segment.stratum == 0 for segment in drawn.segments)


def test_a_run_whose_turn_zero_does_not_fit_is_left_out_and_named() -> None:
    pool = make_pool([synthetic_run("a", [300]), synthetic_run("deep", [5000, 5100])])
    drawn = draw_segments(pool, window=WINDOW, segments_per_stratum=1, segment_turns=1, seed=0)
    assert [segment.run_id for segment in drawn.segments] == ["a"]
    assert [entry["run"] for entry in drawn.left_out] == ["deep"]
    assert "turn 0 needs ~5,000 tokens" in drawn.left_out[0]["why"]


def test_a_window_smaller_than_every_run_s_turn_zero_is_an_error() -> None:
    pool = make_pool([synthetic_run("deep", [5000, 5100])])
    with pytest.raises(BadInput, match="smaller than turn 0 of run deep"):
        draw_segments(pool, window=WINDOW, segments_per_stratum=1, segment_turns=1, seed=0)


def test_every_drawn_turn_leaves_room_for_its_answer() -> None:
    pool = make_pool([synthetic_run(f"r{i}", [100, 900, 1700, 2500, 3300, 4000]) for i in range(4)])
    drawn = draw_segments(
        pool, window=WINDOW, segments_per_stratum=2, segment_turns=1, seed=0, answer_cap=500
    )
    depths = [turn.depth_estimate for segment in drawn.segments for turn in segment.turns]
    assert depths and max(depths) + 500 <= WINDOW
    # 4,000 fits the window alone but not with its answer: dropped and counted
    assert drawn.dropped_over_window == 4


def test_no_segment_fitting_is_an_error() -> None:
    pool = make_pool([synthetic_run("a", [100, 200])])
    with pytest.raises(BadInput, match="no run has 3 consecutive turns"):
        draw_segments(pool, window=WINDOW, segments_per_stratum=1, segment_turns=3, seed=0)


@pytest.mark.parametrize(
    ("window", "per", "turns", "message"),
    [
        (100, 1, 1, "--window must be at least 256"),
        (WINDOW, 0, 1, "--segments-per-stratum must be at least 1"),
        (WINDOW, 1, 0, "--segment-turns must be at least 1"),
    ],
)
def test_bad_draw_options(window: int, per: int, turns: int, message: str) -> None:
    with pytest.raises(BadInput, match=message):
        draw_segments(
            staircase_pool(), window=window, segments_per_stratum=per, segment_turns=turns, seed=0
        )
