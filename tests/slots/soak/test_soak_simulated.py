"""`run_soak` on the simulated runner: recorded sealed, resumed after a stop, skipped when
not requested, refused above the evidence without --force."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.corpus import TINY_WINDOW, tiny_corpus
from tests.support.simulated import MAX_TOKENS, simulated_config
from vibey_gh.composition import build_environment
from vibey_gh.config import LocalModels
from vibey_gh.errors import BadInput
from vibey_gh.slots.evidence.soak_file import load_soak, soak_request_path
from vibey_gh.slots.judging.readings.drift import VERDICTS
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest
from vibey_gh.slots.soak import request as soak_request
from vibey_gh.slots.soak.journal import journal_path
from vibey_gh.slots.soak.record import SoakOutcome
from vibey_gh.slots.soak.request import SoakRequest
from vibey_gh.slots.soak.soak import run_soak
from vibey_gh.state import StateLayout

SOAK_S = 2.0  # two windows of 1 s


@pytest.fixture(autouse=True)
def one_second_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A soak's windows last at least 5 s; what is tested here is how a soak is recorded,
    resumed and refused, which two windows of 1 s show as well as two of 5 s."""
    monkeypatch.setattr(soak_request, "MIN_WINDOW_S", 1.0)


class Said:
    def __init__(self, stop_at: str | None = None) -> None:
        self.lines: list[str] = []
        self.stop_at = stop_at

    def message(self, text: str) -> None:
        self.lines.append(text)
        if self.stop_at is not None and text.startswith(self.stop_at):
            raise KeyboardInterrupt


def _soak(
    tmp_path: Path, layout: StateLayout, config: LocalModels, progress: Said, **asked: object
) -> SoakOutcome:
    corpus, _ = tiny_corpus(tmp_path)
    cal = CalibrationRequest(config, corpus, TINY_WINDOW, MAX_TOKENS,
                             if_requested=bool(asked.pop("if_requested", False)))  # fmt: skip
    asked = {"duration_s": SOAK_S, "slots": 2, "force": True, "tick_s": 0.25, **asked}
    request = SoakRequest(cal, **asked)  # type: ignore[arg-type]
    env = build_environment(config, layout)
    return run_soak(request, env, progress, bounds_source=lambda: config)


def test_a_soak_is_recorded_sealed_beside_the_evidence(tmp_path: Path, layout: StateLayout) -> None:
    config = simulated_config(knee=2, tokens_per_second=2000.0)
    outcome = _soak(tmp_path, layout, config, Said())
    assert outcome.complete and outcome.path is not None
    assert outcome.path.parent == layout.evidence / "soak"
    record = load_soak(outcome.path)
    assert record.slots == 2 and record.verdict in VERDICTS
    assert record.measured_s == pytest.approx(SOAK_S, abs=0.5)
    assert len(record.series) == 2  # windows of 1 s
    info = record.data["readings"]
    assert info["units"]["runner.rss_bytes"] == "B"
    assert all(isinstance(why, str) and why for why in info["missing"].values())
    assert not journal_path(layout, outcome.fingerprint, 2, record.data["method"]).exists()
    assert Path(record.data["runs_dir"], "readings.jsonl").is_file()


def test_an_interrupted_soak_resumes_with_what_it_measured(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = simulated_config(knee=2, tokens_per_second=2000.0)
    # stopped after its first window, with three more to go: the stop lands well inside the
    # soak however late a busy machine says so
    with pytest.raises(KeyboardInterrupt):
        _soak(tmp_path, layout, config, Said(stop_at="1s of 4s"), duration_s=4.0)
    progress = Said()
    outcome = _soak(tmp_path, layout, config, progress, duration_s=4.0)
    assert any(line.startswith("resuming: ") for line in progress.lines)
    assert outcome.path is not None
    record = load_soak(outcome.path)
    assert len(record.data["spans"]) == 2
    assert record.measured_s == pytest.approx(4.0, abs=0.5)


def test_a_soak_if_requested_without_a_request_does_nothing(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = simulated_config()
    outcome = _soak(tmp_path, layout, config, Said(), if_requested=True)
    assert outcome.skipped and outcome.path is None
    assert not soak_request_path(layout, outcome.fingerprint).exists()
    assert not (layout.root / "evidence" / "soak").exists()


def test_an_n_without_evidence_needs_force(tmp_path: Path, layout: StateLayout) -> None:
    with pytest.raises(BadInput, match="not supported by evidence.*--force"):
        _soak(tmp_path, layout, simulated_config(), Said(), force=False)
    with pytest.raises(BadInput, match="no N to soak"):
        _soak(tmp_path, layout, simulated_config(), Said(), slots=None)
