"""The simulated runner's throttle model: capacity drops after so much busy time."""

from __future__ import annotations

from pathlib import Path

import pytest

from vibey_gh.config import SimulatedModel, parse_config
from vibey_gh.errors import ConfigError
from vibey_gh.interfaces.slots_interface import RunnerLaunch
from vibey_gh.runners.simulated import child_argv
from vibey_gh.runners.simulated_model import ProcessorSharing, model_name
from vibey_gh.runners.simulated_server import parse_args


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_work_takes_longer_once_the_runner_was_busy_long_enough() -> None:
    clock = Clock()
    sharing = ProcessorSharing(1, monotonic=clock, throttle_after_s=10.0, throttle_factor=0.5)
    sharing.remaining[0] = 100.0  # a turn in flight: time passing is busy time
    clock.now = 9.0
    sharing._advance()
    assert not sharing.throttled and sharing.remaining[0] == pytest.approx(91.0)
    clock.now = 12.0
    sharing._advance()
    assert sharing.throttled and sharing.busy_s == pytest.approx(12.0)
    clock.now = 14.0
    sharing._advance()
    assert sharing.remaining[0] == pytest.approx(87.0), "2 s at half speed do 1 s of work"


def test_idle_time_is_not_busy_time() -> None:
    clock = Clock()
    sharing = ProcessorSharing(1, monotonic=clock, throttle_after_s=1.0, throttle_factor=0.5)
    clock.now = 100.0
    sharing._advance()
    assert sharing.busy_s == 0.0 and not sharing.throttled


def test_the_config_reaches_the_server_and_leaves_the_model_name_alone() -> None:
    raw = {"local_models": {"simulated": {"throttle_after_s": 30, "throttle_factor": 0.7}}}
    model = parse_config(raw, None).simulated
    assert (model.throttle_after_s, model.throttle_factor) == (30.0, 0.7)
    assert model_name(model) == model_name(SimulatedModel())
    launch = RunnerLaunch(slots=2, window=1024, port=9, model="m", log_path=Path("runner.log"))
    args = parse_args(child_argv(launch, model)[3:])
    assert (args.throttle_after_s, args.throttle_factor) == (30.0, 0.7)
    steady = parse_args(child_argv(launch, SimulatedModel())[3:])
    assert steady.throttle_after_s is None and steady.throttle_factor == 1.0


@pytest.mark.parametrize(
    ("table", "said"),
    [({"throttle_factor": 0}, "throttle_factor"), ({"throttle_factor": 1.5}, "throttle_factor"),
     ({"throttle_after_s": -1}, "throttle_after_s")],
)  # fmt: skip
def test_bad_throttle_settings_are_config_errors(table: dict[str, float], said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        parse_config({"local_models": {"simulated": table}}, None)
