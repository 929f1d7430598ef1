"""The whole demo corpus through the Ollama calibration path, against the strict stand-in.

Production is a second stand-in (idle, as calibration needs); the calibration runner is
started by `OllamaRunner` exactly as on a Mac with Ollama. Every turn must be served: a turn
sent in any form but Ollama's own is refused by the stand-in, as Ollama refuses it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.ports import free_port
from tests.support.progress import Quiet
from tests.support.runners import write_fake_ollama
from vibey_gh.composition import build_environment
from vibey_gh.config import LocalModels
from vibey_gh.errors import Refused
from vibey_gh.interfaces.slots_interface import RunnerLaunch
from vibey_gh.runners.ollama.runner import OllamaRunner
from vibey_gh.slots.corpus.corpus import Corpus, build_demo_corpus
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationOutcome, CalibrationRequest
from vibey_gh.state import StateLayout

DEMO_WINDOW = 4096


@contextmanager
def ollama_beside_production(tmp_path: Path) -> Iterator[LocalModels]:
    """An idle production stand-in, and the config of a calibration with the same binary."""
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
        yield LocalModels(
            concurrent_runs="measured",
            runner="ollama",
            model="llama3.2:3b",
            window=DEMO_WINDOW,
            production_url=f"http://127.0.0.1:{production_port}",
            calibration_port=free_port(),
            runner_binary=str(binary),
            # steady-state steps: every turn once, then stop (the stand-in answers at once)
            min_step_seconds=0.1,
        )
    finally:
        production.stop()


def calibrate(
    config: LocalModels, corpus: Corpus, layout: StateLayout, out: Path | None = None
) -> CalibrationOutcome:
    request = CalibrationRequest(
        config=config,
        corpus=corpus,
        window=DEMO_WINDOW,
        max_tokens=128,
        slots=(1, 2),
        early_verdicts=False,
        out_dir=out,
    )
    return run_calibration(request, build_environment(config, layout), Quiet())


def test_demo_corpus_replays_through_ollama_with_every_turn_served(
    tmp_path: Path, isolated_state: Path
) -> None:
    corpus = build_demo_corpus(window=DEMO_WINDOW)
    with ollama_beside_production(tmp_path) as config:
        outcome = calibrate(config, corpus, StateLayout(isolated_state))
    assert outcome.recorded and outcome.complete and outcome.evidence is not None
    steps = load_evidence(outcome.evidence).steps
    assert [s.slots for s in steps] == [1, 2]
    for step in steps:
        failed = [(t.turn_id, t.result.error) for t in step.turns if not t.result.served]
        assert failed == [], f"N={step.slots}: {failed[:3]}"
        served_once = {t.turn_id for t in step.turns}
        assert len(served_once) == corpus.turn_count == 16
        # what the stand-in logged starting its engine (`-c <num_ctx × N> -np N`)
        reported = step.runner_reported
        assert reported is not None and (reported.slots, reported.window) == (step.slots, 4096)


def test_a_floor_with_failed_turns_stops_the_sweep_and_records_nothing(
    tmp_path: Path, layout: StateLayout
) -> None:
    corpus = build_demo_corpus(window=DEMO_WINDOW)
    # A tool call whose recorded arguments are no JSON (models do write such): Ollama refuses
    # every turn that carries it, as it would refuse a client sending OpenAI's string form.
    broken = []
    for turn in corpus.segments[0].turns:
        calls = [c for m in turn.messages for c in m.get("tool_calls") or []]
        for call in calls:
            call["function"]["arguments"] = '{"path": '
        broken += [turn.id] if calls else []
    assert broken, "the demo corpus's first segment makes tool calls"
    with ollama_beside_production(tmp_path) as config, pytest.raises(Refused) as refused:
        calibrate(config, corpus, layout, out=tmp_path / "out")
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(
        f"the first one-slot step failed {len(broken)} of 16 turns "
        f"(first: {broken[0]}: http 400: Value looks like object"
    )
    assert not list(layout.evidence.glob("*")), "nothing recorded as evidence"
    assert not list(layout.progress.glob("*.json")), "no checkpoint of the failed step"
    assert not (tmp_path / "out").exists()
