"""TPOT and ITL named as vLLM names them: a turn's mean time per output token, and every gap
between tokens as its own sample; the bounds say which they judge, and old figures keep
their meaning (their "itl" was TPOT)."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from tests.support.latency import streamed
from tests.support.slot_builders import answer
from vibey_gh.errors import MalformedJson
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.schema import as_json, checked, checked_at
from vibey_gh.interfaces.token_gaps import bucket_of
from vibey_gh.interfaces.turns import TurnResult
from vibey_gh.slots.judging.latencies.gap_sample import GapSample
from vibey_gh.slots.judging.latencies.latency import latency_figures
from vibey_gh.slots.judging.latencies.latency_bounds import latency_findings
from vibey_gh.slots.judging.latencies.latency_figures import OLD_ITL_WAS_TPOT, LatencyFigures


def stalled(i: int) -> TurnResult:
    """100 tokens 10 ms apart, but for three gaps of 0.1 s each: stalls while another slot's
    prompt was read (the turn number `i` sets when it started)."""
    turn = streamed(answer("x", started=float(i), ended=i + 2.0, output_tokens=100), 0.1, 0.01)
    gaps = ((bucket_of(0.01), 96), (bucket_of(0.1), 3))
    return replace(turn, token_gaps=gaps, last_token=(turn.first_token or 0.0) + 0.96 + 0.3)


def test_every_gap_is_a_sample_so_a_stall_shows_where_the_turns_mean_hides_it() -> None:
    figures = latency_figures([stalled(i) for i in range(200)], None)
    assert figures.tpot_s is not None and figures.itl_s is not None
    assert figures.tpot_s.p99_s < 0.013, "three stalls spread over 99 gaps add 3 ms"
    assert figures.itl_s.p50_s == pytest.approx(0.01, rel=0.03)
    assert figures.itl_s.p99_s == pytest.approx(0.1, rel=0.03), "3% of the gaps are stalls"
    assert figures.itl is not None and figures.itl.count == 200 * 99
    assert figures.itl_s.mean_s == pytest.approx(1.26 / 99, rel=1e-6)
    # the bounds say which they judge
    assert latency_findings(figures, None, Bounds(tpot_p95_seconds=0.015)) == []
    assert latency_findings(figures, None, Bounds(itl_p95_seconds=0.012)) == []
    broken = latency_findings(figures, None, Bounds(itl_p95_seconds=0.005))
    assert broken and broken[0].startswith("itl_p95_seconds: p95 ITL")
    broken = latency_findings(figures, None, Bounds(tpot_p95_seconds=0.005))
    assert broken and broken[0].startswith("tpot_p95_seconds: p95 TPOT")


def test_the_figures_show_mean_p50_p90_p95_p99_of_ttft_tpot_and_itl() -> None:
    shown = as_json(latency_figures([stalled(i) for i in range(60)], None))
    for key in ("ttft_s", "tpot_s", "itl_s"):
        summary = shown[key]
        assert isinstance(summary, dict)
        assert set(summary) == {"mean_s", "p50_s", "p90_s", "p95_s", "p99_s"}
        assert summary["p50_s"] <= summary["p90_s"] <= summary["p95_s"] <= summary["p99_s"]
    again = checked(shown, LatencyFigures)
    assert again == latency_figures([stalled(i) for i in range(60)], None)


def test_turns_recorded_before_gaps_were_kept_have_tpot_and_an_itl_bound_refuses_them() -> None:
    old = [replace(stalled(i), token_gaps=()) for i in range(60)]
    figures = latency_figures(old, None)
    assert figures.tpot is not None and figures.itl is None
    assert figures.itl_missing == OLD_ITL_WAS_TPOT
    broken = latency_findings(figures, None, Bounds(itl_p95_seconds=10.0))
    assert broken == [f"itl_p95_seconds: ITL not measured ({OLD_ITL_WAS_TPOT})"]
    assert latency_findings(figures, None, Bounds(tpot_p95_seconds=10.0)) == []


def test_figures_stored_before_tpot_read_their_itl_as_tpot_and_say_so() -> None:
    made = latency_figures([stalled(i) for i in range(60)], None)
    stored = as_json(made)
    old = {k: v for k, v in stored.items() if not k.startswith(("tpot", "itl"))}
    old |= {"itl_p50_s": stored["tpot_p50_s"], "itl_p95_s": stored["tpot_p95_s"]}
    old["itl"] = stored["tpot"]
    before = checked(old, LatencyFigures)
    assert before.tpot == made.tpot and before.tpot_p50_s == made.tpot_p50_s
    assert before.itl is None and before.itl_missing == OLD_ITL_WAS_TPOT


@pytest.mark.parametrize(
    "stored,problem",
    [
        ({"gaps": [[1, 2]], "count": 3, "total_s": 0.1}, "expected the count"),
        ({"gaps": [[1, 2]], "count": 2, "total_s": -1.0}, "expected a number >= 0.0"),
        ({"gaps": [[2, 1], [1, 1]], "count": 2, "total_s": 0.1}, "ascending"),
    ],
)
def test_damaged_stored_gaps_are_refused_naming_the_field(
    stored: dict[str, object], problem: str
) -> None:
    with pytest.raises(MalformedJson, match=problem):
        checked_at({"itl_gaps": stored}, "itl_gaps", GapSample)


def test_a_large_step_reads_its_ranks_without_a_pass_over_every_gap() -> None:
    many = GapSample(((bucket_of(0.01), 90_000), (bucket_of(0.02), 10_000)), 100_000, 1100.0)
    low, high = many.interval(0.9)
    assert low is not None and high is not None and low <= (many.value() or 0) <= high


def test_one_turns_stalls_count_once_per_draw_of_that_turn_not_as_independent_gaps() -> None:
    """16 turns sent 10 times each; one of them stalls in 60 of its 99 gaps (a long prompt read
    beside it every time it comes round). Pooled, the stalls are under 5% of the gaps, so the
    p95 is a plain gap, and the gaps' ranks alone bound it there; but a replay that happened to
    send that turn twice as often would have a p95 ten times as long, which the interval
    resampled by turn shows, so a bound between the two is undecided, not met."""
    results, ids = [], []
    for i in range(160):
        turn = streamed(answer("x", started=float(i), ended=i + 2.0, output_tokens=100), 0.1, 0.01)
        if i % 16 == 0:
            turn = replace(turn, token_gaps=((bucket_of(0.01), 39), (bucket_of(0.1), 60)))
        results.append(turn)
        ids.append(f"t{i % 16}")
    figures = latency_figures(results, None, turn_ids=ids)
    assert figures.itl is not None and figures.itl_by_turn is not None
    assert figures.itl_by_turn.point == figures.itl.value()
    assert figures.itl_by_turn.count == figures.itl.count == 160 * 99
    naive_high = figures.itl.interval(0.95)[1]
    low, high = figures.itl_by_turn.interval(0.95)
    assert naive_high is not None and naive_high < 0.011
    assert low is not None and high is not None and high > 0.09
    findings = latency_findings(figures, None, Bounds(itl_p95_seconds=0.05))
    assert findings and "may be above" in findings[0]
    stored = checked(as_json(figures), LatencyFigures)
    assert stored.itl_by_turn == figures.itl_by_turn
    older = {k: v for k, v in as_json(figures).items() if k != "itl_by_turn"}
    assert checked(older, LatencyFigures).itl_by_turn is None, "old figures: the ranks alone"
