"""A real embedded runner's start-up facts end up in the evidence (integration)."""

from __future__ import annotations

import pytest

from tests.support.corpus import TINY_WINDOW
from tests.support.shared_calibration import SharedCalibration
from vibey_gh.slots.evidence.store import load_evidence

pytestmark = pytest.mark.integration


def test_a_two_slot_step_records_what_the_runner_said_at_start_up(
    embedded_calibration: SharedCalibration,
) -> None:
    # the shared sweep N = 1, 1, 2: its third step is the two-slot one
    outcome = embedded_calibration.outcome
    assert outcome.evidence is not None
    evidence = load_evidence(outcome.evidence)
    step = evidence.steps[2]
    assert step.slots == 2
    reported = step.runner_reported
    assert reported is not None
    assert (reported.slots, reported.window) == (2, TINY_WINDOW)
    assert reported.kv_cache_bytes is not None and reported.kv_cache_bytes > 0
    assert evidence.data["steps"][2]["runner_reported"]["slots"] == 2
    start_up = [e for e in step.log_events if not e.during_replay]
    assert {"slots", "slot_window", "kv_cache"} <= {e.kind for e in start_up}
    assert "runner setup" not in evidence.data["verdicts"][2]["label"]
