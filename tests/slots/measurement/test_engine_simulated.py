"""The calibration engine's decisions on the simulated runner, in seconds each: an early
verdict ends a step at once, a checkpoint is resumed and then removed, a busy production gets
a step measured again (and, busy throughout, leaves evidence for --out only), and a calibration
runner of another version is refused before its first step or kept out of the record.

What cannot happen on its own here (production holding a model, a runner of another version,
answers that change form when batched) comes in through the Environment the composition root builds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from tests.support.progress import Recorder
from tests.support.simulated import calibrate, simulated_config
from vibey_gh.composition import build_environment
from vibey_gh.config import LocalModels
from vibey_gh.errors import Refused
from vibey_gh.interfaces.schema import as_json
from vibey_gh.interfaces.slots_interface import (
    ChatSettings,
    ProductionState,
    RunnerInfo,
    RunnerLaunch,
    ToolCall,
    TurnResult,
)
from vibey_gh.runners.contract import RunningRunner
from vibey_gh.runners.registry import runner_for
from vibey_gh.slots.evidence.requests import request_path, write_request
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.measurement.calibrate import MAX_REMEASURES
from vibey_gh.slots.measurement.calibration_setup import Environment
from vibey_gh.state import StateLayout

# one-slot steps end once they hold their thirty turns; a turn is a few milliseconds
QUICK = {"min_step_seconds": 0.2, "max_step_seconds": 1.0, "tokens_per_second": 5000.0}


def quick_config() -> LocalModels:
    return simulated_config(**QUICK)


class FlipsWhenBatched:
    """A started runner whose answers change form (text for a tool call and back) while it
    serves more than one slot: a model whose batched decoding goes wrong."""

    def __init__(self, inner: RunningRunner, slots: int) -> None:
        self.inner, self.slots = inner, slots

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: ChatSettings,
    ) -> TurnResult:
        result = self.inner.chat(messages, tools, settings)
        if self.slots == 1 or not result.served:
            return result
        if result.tool_calls:
            return replace(result, text="flipped", tool_calls=())
        return replace(result, text="", tool_calls=(ToolCall("read_file", {"path": "x"}),))


class BatchedAnswersFlip:
    """The simulated runner, its answers flipped at more than one slot."""

    def __init__(self, config: LocalModels) -> None:
        self.inner = runner_for("simulated", config=config)
        self.kind = self.inner.kind

    def start(self, launch: RunnerLaunch) -> FlipsWhenBatched:
        return FlipsWhenBatched(self.inner.start(launch), launch.slots)


class BusyWhile:
    """Production holding a model whenever `holds()` says so, idle otherwise."""

    def __init__(self, holds: Any) -> None:
        self.holds = holds
        self.polls = 0

    def poll(self) -> ProductionState:
        self.polls += 1
        if self.holds():
            return ProductionState(True, True, ("qwen3:8b",))
        return ProductionState(True, False)


def flipping_environment(config: LocalModels, layout: StateLayout) -> Environment:
    return replace(build_environment(config, layout), runner=BatchedAnswersFlip(config))


def test_an_early_verdict_ends_the_step_at_its_first_changed_answer(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = quick_config()
    env = flipping_environment(config, layout)
    corpus, outcome = calibrate(tmp_path, layout, config, env=env, slots=(1, 1, 2))
    evidence = load_evidence(outcome.evidence)
    two = evidence.steps[2]
    assert two.ended_early is not None and two.ended_early.startswith("fidelity: "), two.ended_early
    assert two.measurement is not None and two.measurement["why_ended"] == two.ended_early
    # two workers: the answer that decided it and at most the one beside it
    assert len(two.turns) <= 2 < corpus.turn_count
    assert evidence.data["verdicts"][2]["label"] != "qualifies"
    assert outcome.recorded and outcome.ideal == 1


def test_without_early_verdicts_the_same_step_replays_every_turn(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = quick_config()
    env = flipping_environment(config, layout)
    corpus, outcome = calibrate(
        tmp_path, layout, config, env=env, slots=(1, 1, 2), early_verdicts=False
    )
    two = load_evidence(outcome.evidence).steps[2]
    assert two.ended_early is None
    assert {t.turn_id for t in two.turns} == {t.id for t in corpus.turns()}
    assert outcome.ideal == 1, "the changed answers still fail the step, only later"


def test_a_paused_sweep_leaves_its_checkpoint_and_the_resumed_one_removes_it(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = quick_config()
    _, paused = calibrate(tmp_path, layout, config, max_runs=2, slots=(1, 1, 2))
    (checkpoint,) = layout.progress.glob("*.json")
    saved = json.loads(checkpoint.read_text(encoding="utf-8"))
    assert [s["slots"] for s in saved["steps"]] == [1, 1]
    assert saved["key"]["fingerprint"] == paused.fingerprint
    assert not paused.complete and paused.recorded, "a paused sweep records what it has"
    recorder = Recorder()
    _, resumed = calibrate(tmp_path, layout, config, recorder, slots=(1, 1, 2))
    assert resumed.complete and (resumed.resumed_steps, resumed.new_steps) == (2, 1)
    assert recorder.started == [(2, 2, 1)], "only the step the checkpoint lacked is measured"
    assert recorder.messages[0].startswith("resuming: 2 completed step(s) from ")
    steps = load_evidence(resumed.evidence).steps
    assert [as_json(s) for s in steps[:2]] == saved["steps"]
    assert not checkpoint.exists(), "a finished sweep needs no checkpoint"


def test_a_step_measured_while_production_held_a_model_is_measured_again(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = quick_config()
    recorder = Recorder()
    # production holds a model during the first attempt at step 2, and unloads it as soon as
    # that attempt is discarded
    production = BusyWhile(
        lambda: (
            recorder.started[-1:] == [(2, 2, 1)]
            and not any("discarded" in m for m in recorder.messages)
        )
    )
    env = replace(build_environment(config, layout), production=production)
    _, outcome = calibrate(
        tmp_path, layout, config, recorder, env=env, slots=(1, 1, 2), wait_idle_s=5.0
    )
    assert [s for s in recorder.started if s[0] == 2] == [(2, 2, 1), (2, 2, 2)]
    two = load_evidence(outcome.evidence).steps[2]
    assert (two.attempt, two.discarded_attempts) == (2, 1)
    assert two.production.clean
    discarded = [m for m in recorder.messages if "discarded" in m]
    assert discarded == [
        "step 2 (N=2) discarded: the production runner held a model (qwen3:8b); "
        "measuring again once idle"
    ]
    assert not any("stayed busy" in m for m in recorder.messages), "idle again at once"
    assert (run_dir := Path(load_evidence(outcome.evidence).data["runs_dir"])).is_dir()
    assert (run_dir / "step-02-n2-a1").is_dir(), "the discarded attempt's turns are kept"
    assert outcome.recorded and outcome.complete


def test_production_busy_through_every_attempt_leaves_evidence_for_out_only(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = quick_config()
    recorder = Recorder()
    # idle when the calibration starts, holding a model from the first step on
    production = BusyWhile(lambda: bool(recorder.started))
    env = replace(build_environment(config, layout), production=production)
    out = tmp_path / "out"
    _, outcome = calibrate(
        tmp_path, layout, config, recorder, env=env, out_dir=out, wait_idle_s=0.1
    )
    attempts = MAX_REMEASURES + 1
    assert recorder.started == [(0, 1, a) for a in range(1, attempts + 1)]
    assert not outcome.recorded and not outcome.complete and outcome.evidence is None
    assert outcome.stop_reason is not None
    assert "never got a clean measurement" in outcome.stop_reason
    written = json.loads((out / f"slots-{outcome.fingerprint}-not-recorded.json").read_text())
    assert written["recorded"] is False and written["steps"] == []
    assert "no clean step was measured: not recorded as this device's evidence" in written["notes"]
    assert list(layout.evidence.glob("*.json")) == []
    assert list(layout.progress.glob("*.json")) == [], "no step to resume"


def other_version(env: Environment) -> Environment:
    production = env.production_identity()
    calibration = RunnerInfo(
        production.kind, "simulated 0.0.0-other", production.model, production.model_digest
    )
    return replace(env, calibration_identity=lambda: calibration)


class CountingRunner:
    def __init__(self, config: LocalModels) -> None:
        self.inner = runner_for("simulated", config=config)
        self.kind = self.inner.kind
        self.launches: list[RunnerLaunch] = []

    def start(self, launch: RunnerLaunch) -> RunningRunner:
        self.launches.append(launch)
        return self.inner.start(launch)


def test_a_calibration_runner_of_another_version_is_refused_before_the_first_step(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = quick_config()
    runner = CountingRunner(config)
    env = other_version(replace(build_environment(config, layout), runner=runner))
    recorder = Recorder()
    with pytest.raises(Refused) as refused:
        calibrate(tmp_path, layout, config, recorder, env=env)
    assert str(refused.value).startswith(
        "the calibration simulated is version simulated 0.0.0-other, production's is simulated "
    )
    assert runner.launches == [] and recorder.started == []
    assert not layout.runs.exists() or list(layout.runs.iterdir()) == []
    assert list(layout.progress.glob("*.json")) == []


def test_a_sweep_of_another_version_goes_to_out_and_leaves_the_request_standing(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = quick_config()
    env = other_version(build_environment(config, layout))
    identity = env.production_identity()
    fingerprint = env.fingerprint_of(env.device, identity, config.window)
    write_request(layout, fingerprint.id, fingerprint.fields, "no evidence", 1.0, {})
    out = tmp_path / "out"
    recorder = Recorder()
    _, outcome = calibrate(tmp_path, layout, config, recorder, env=env, slots=(1, 1), out_dir=out)
    assert outcome.fingerprint == fingerprint.id
    assert outcome.complete and not outcome.recorded and outcome.evidence is None
    assert recorder.messages[0].endswith(f"the evidence goes to {out} only")
    assert outcome.version_mismatch == recorder.messages[0]
    written = json.loads((out / f"slots-{fingerprint.id}-not-recorded.json").read_text())
    assert written["recorded"] is False and len(written["steps"]) == 2
    said = f"{outcome.version_mismatch}: not recorded as this device's evidence"
    assert said in written["notes"]
    assert {p.name for p in out.iterdir()} >= {f"slots-{fingerprint.id}-not-recorded.md"}
    assert not (out / f"slots-{fingerprint.id}.json").exists(), "no fingerprint's name"
    assert list(layout.evidence.glob("*.json")) == []
    assert request_path(layout, fingerprint.id).exists(), "the request still waits"
