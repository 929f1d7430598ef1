"""A sweep the noise decided says so, with what would decide it; a point without its interval
never reaches the headline."""

from __future__ import annotations

from msgspec.structs import replace

from tests.slots.judging.test_steady_state import closed_loop
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.judging.baseline import sweep_figures
from vibey_gh.slots.judging.judge import judge_figures, judge_sweep
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.judging.verdicts import (
    MEASURED_GAIN,
    NO_GAIN,
    ONE_SLOT_ONLY,
    TOO_NOISY,
    decidability,
)

BOUNDS = Bounds(min_gain=0.10, confidence=0.9)


def sweep(*steps: list[float], second_one_slot: float = 1.0) -> list[StepRecord]:
    """One-slot runs of 1 s turns (the second of `second_one_slot` s), then N=2, 3, …"""
    one = [
        closed_loop(1, [length] * 60, index=i) for i, length in enumerate((1.0, second_one_slot))
    ]
    return one + [closed_loop(2 + k, lengths, index=2 + k) for k, lengths in enumerate(steps)]


def test_a_busy_machine_is_said_to_be_too_busy_to_decide() -> None:
    # N=2: +11% with a wide interval; N=3: four turns, far too few for an interval
    judged = judge_sweep(sweep([0.6, 3.0, 0.8, 2.8] * 15, [0.5] * 2), BOUNDS)
    assert judged.ideal == 1
    found = decidability(judged, BOUNDS)
    assert found.code == TOO_NOISY and found.undecided == (2, 3)
    assert "The steps were too noisy to decide" in judged.reason
    assert "N=2, N=3 could not be told from one slot at the 10% gain needed" in judged.reason
    assert "raise --min-step-seconds and --max-step-seconds" in judged.reason
    assert "N=3 held too few turns for an interval" in judged.reason
    n3 = judged.verdicts[3]
    assert n3.gain is not None and f"{n3.gain:+.0%}" not in judged.reason, "no bare point"
    assert found.sentence is not None and found.sentence in judged.reason


def test_one_slot_noise_is_named_when_the_one_slot_runs_vary() -> None:
    judged = judge_sweep(sweep([0.6, 3.0, 0.8, 2.8] * 15, second_one_slot=1.3), BOUNDS)
    found = decidability(judged, BOUNDS)
    assert found.code == TOO_NOISY
    assert found.one_slot_noise is not None and found.one_slot_noise > 0.2, "1 s and 1.3 s turns"
    assert f"(one slot alone varied ±{found.one_slot_noise:.0%})" in judged.reason


def test_an_interleaved_step_is_not_said_to_be_undecided_by_the_one_slot_runs() -> None:
    """A step read against its own one-slot blocks owes its doubt to its pairs, not to how far
    the sweep's one-slot runs strayed from each other."""
    steps = sweep([0.6, 3.0, 0.8, 2.8] * 15, second_one_slot=1.3)
    figures = sweep_figures(steps)
    two = figures.steps[2]
    own = replace(two, metrics=replace(two.metrics, gain_over_own_blocks=True))
    interleaved = replace(figures, steps=(*figures.steps[:2], own, *figures.steps[3:]))
    judged = judge_figures(interleaved, BOUNDS)
    found = decidability(judged, BOUNDS)
    assert found.code == TOO_NOISY and found.sentence is not None
    assert "one slot alone varied" not in judged.reason
    assert "its pairs of one-slot and N-slot blocks disagreed" in judged.reason
    assert found.sentence in judged.reason


def test_a_clear_answer_carries_its_code_and_no_noise_sentence() -> None:
    gained = judge_sweep(sweep([1.0] * 60), BOUNDS)
    assert decidability(gained, BOUNDS).code == MEASURED_GAIN
    assert "too noisy" not in gained.reason
    flat = judge_sweep(sweep([2.0] * 60), BOUNDS)  # two slots, each twice as slow: +0%
    assert decidability(flat, BOUNDS).code == NO_GAIN
    assert "too noisy" not in flat.reason
    alone = judge_sweep(sweep(), BOUNDS)
    assert decidability(alone, BOUNDS).code == ONE_SLOT_ONLY
