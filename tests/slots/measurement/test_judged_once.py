"""A sweep judges each step once while it runs and the whole sweep once when it ends: the
progress line, the evidence, the summary and the report all read those judgements."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.progress import Recorder
from tests.support.simulated import calibrate, simulated_config
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.judging import judge
from vibey_gh.slots.judging.figures import SweepFigures
from vibey_gh.slots.judging.judge import SweepJudgement
from vibey_gh.state import StateLayout


def test_a_sweep_judges_each_step_once_and_the_calibration_once(
    tmp_path: Path, layout: StateLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged: list[int] = []  # how many steps each judgement covered
    real = judge.judge_figures

    def counting(figures: SweepFigures, bounds: Bounds) -> SweepJudgement:
        judged.append(len(figures.steps))
        return real(figures, bounds)

    monkeypatch.setattr(judge, "judge_figures", counting)
    recorder = Recorder()
    _, outcome = calibrate(tmp_path, layout, simulated_config(), recorder, slots=(1, 1, 2, 3))

    assert outcome.evidence is not None
    steps = len(load_evidence(outcome.evidence).steps)
    assert steps == 4
    # one judgement as each step ends (covering the steps so far), one of the whole sweep after
    assert judged == [1, 2, 3, 4, 4]
    # the progress lines say the verdicts the sweep judged, step by step
    labels = [label for _, _, label in recorder.finished]
    assert labels[:2] == ["floor", "baseline"] and len(labels) == steps
    written = load_evidence(outcome.evidence).document.verdicts
    assert labels[-1] == written[-1]["label"]
