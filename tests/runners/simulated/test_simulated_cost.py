"""What a turn costs on the simulated runner: its uncached prompt tokens at the prompt rate, its
cached ones `cache_speedup` times cheaper, its answer at the decode rate; what each slot's cache
keeps; and each start's own noise seed and drifted speed, from the config to the server."""

from __future__ import annotations

from pathlib import Path

import pytest

from vibey_gh.config import SimulatedModel, parse_config
from vibey_gh.errors import ConfigError
from vibey_gh.interfaces.slots_interface import RunnerLaunch
from vibey_gh.runners.simulated.cache import SlotPromptCache
from vibey_gh.runners.simulated.model import (
    PROMPT_SPEEDUP,
    launch_seed,
    launch_speed,
    model_name,
    work_seconds,
)
from vibey_gh.runners.simulated.runner import child_argv
from vibey_gh.runners.simulated.server import parse_args


def test_cached_prompt_tokens_cost_their_speedups_share() -> None:
    def cost(cached: int, speedup: float) -> float:
        return work_seconds(
            8000, 40, tokens_per_second=100.0, noise_z=0.0, noise=0.0,
            cached=cached, cache_speedup=speedup,
        )  # fmt: skip

    read, answer = 8000 / (100.0 * PROMPT_SPEEDUP), 40 / 100.0
    assert cost(0, 2.0) == pytest.approx(read + answer)
    assert cost(6000, 1.0) == pytest.approx(read + answer)  # 1: reported, not charged
    assert cost(6000, 2.0) == pytest.approx(read * (2000 + 3000) / 8000 + answer)
    assert cost(8000, 1e6) == pytest.approx(answer, rel=1e-3)


def test_the_runner_keeps_earlier_prompts_for_any_slot_up_to_its_tokens() -> None:
    first, second, third = ("x" + name * 4000 for name in "abc")  # 1000 tokens each
    cache = SlotPromptCache(2, keep_tokens=1000)  # room for one earlier prompt
    for text in (first, second, third):
        assert cache.serve(0, text, 1000) == 0
    # slot 0 holds the third; the second it let go of is kept, for the other slot too
    assert cache.serve(1, second + "more", 1001) == 1000
    assert cache.serve(0, third + "more", 1001) == 1000
    # the first was let go of to keep the second
    assert cache.serve(1, first, 1000) == 0
    forgetful = SlotPromptCache(1)
    forgetful.serve(0, first, 1000)
    forgetful.serve(0, second, 1000)
    assert forgetful.serve(0, first, 1000) == 0


def test_each_start_draws_its_own_noise_and_drifts() -> None:
    seeds = [launch_seed(7, launch) for launch in range(4)]
    assert seeds[0] == 7 and len(set(seeds)) == 4
    assert seeds == [launch_seed(7, launch) for launch in range(4)]  # a rerun draws the same
    drifting = SimulatedModel(tokens_per_second=100.0, drift_per_step=0.03)
    assert [launch_speed(drifting, k) for k in (0, 2)] == pytest.approx([100.0, 106.09])
    assert model_name(drifting) == model_name(SimulatedModel(tokens_per_second=100.0))
    assert "cache_speedup=2" in model_name(SimulatedModel(cache_speedup=2.0))


def test_the_config_reaches_the_server_start_by_start() -> None:
    table = {"cache_speedup": 2, "cache_tokens": 50000, "drift_per_step": -0.1, "seed": 3}
    model = parse_config({"local_models": {"simulated": table}}, None).simulated
    launch = RunnerLaunch(slots=2, window=1024, port=9, model="m", log_path=Path("runner.log"))
    first, third = (parse_args(child_argv(launch, model, k)[3:]) for k in (0, 2))
    assert (first.cache_speedup, first.cache_tokens, first.seed) == (2.0, 50000, 3)
    assert first.tokens_per_second == model.tokens_per_second
    assert third.tokens_per_second == pytest.approx(model.tokens_per_second * 0.81)
    assert third.seed == launch_seed(3, 2)


@pytest.mark.parametrize(
    "table",
    [{"cache_speedup": 0.5}, {"cache_tokens": -1}, {"drift_per_step": 0.9}, {"cache_speedup": "x"}],
)
def test_bad_cache_and_drift_settings_are_config_errors(table: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match=next(iter(table))):
        parse_config({"local_models": {"simulated": table}}, None)
