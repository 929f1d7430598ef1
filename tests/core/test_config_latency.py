"""The latency bounds and the simulated runner's scaling in the config: off by default, and a
bad value is one line naming the key."""

from __future__ import annotations

from typing import Any

import pytest

from vibey_gh.config import parse_config
from vibey_gh.errors import ConfigError


def config_with(bounds: dict[str, Any] | None = None, simulated: dict[str, Any] | None = None):  # type: ignore[no-untyped-def]
    table: dict[str, Any] = {}
    if bounds is not None:
        table["bounds"] = bounds
    if simulated is not None:
        table["simulated"] = simulated
    return parse_config({"local_models": table}, None)


def test_latency_bounds_are_off_by_default() -> None:
    bounds = config_with().bounds
    assert bounds.ttft_p95_seconds is None and bounds.itl_p95_seconds is None
    assert bounds.latency_factor is None and bounds.latency_bounds == {}


def test_latency_bounds_are_read() -> None:
    bounds = config_with(
        {
            "ttft_p95_seconds": 1.5,
            "tpot_p95_seconds": 0.05,
            "itl_p95_seconds": 0.08,
            "latency_factor": 1,
        }
    ).bounds
    assert bounds.latency_bounds == {
        "ttft_p95_seconds": 1.5,
        "tpot_p95_seconds": 0.05,
        "itl_p95_seconds": 0.08,
        "latency_factor": 1.0,
    }


@pytest.mark.parametrize(
    "key,value,problem",
    [
        ("ttft_p95_seconds", -1, "must be above 0, not -1"),
        ("ttft_p95_seconds", 0, "must be above 0, not 0"),
        ("itl_p95_seconds", "fast", "must be a number, not 'fast'"),
        ("itl_p95_seconds", True, "must be a number, not True"),
        ("tpot_p95_seconds", 0, "must be above 0, not 0"),
        ("ttft_p95_seconds", float("inf"), "must be a finite number"),
        ("latency_factor", 0.9, "must be at least 1, not 0.9"),
    ],
)
def test_a_bad_latency_bound_names_its_key(key: str, value: Any, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config_with({key: value})
    message = str(caught.value)
    assert f"local_models.bounds.{key} {problem}" in message and "\n" not in message


def test_scaling_defaults_to_linear_and_is_bounded() -> None:
    assert config_with().simulated.scaling == 1.0
    assert config_with(simulated={"scaling": 0.5}).simulated.scaling == 0.5
    with pytest.raises(ConfigError, match="local_models.simulated.scaling"):
        config_with(simulated={"scaling": 1.5})


def test_a_bad_bound_is_exit_2_at_the_command_line(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "vibey-gh.toml"
    config.write_text("[local_models.bounds]\nlatency_factor = 0.5\n")
    monkeypatch.setenv("VIBEY_GH_CONFIG", str(config))
    result = run_cli(["slots", "show"])
    assert result.exit_code == 2
    assert "local_models.bounds.latency_factor must be at least 1" in result.output
