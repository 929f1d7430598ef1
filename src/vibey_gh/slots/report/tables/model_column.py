"""The step table's "model" column: the gain over one slot the closed-system model, fitted on
the whole sweep (`judging.sweep`), gives each step's N, beside the gain it measured."""

from __future__ import annotations

from collections.abc import Sequence

from ...judging.judge import SweepJudgement, Verdict
from ...judging.statistics.closed_system import Prediction
from ...judging.sweep import sweep_prediction

# the knee rule's default: the table shows the model's gains, which do not depend on it
TABLE_MIN_GAIN = 0.10


def table_prediction(verdicts: Sequence[Verdict]) -> Prediction | None:
    """The model fitted on every step of the sweep, out to its largest N."""
    largest = max((v.slots for v in verdicts), default=1)
    return sweep_prediction(verdicts, TABLE_MIN_GAIN, largest)


def model_gain(prediction: Prediction | None, slots: int) -> float | None:
    """The model's gain over one slot at `slots`, minus 1; None at one slot or without one."""
    if prediction is None or slots <= 1:
        return None
    gain = prediction.gain_at(slots)
    return None if gain is None else gain - 1.0


def model_cell(gain: float | None, identified: bool) -> str:
    """'+100%', or '≤ +200%' while no step has shown the runner saturating (the model then
    gives N lanes that never wait for each other: the most N could gain)."""
    if gain is None:
        return "—"
    return f"{gain:+.0%}" if identified else f"≤ {gain:+.0%}"


def model_json(judgement: SweepJudgement, min_gain: float) -> dict[str, object] | None:
    """The model as `show --json` gives it: its fit (time away over service time, the
    runner's knee, whether a step showed it), the ideal N it predicts, and per N measured its
    gain beside the measured one (both minus 1); None for a sweep that was not paired."""
    verdicts = judgement.verdicts
    largest = max((v.slots for v in verdicts), default=1)
    prediction = sweep_prediction(verdicts, min_gain, largest + 1)
    if prediction is None:
        return None
    beside = []
    for slots in sorted({v.slots for v in verdicts if v.slots > 1}):
        measured = judgement.verdict_for(slots)
        beside.append(
            {
                "slots": slots,
                "model_gain": model_gain(prediction, slots),
                "measured_gain": measured.gain if measured is not None else None,
            }
        )
    return {**prediction.to_json(), "steps": beside}
