from __future__ import annotations

from msgspec.structs import replace

from tests.support.slot_builders import answer, make_step, same_answers
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.judging.baseline import baseline_of
from vibey_gh.slots.judging.judge import judge_step, judge_sweep

BOUNDS = Bounds()


def one_slot_pair(duration: float = 100.0) -> list:
    return [
        make_step(0, 1, same_answers(), duration=duration),
        make_step(1, 1, same_answers(), duration=duration),
    ]


def test_one_slot_runs_are_floor_and_baseline_and_agree_fully() -> None:
    judgement = judge_sweep(one_slot_pair(), BOUNDS)
    labels = [v.label for v in judgement.verdicts]
    assert labels == ["floor", "baseline"]
    assert judgement.verdicts[1].agreement is not None
    assert judgement.verdicts[1].agreement.structural == 1.0
    assert judgement.ideal == 1


def test_faster_step_inside_bounds_qualifies_and_becomes_ideal() -> None:
    steps = [*one_slot_pair(), make_step(2, 2, same_answers(), duration=50.0)]
    judgement = judge_sweep(steps, BOUNDS)
    assert judgement.verdicts[2].qualifies
    assert judgement.verdicts[2].gain is not None and abs(judgement.verdicts[2].gain - 1.0) < 1e-9
    assert judgement.ideal == 2


def test_gain_below_min_gain_does_not_qualify() -> None:
    steps = [*one_slot_pair(), make_step(2, 2, same_answers(), duration=95.0)]
    judgement = judge_sweep(steps, BOUNDS)
    assert judgement.verdicts[2].label == "no gain"
    assert judgement.ideal == 1


def test_changed_tool_structure_breaks_fidelity() -> None:
    changed = same_answers()
    for i in (0, 2, 4):
        changed[i] = answer("now plain text")
    steps = [*one_slot_pair(), make_step(2, 2, changed, duration=50.0)]
    verdict = judge_sweep(steps, BOUNDS).verdicts[2]
    assert not verdict.inside_bounds
    assert verdict.label == "breaks fidelity"
    assert verdict.agreement is not None and verdict.agreement.structural == 0.7


def test_exact_change_with_same_structure_keeps_structural_agreement() -> None:
    changed = same_answers()
    changed[1] = answer("different words")
    steps = [*one_slot_pair(), make_step(2, 2, changed, duration=50.0)]
    verdict = judge_sweep(steps, BOUNDS).verdicts[2]
    assert verdict.agreement is not None
    assert verdict.agreement.structural == 1.0
    assert verdict.agreement.exact == 0.9
    assert verdict.qualifies


def test_turn_served_at_one_slot_failing_at_n_breaks_a_bound() -> None:
    failing = same_answers()
    failing[3] = answer(status=400, reason=None, error="refused: over window")
    verdict = judge_sweep(
        [*one_slot_pair(), make_step(2, 2, failing, duration=40.0)], BOUNDS
    ).verdicts[2]
    assert any("served at one slot failed" in b for b in verdict.broken)


def test_memory_above_ceiling_breaks_at_n_but_only_warns_at_one() -> None:
    steps = [
        make_step(0, 1, same_answers(), wired_gb=21.0),
        make_step(1, 1, same_answers(), wired_gb=21.0),
    ]
    steps.append(make_step(2, 2, same_answers(), wired_gb=21.0, duration=50.0))
    judgement = judge_sweep(steps, BOUNDS)
    assert judgement.verdicts[0].inside_bounds and judgement.verdicts[0].warnings
    assert judgement.verdicts[2].label == "breaks memory"
    relaxed = judge_sweep(steps, replace(BOUNDS, wired_ceiling=0.9))
    assert relaxed.verdicts[2].qualifies


def test_swap_limit_is_factor_of_one_slot_rate_with_a_floor() -> None:
    one = [
        make_step(0, 1, same_answers(), swap_mb=100.0),
        make_step(1, 1, same_answers(), swap_mb=100.0),
    ]
    within = judge_sweep(
        [*one, make_step(2, 2, same_answers(), swap_mb=190.0, duration=50)], BOUNDS
    )
    above = judge_sweep([*one, make_step(2, 2, same_answers(), swap_mb=210.0, duration=50)], BOUNDS)
    assert within.verdicts[2].qualifies
    assert above.verdicts[2].label == "breaks swap"
    quiet = [make_step(0, 1, same_answers()), make_step(1, 1, same_answers())]
    floor = judge_sweep(
        [*quiet, make_step(2, 2, same_answers(), swap_mb=60.0, duration=50)], BOUNDS
    )
    assert floor.verdicts[2].qualifies  # under the 64 MB/min floor


def test_forbidden_log_events_break_a_bound() -> None:
    steps = [
        *one_slot_pair(),
        make_step(2, 2, same_answers(), duration=50, log_kinds=["context_shift"]),
    ]
    verdict = judge_sweep(steps, BOUNDS).verdicts[2]
    assert verdict.broken == ("log: 1 × context shift",)


def test_answer_without_done_reason_breaks_a_bound() -> None:
    odd = same_answers()
    odd[1] = answer("x", reason=None, error="no done reason")
    baseline = baseline_of(one_slot_pair())
    verdict = judge_step(make_step(2, 2, odd, duration=50), baseline, BOUNDS)
    assert any("without stop" in b for b in verdict.broken)
