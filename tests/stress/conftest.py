"""Fixtures of the stress tests.

`one_slot_baseline` measures the first one-slot step of a micro sweep once per session, on the
real embedded runner, and keeps its checkpoint. A fault test copies that checkpoint into its
own state dir and resumes: only the step under fault is measured, which keeps the suite short
and also exercises resuming.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from stress_support import (
    BASELINE_SLOTS,
    MICRO_MAX_TOKENS,
    MICRO_WINDOW,
    OneSlotBaseline,
    micro_config,
    micro_corpus,
)

from tests.support.progress import Recorder
from vibey_gh.composition import build_environment
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest
from vibey_gh.state import StateLayout


@pytest.fixture(scope="session")
def one_slot_baseline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OneSlotBaseline]:
    folder = tmp_path_factory.mktemp("baseline")
    layout = StateLayout(folder / "state")
    corpus, corpus_path = micro_corpus(folder)
    config = micro_config()
    request = CalibrationRequest(
        config=config,
        corpus=corpus,
        window=MICRO_WINDOW,
        max_tokens=MICRO_MAX_TOKENS,
        slots=BASELINE_SLOTS,
        max_runs=1,
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VIBEY_GH_SLOTS_DIR", str(layout.root))
        outcome = run_calibration(
            request, build_environment(config, layout), Recorder(), bounds_source=lambda: config
        )
    assert not outcome.complete and outcome.new_steps == 1 and outcome.evidence is not None
    (checkpoint,) = layout.progress.glob("*.json")
    yield OneSlotBaseline(
        corpus,
        corpus_path,
        checkpoint.name,
        checkpoint.read_bytes(),
        outcome.evidence.name,
        outcome.evidence.read_bytes(),
    )
