"""A real embedded runner's start-up facts end up in the evidence (integration)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.corpus import TINY_WINDOW, tiny_corpus
from tests.support.ports import free_port
from tests.support.progress import Quiet
from vibey_gh.composition import build_environment
from vibey_gh.config import LocalModels
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest
from vibey_gh.state import StateLayout

pytestmark = pytest.mark.integration


def test_a_two_slot_step_records_what_the_runner_said_at_start_up(
    tmp_path: Path, layout: StateLayout
) -> None:
    corpus, _ = tiny_corpus(tmp_path)
    config = LocalModels(
        concurrent_runs="measured",
        runner="embedded",
        window=TINY_WINDOW,
        calibration_port=free_port(),
        production_url=f"http://127.0.0.1:{free_port()}",
        min_step_seconds=0.1,  # one pass over the tiny corpus: the start-up is what is read
    )
    request = CalibrationRequest(
        config=config, corpus=corpus, window=TINY_WINDOW, max_tokens=8, slots=(2,)
    )
    outcome = run_calibration(request, build_environment(config, layout), Quiet())
    assert outcome.evidence is not None
    evidence = load_evidence(outcome.evidence)
    (step,) = evidence.steps
    reported = step.runner_reported
    assert reported is not None
    assert (reported.slots, reported.window) == (2, TINY_WINDOW)
    assert reported.kv_cache_bytes is not None and reported.kv_cache_bytes > 0
    assert evidence.data["steps"][0]["runner_reported"]["slots"] == 2
    start_up = [e for e in step.log_events if not e.during_replay]
    assert {"slots", "slot_window", "kv_cache"} <= {e.kind for e in start_up}
    assert "runner setup" not in evidence.data["verdicts"][0]["label"]
