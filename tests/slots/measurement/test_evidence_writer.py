"""The calibration's end path: the sweep is judged once, and that one judgement is what the
evidence, the summary, the report and the outcome say."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from tests.support.corpus import TINY_WINDOW, tiny_corpus
from tests.support.evidence import EVIDENCE_FIXTURES
from vibey_gh.config import LocalModels
from vibey_gh.errors import BadInput
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.identity import DeviceFacts, RunnerInfo
from vibey_gh.slots.evidence.fingerprint import Fingerprint
from vibey_gh.slots.evidence.store import evidence_path, load_evidence
from vibey_gh.slots.judging.judge import SweepJudgement, judge_sweep
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest, Environment
from vibey_gh.slots.measurement.evidence_writer import (
    SweepResult,
    check_out_dir,
    write_evidence_files,
)
from vibey_gh.slots.report.summary import render_summary
from vibey_gh.state import StateLayout

FIXTURES = EVIDENCE_FIXTURES
RECORDED = FIXTURES / "slots-a6e718b9b4a7bd46.json"
MARK = "judged once, at the end of the sweep"


class Clock:
    def monotonic(self) -> float:
        return 100.0

    def now(self) -> float:
        return 1_796_009_900.0

    def sleep(self, seconds: float) -> None:
        return


class CountingJudge:
    """Judges as the tool does and marks its judgement, so a re-judged copy would show."""

    def __init__(self) -> None:
        self.calls = 0
        self.given: list[SweepJudgement] = []

    def __call__(self, steps: Sequence[StepRecord], bounds: Bounds) -> SweepJudgement:
        self.calls += 1
        judgement = replace(judge_sweep(steps, bounds), reason=MARK)
        self.given.append(judgement)
        return judgement


def _unused(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the end path does not reach the runner or production")


def test_the_end_path_judges_the_sweep_once(tmp_path: Path) -> None:
    recorded = load_evidence(RECORDED).document
    layout = StateLayout(tmp_path / "state")
    corpus, _ = tiny_corpus(tmp_path)
    out = tmp_path / "out"
    req = CalibrationRequest(
        config=LocalModels(), corpus=corpus, window=TINY_WINDOW, max_tokens=8, out_dir=out
    )
    env = Environment(
        layout=layout,
        clock=Clock(),
        device=DeviceFacts("Test 1", "cpu", 8 << 30, (), "Linux", "6"),
        production_identity=_unused,
        production=_unused,  # type: ignore[arg-type]
        memory=None,
        runner=None,
        log_source=_unused,
        fingerprint_of=_unused,
    )
    fingerprint = Fingerprint(recorded.fingerprint, dict(recorded.fingerprint_fields))
    version = recorded.fingerprint_fields["runner_version"]
    result = SweepResult(
        fingerprint=fingerprint,
        identity=RunnerInfo("embedded", version, "model.gguf", "ab" * 32),
        steps=recorded.steps,
        method={"slots": [1, 2]},
        stop_reason="every requested step was measured",
        complete=True,
        run_dir=tmp_path / "runs",
    )
    judge = CountingJudge()
    outcome = write_evidence_files(req, env, result, judge=judge)

    assert judge.calls == 1
    (judgement,) = judge.given
    assert outcome.recorded and outcome.evidence == evidence_path(layout, fingerprint.id)
    assert (outcome.ideal, outcome.reason) == (judgement.ideal, MARK)
    written = load_evidence(outcome.evidence).document
    assert written.decision is not None and written.decision.reason == MARK
    assert written.verdicts == tuple(v.to_json() for v in judgement.verdicts)
    # the summary and both reports say what the one judgement said, not a judgement of their own
    summary = outcome.evidence.with_suffix(".md").read_text(encoding="utf-8")
    assert f"**Ideal: {judgement.ideal}.** {MARK}." in summary
    assert summary == (out / f"slots-{fingerprint.id}.md").read_text(encoding="utf-8")
    for report in (
        outcome.evidence.with_name(f"{fingerprint.id}-report.md"),
        out / f"slots-{fingerprint.id}-report.md",
    ):
        assert f"**Ideal N = {judgement.ideal}.** {MARK}." in report.read_text(encoding="utf-8")
    # judged afresh, the same evidence reads as it always did (the mark is the only change)
    reloaded = load_evidence(outcome.evidence)
    fresh = render_summary(
        reloaded, req.config.bounds, judge_sweep(reloaded.steps, req.config.bounds)
    )
    assert fresh.replace(judge_sweep(recorded.steps, req.config.bounds).reason, MARK) == summary


@pytest.mark.parametrize("out", ["/proc/x", "/sys/kernel/x", "/dev/shm/evidence", "/proc"])
def test_an_out_folder_in_a_kernel_file_system_is_refused_before_the_first_step(out: str) -> None:
    with pytest.raises(BadInput, match=r"^--out .* is in /(proc|sys|dev), the kernel's"):
        check_out_dir(Path(out))
