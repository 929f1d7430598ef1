"""A calibration streams its turns and records their timing; a latency bound set in the
config refuses the step that breaks it and the answer names it (simulated runner)."""

from __future__ import annotations

from pathlib import Path

from tests.support.simulated import calibrate, simulated_config
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.judging.bounds import Bounds
from vibey_gh.slots.judging.judge import judge_sweep
from vibey_gh.state import StateLayout


def test_a_sweep_records_streamed_turns_and_a_ttft_bound_refuses_the_slow_step(
    tmp_path: Path, layout: StateLayout
) -> None:
    # knee 1: every extra slot shares one slot's speed, so TTFT grows with N
    config = simulated_config(knee=1, tokens_per_second=300.0)
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
