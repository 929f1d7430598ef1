"""A calibration streams its turns and records their timing; a latency bound set in the
config refuses the step that breaks it and the answer names it (simulated runner)."""

from __future__ import annotations

from pathlib import Path

from msgspec.structs import replace

from tests.support.simulated import calibrate, simulated_config
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.judging.judge import judge_sweep
from vibey_gh.slots.judging.latencies.latency_bounds import INCONCLUSIVE_AT_CAP
from vibey_gh.slots.measurement.stepping.step import ENDED_CAP, ENDED_LATENCY_CAP
from vibey_gh.state import StateLayout

CAP_S = 1.5  # max_step_seconds of the straddling step: several times its minimum


def test_a_sweep_records_streamed_turns_and_a_ttft_bound_refuses_the_slow_step(
    tmp_path: Path, layout: StateLayout
) -> None:
    # knee 1: every extra slot shares one slot's speed, so TTFT grows with N; steps of one
    # pass over the corpus: the first token's time is read from every turn
    config = simulated_config(
        knee=1, tokens_per_second=300.0, min_step_seconds=0.1, max_step_seconds=0.5
    )
    _, outcome = calibrate(tmp_path, layout, config, slots=(1, 1, 2))
    assert outcome.evidence is not None
    steps = load_evidence(outcome.evidence).steps
    turns = [t.result for step in steps for t in step.turns if t.result.served]
    assert turns and all(t.streamed and t.first_token is not None for t in turns)
    assert all(t.started < (t.first_token or 0) <= (t.last_token or 0) <= t.ended for t in turns)
    free = judge_sweep(steps, config.bounds)
    two = free.verdict_for(2)
    assert two is not None and two.latency is not None and two.latency.ttft is not None
    one = free.verdict_for(1)
    assert one is not None and one.latency is not None and one.latency.ttft_p50_s is not None
    assert two.latency.ttft_p50_s is not None and two.latency.ttft_p50_s > one.latency.ttft_p50_s
    # a bound just under what one slot already needs for its first token: two slots break it
    limit = one.latency.ttft_p50_s
    bounded = judge_sweep(steps, Bounds(min_gain=0.10, ttft_p95_seconds=limit))
    verdict = bounded.verdict_for(2)
    assert verdict is not None and not verdict.qualifies
    assert verdict.label == "breaks ttft_p95_seconds"
    assert bounded.ideal == 1 and "ttft_p95_seconds" in bounded.reason


def test_a_step_whose_latency_straddles_its_bound_measures_longer_and_says_so_at_the_cap(
    tmp_path: Path, layout: StateLayout
) -> None:
    # a free sweep first, to learn where N=2's p95 TTFT lies (knee 4: its gain is clear)
    config = simulated_config(
        knee=4, tokens_per_second=300.0, noise=0.3, min_step_seconds=0.2, max_step_seconds=CAP_S
    )
    for folder in ("free", "bounded"):
        (tmp_path / folder).mkdir()
    _, free = calibrate(tmp_path / "free", layout, config, slots=(1, 1, 2))
    assert free.evidence is not None
    learned = judge_sweep(load_evidence(free.evidence).steps, config.bounds).verdict_for(2)
    assert learned is not None and learned.latency is not None and learned.latency.ttft
    # the limit at that p95: its interval reaches both sides of it unless measuring decides
    limit = learned.latency.ttft.value()
    assert limit is not None
    bounded = replace(config, bounds=replace(config.bounds, ttft_p95_seconds=limit))
    own_state = StateLayout(tmp_path / "bounded" / "state")
    _, outcome = calibrate(tmp_path / "bounded", own_state, bounded, slots=(1, 1, 2))
    assert outcome.evidence is not None
    steps = load_evidence(outcome.evidence).steps
    two = steps[2]
    assert two.measurement is not None
    verdict = judge_sweep(steps, bounded.bounds).verdict_for(2)
    assert verdict is not None
    # a straddling p95 is never left as a mere warning: measuring longer decided it, or the
    # cap was reached and the step does not qualify on that bound, saying why
    assert not any(w.startswith("ttft_p95_seconds") for w in verdict.warnings), verdict.warnings
    if any(INCONCLUSIVE_AT_CAP in b for b in verdict.broken):
        assert two.measurement["reached_cap"] is True
        assert two.measurement["why_ended"] in (ENDED_LATENCY_CAP, ENDED_CAP)
        assert two.measurement["end"] - two.measurement["start"] >= CAP_S - 0.5
        assert not verdict.qualifies
        assert "ttft_p95_seconds" in outcome.reason
