"""The whole demo corpus through the Ollama calibration path, against the strict stand-in.

Production is a second stand-in (idle, as calibration needs); the calibration runner is
started by `OllamaRunner` exactly as on a Mac with Ollama. Every turn must be served: a turn
sent in any form but Ollama's own is refused by the stand-in, as Ollama refuses it.
"""

from __future__ import annotations

from pathlib import Path

from runner_support import free_port, write_fake_ollama

from vibey_gh.config import LocalModels
from vibey_gh.interfaces.slots_interface import MemorySample, RunnerLaunch
from vibey_gh.runners.ollama import OllamaRunner
from vibey_gh.slots.calibrate import CalibrationRequest, run_calibration
from vibey_gh.slots.corpus import build_demo_corpus
from vibey_gh.slots.records import StepRecord
from vibey_gh.slots.wiring import build_environment
from vibey_gh.state import StateLayout

DEMO_WINDOW = 4096


class Quiet:
    def message(self, text: str) -> None:
        pass

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        pass

    def runner_ready(self, load_seconds: float | None) -> None:
        pass

    def turn_done(self, done: int, served: int, latest: MemorySample | None) -> None:
        pass

    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        pass


def test_demo_corpus_replays_through_ollama_with_every_turn_served(
    tmp_path: Path, isolated_state: Path
) -> None:
    binary = write_fake_ollama(tmp_path / "bin")
    production_port = free_port()
    production = OllamaRunner().start(
        RunnerLaunch(
            slots=1,
            window=DEMO_WINDOW,
            port=production_port,
            model="llama3.2:3b",
            log_path=tmp_path / "production.log",
            binary=str(binary),
        )
    )
    try:
        production.wait_ready(30)
        config = LocalModels(
            concurrent_runs="measured",
            runner="ollama",
            model="llama3.2:3b",
            window=DEMO_WINDOW,
            production_url=f"http://127.0.0.1:{production_port}",
            calibration_port=free_port(),
            runner_binary=str(binary),
        )
        corpus = build_demo_corpus(window=DEMO_WINDOW)
        request = CalibrationRequest(
            config=config,
            corpus=corpus,
            window=DEMO_WINDOW,
            max_tokens=128,
            slots=(1, 2),
            early_verdicts=False,
        )
        env = build_environment(config, StateLayout(isolated_state))
        outcome = run_calibration(request, env, Quiet())
    finally:
        production.stop()
    assert outcome.recorded and outcome.complete and outcome.evidence is not None
    from vibey_gh.slots.evidence import load_evidence

    steps = load_evidence(outcome.evidence).steps
    assert [s.slots for s in steps] == [1, 2]
    for step in steps:
        failed = [(t.turn_id, t.result.error) for t in step.turns if not t.result.served]
        assert failed == [], f"N={step.slots}: {failed[:3]}"
        assert len(step.turns) == corpus.turn_count == 16
