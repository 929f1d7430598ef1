"""A short calibration on a real llama-server, without and then beside a production one
(integration; skipped where tools/install-llama-server.sh could not build llama-server)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from test_calibrate_integration import Recorder
from tiny_corpus import TINY_WINDOW, free_port, tiny_corpus

from vibey_gh.config import LocalModels
from vibey_gh.interfaces.slots_interface import RunnerLaunch
from vibey_gh.runners.llama_server import LlamaServerRunner
from vibey_gh.slots.allowed import decide_allowed
from vibey_gh.slots.calibrate import CalibrationOutcome, CalibrationRequest, run_calibration
from vibey_gh.slots.wiring import build_environment
from vibey_gh.state import StateLayout

LIVE = shutil.which("llama-server")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        LIVE is None, reason="no llama-server on PATH (tools/install-llama-server.sh builds one)"
    ),
]


@pytest.mark.timeout(600)
def test_production_down_then_up_and_a_calibration_beside_it(
    tmp_path: Path, isolated_state: Path
) -> None:
    assert LIVE is not None
    corpus, _ = tiny_corpus(tmp_path)
    production_port = free_port()
    config = LocalModels(
        concurrent_runs="measured",
        runner="llama-server",
        window=TINY_WINDOW,
        production_url=f"http://127.0.0.1:{production_port}",
        calibration_port=free_port(),
        runner_binary=LIVE,
    )
    layout = StateLayout(isolated_state)

    def calibrate(settings: LocalModels) -> CalibrationOutcome:
        request = CalibrationRequest(
            config=settings,
            corpus=corpus,
            window=TINY_WINDOW,
            max_tokens=8,
            slots=(1, 1),
            threads=2,
        )
        return run_calibration(request, build_environment(settings, layout), Recorder())

    # production is not running: calibrate anyway, keyed to the binary's version
    absent = calibrate(config)
    assert absent.recorded and absent.production_absent and absent.evidence is not None
    evidence = json.loads(absent.evidence.read_text())
    assert "no answer from" in evidence["production_absent"]

    production = LlamaServerRunner().start(
        RunnerLaunch(1, TINY_WINDOW, production_port, "default", tmp_path / "prod.log", LIVE)
    )
    try:
        production.wait_ready(180)
        # the same build and model once production runs: the same fingerprint, so it counts
        answer = decide_allowed(config)
        assert answer.fingerprint == absent.fingerprint
        assert answer.evidence == absent.evidence
        assert answer.production_slots == 1
        # production's own settings are part of the fingerprint: another one, measured beside it
        tuned = replace(config, runner_args=("-b", "64"))
        beside = calibrate(tuned)
    finally:
        production.stop()
    assert beside.recorded and beside.production_absent is None
    assert beside.version_mismatch is None
    assert beside.fingerprint != absent.fingerprint
    assert beside.evidence is not None
    tuned_evidence = json.loads(beside.evidence.read_text())
    assert tuned_evidence["fingerprint"]["fields"]["runner_settings"] == {"runner_args": "-b 64"}
    assert (
        tuned_evidence["production_version"] == evidence["fingerprint"]["fields"]["runner_version"]
    )
