"""What a calibration settles before its first step: whose identity the evidence is keyed to,
a calibration binary of another version than production's, and a production holding a model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import asdict

from tests.support.clocks import ManualClock
from tests.support.corpus import TINY_WINDOW, tiny_corpus
from tests.support.ports import free_port
from vibey_gh.config import LocalModels
from vibey_gh.errors import BadInput, Refused, RunnerError
from vibey_gh.interfaces.slots_interface import (
    DeviceFacts,
    ProductionState,
    RunnerInfo,
    RunnerLaunch,
)
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest, Environment
from vibey_gh.state import StateLayout

DEVICE = DeviceFacts("Mac17,2", "Apple M5", 24 << 30, (), "macOS", "26.6.2")
PRODUCTION = RunnerInfo("ollama", "0.32.15", "qwen3:8b", "17052f91a42e")


class StepReached(Exception):
    """The calibration got as far as starting its first step's runner."""


class FirstStepStops:
    kind = "ollama"

    def __init__(self) -> None:
        self.launches: list[RunnerLaunch] = []

    def start(self, launch: RunnerLaunch) -> Any:
        self.launches.append(launch)
        raise StepReached


class Watch:
    """Production holding `held` for the first `busy_polls` polls, then idle."""

    def __init__(self, busy_polls: int, held: str = "qwen3:8b") -> None:
        self.busy_polls, self.held, self.polls = busy_polls, held, 0

    def poll(self) -> ProductionState:
        self.polls += 1
        if self.polls <= self.busy_polls:
            return ProductionState(True, True, (self.held,))
        return ProductionState(True, False)


class Messages:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def unreachable() -> RunnerInfo:
    raise RunnerError("no answer from http://127.0.0.1:11434/api/version: connection refused")


def environment(
    layout: StateLayout,
    production_identity: Any = lambda: PRODUCTION,
    calibration_version: str | None = "0.32.15",
    watch: Watch | None = None,
) -> tuple[Environment, FirstStepStops]:
    runner = FirstStepStops()
    calibration = RunnerInfo("ollama", calibration_version, "qwen3:8b", "17052f91a42e")
    env = Environment(
        layout=layout,
        clock=ManualClock(epoch=2_000_000_000.0),
        device=DEVICE,
        production_identity=production_identity,
        production=watch or Watch(0),
        memory=None,
        runner=runner,
        log_source=lambda path, kind: list,
        fingerprint_of=compute_fingerprint,
        calibration_identity=lambda: calibration,
    )
    return env, runner


def request(tmp_path: Path, **changes: Any) -> CalibrationRequest:
    corpus, _ = tiny_corpus(tmp_path)
    config = LocalModels(runner="ollama", model="qwen3:8b", calibration_port=free_port())
    settings: dict[str, Any] = {
        "config": config,
        "corpus": corpus,
        "window": TINY_WINDOW,
        "max_tokens": 8,
        **changes,
    }
    return CalibrationRequest(**settings)


def test_another_version_is_refused_before_the_first_step_with_both_versions(
    tmp_path: Path, layout: StateLayout
) -> None:
    env, runner = environment(layout, calibration_version="0.33.0")
    with pytest.raises(Refused) as refused:
        run_calibration(request(tmp_path), env, Messages())
    assert str(refused.value).startswith(
        "the calibration ollama is version 0.33.0, production's is 0.32.15: "
    )
    assert "\n" not in str(refused.value)
    assert runner.launches == []


def test_with_out_a_mismatch_is_said_at_the_start_and_kept_out_of_the_record(
    tmp_path: Path, layout: StateLayout
) -> None:
    env, runner = environment(layout, calibration_version="0.33.0")
    messages = Messages()
    with pytest.raises(StepReached):
        run_calibration(request(tmp_path, out_dir=tmp_path / "out"), env, messages)
    assert messages.lines[0] == (
        f"the calibration ollama is version 0.33.0, production's is 0.32.15: the evidence "
        f"goes to {tmp_path / 'out'} only"
    )
    assert len(runner.launches) == 1


def test_production_down_calibrates_keyed_to_the_calibration_binary(
    tmp_path: Path, layout: StateLayout
) -> None:
    env, runner = environment(layout, production_identity=unreachable)
    messages = Messages()
    with pytest.raises(StepReached):
        run_calibration(request(tmp_path), env, messages)
    assert messages.lines[0].startswith("production is not answering (no answer from")
    assert "calibration binary's version 0.32.15" in messages.lines[0]
    assert len(runner.launches) == 1


def test_production_down_and_a_binary_of_no_version_is_refused_before_the_first_step(
    tmp_path: Path, layout: StateLayout
) -> None:
    """runner_binary = "/bin/true": its --version names nothing, and evidence keyed to an
    unknown version would match no production."""
    env, runner = environment(layout, production_identity=unreachable, calibration_version=None)
    with pytest.raises(Refused) as refused:
        run_calibration(request(tmp_path), env, Messages())
    message = str(refused.value)
    assert "the calibration binary's version is unknown" in message
    assert message.endswith("set runner_binary to ollama itself (`vibey-gh doctor` checks it)")
    assert runner.launches == []


def test_production_down_without_a_calibration_binary_identity_is_the_runner_error(
    tmp_path: Path, layout: StateLayout
) -> None:
    env, _ = environment(layout, production_identity=unreachable)
    env = Environment(**{**asdict(env), "calibration_identity": None})
    with pytest.raises(RunnerError, match="no answer from"):
        run_calibration(request(tmp_path), env, Messages())


def test_a_busy_production_is_refused_at_once_without_wait_idle(
    tmp_path: Path, layout: StateLayout
) -> None:
    env, runner = environment(layout, watch=Watch(busy_polls=3))
    with pytest.raises(Refused, match="holds qwen3:8b.*--wait-idle SECONDS waits for it"):
        run_calibration(request(tmp_path), env, Messages())
    assert runner.launches == []


def test_wait_idle_waits_with_progress_until_production_unloads(
    tmp_path: Path, layout: StateLayout
) -> None:
    watch = Watch(busy_polls=40)
    env, runner = environment(layout, watch=watch)
    messages = Messages()
    with pytest.raises(StepReached):
        run_calibration(request(tmp_path, wait_idle_s=300.0), env, messages)
    waits = [line for line in messages.lines if line.startswith("waiting for")]
    assert waits[0] == "waiting for the production runner to unload qwen3:8b (0s of at most 300s)"
    assert len(waits) == 2  # every 30 s of the ~40 s it held the model
    assert len(runner.launches) == 1


def test_wait_idle_gives_up_after_its_limit(tmp_path: Path, layout: StateLayout) -> None:
    env, runner = environment(layout, watch=Watch(busy_polls=10_000))
    with pytest.raises(Refused, match=r"still holds qwen3:8b after 60s of waiting"):
        run_calibration(request(tmp_path, wait_idle_s=60.0), env, Messages())
    assert runner.launches == []


def test_a_negative_wait_is_bad_input(tmp_path: Path, layout: StateLayout) -> None:
    env, _ = environment(layout)
    with pytest.raises(BadInput, match="--wait-idle takes 0 or more seconds, not -1"):
        run_calibration(request(tmp_path, wait_idle_s=-1.0), env, Messages())


def test_where_production_differs_from_the_config_is_said_before_the_first_step(
    tmp_path: Path, layout: StateLayout
) -> None:
    env, _ = environment(layout)
    drift = ["it serves 1 slot(s), concurrent_runs is 4"]
    env = Environment(**{**asdict(env), "production_drift": lambda: drift})
    messages = Messages()
    with pytest.raises(StepReached):
        run_calibration(request(tmp_path), env, messages)
    assert messages.lines[0] == (
        "production differs from the config: it serves 1 slot(s), concurrent_runs is 4"
    )


def test_a_binary_whose_version_names_no_build_is_said_to_key_the_evidence_by_its_sha256(
    tmp_path: Path, layout: StateLayout
) -> None:
    keyed = "b0-unknown+sha256:0123456789abcdef"
    env, _ = environment(layout, production_identity=unreachable, calibration_version=keyed)
    messages = Messages()
    with pytest.raises(StepReached):
        run_calibration(request(tmp_path), env, messages)
    assert "version b0-unknown names no build" in messages.lines[0]
    assert "keyed to its sha256 0123456789abcdef as well" in messages.lines[0]
    assert "calibration binary's version b0-unknown" not in messages.lines[0]
