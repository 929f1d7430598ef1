"""Real sweeps on the embedded llama.cpp runner with a tiny corpus (integration)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from tests.support.corpus import TINY_WINDOW
from tests.support.ports import free_port
from tests.support.progress import Recorder
from tests.support.shared_calibration import SharedCalibration
from tests.support.simulated import calibrate, simulated_config
from vibey_gh.composition import build_environment
from vibey_gh.config import LocalModels
from vibey_gh.interfaces.slots_interface import ProductionState, RunnerLaunch
from vibey_gh.runners.contract import ProductionWatch
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.judging.judge import judge_sweep
from vibey_gh.state import StateLayout

pytestmark = pytest.mark.integration
MAX_TOKENS = 24


def embedded_config(production_port: int) -> LocalModels:
    return LocalModels(
        concurrent_runs="measured",
        runner="embedded",
        window=TINY_WINDOW,
        calibration_port=free_port(),
        production_url=f"http://127.0.0.1:{production_port}",
        min_step_seconds=0.1,  # one pass per one-slot step on the tiny corpus
    )


def test_sweep_one_one_two_records_evidence_that_re_judges_the_same(
    embedded_calibration: SharedCalibration,
) -> None:
    shared = embedded_calibration
    outcome, corpus, layout = shared.outcome, shared.corpus, shared.layout
    assert outcome.recorded and outcome.complete
    assert outcome.evidence is not None and outcome.evidence.with_suffix(".md").exists()
    evidence = load_evidence(outcome.evidence)
    assert [s.slots for s in evidence.steps] == [1, 1, 2]
    assert all(len(s.turns) >= corpus.turn_count for s in evidence.steps[:2])
    assert all(s.measurement is not None for s in evidence.steps)
    recorded = evidence.data["verdicts"]
    assert recorded[1]["agreement"]["structural"] == 1.0
    assert recorded[1]["agreement"]["exact"] == 1.0
    rejudged = judge_sweep(evidence.steps, shared.config.bounds)
    assert [v.label for v in rejudged.verdicts] == [v["label"] for v in recorded]
    assert rejudged.ideal == evidence.data["decision"]["ideal"]
    assert evidence.steps[0].timeline, "the sampler recorded memory"
    assert (
        any(e.kind == "slots" for e in evidence.steps[2].log_events)
        or evidence.steps[2].log_events == ()
    )
    assert (shared.out_dir / f"slots-{outcome.fingerprint}.json").exists()
    assert not list(layout.progress.glob("*.json")), "a finished sweep leaves no checkpoint"


class WatchThatTells:
    """The calibration's production watch, telling when one of its polls saw production hold
    or work on a model: from then the step it watches cannot end unnoticed."""

    def __init__(self, watch: ProductionWatch) -> None:
        self.watch = watch
        self.saw_a_model = threading.Event()

    def poll(self) -> ProductionState:
        state = self.watch.poll()
        if state.busy or state.models:  # either makes the step unclean (the sampler's rule)
            self.saw_a_model.set()
        return state

    def __getattr__(self, name: str) -> Any:
        return getattr(self.watch, name)


def test_production_loading_a_model_mid_step_discards_and_remeasures_it(
    tmp_path: Path, layout: StateLayout
) -> None:
    # production is the real embedded runner loading its model, seen by the calibration's real
    # watch; the sweep it interrupts runs on the simulated runner: what is claimed is what a
    # real llama.cpp loading a model does to a step, not how the calibration runner serves
    from vibey_gh.interfaces.slots_interface import ChatSettings
    from vibey_gh.runners.registry import runner_for

    production_port = free_port()
    config = replace(
        simulated_config(min_step_seconds=0.1, max_step_seconds=1.0),
        production_url=f"http://127.0.0.1:{production_port}",
    )
    recorder = Recorder()
    production: list = []

    def start_production_mid_step(done: int) -> None:
        # runs inside step 2's replay, after its first answer: the step cannot end before
        # production has loaded its model and the 1 Hz sampler has seen it
        if recorder.started[-1:] != [(2, 2, 1)] or done != 1 or production:
            return
        runner = runner_for("embedded").start(
            RunnerLaunch(
                slots=1,
                window=512,
                port=production_port,
                model="default",
                log_path=tmp_path / "prod.log",
            )
        )
        production.append(runner)
        runner.wait_ready()
        runner.chat(
            [{"role": "user", "content": "hi"}], None, ChatSettings(window=512, max_tokens=4)
        )
        assert watch.saw_a_model.wait(60), "the 1 Hz production watch never saw the model"

    recorder.turn_hook.append(start_production_mid_step)
    env = build_environment(config, layout)
    watch = WatchThatTells(env.production)
    try:
        _, outcome = calibrate(
            tmp_path, layout, config, recorder, slots=(1, 1, 2), env=replace(env, production=watch)
        )
    finally:
        for runner in production:
            runner.stop()
    assert production, "production was started mid-step"
    assert outcome.recorded
    steps = load_evidence(outcome.evidence).steps  # type: ignore[arg-type]
    assert steps[2].discarded_attempts == 1
    assert steps[2].attempt == 2
    assert steps[2].production.clean
    assert (2, 2, 2) in recorder.started
    assert any("discarded" in text for text in recorder.messages)
