"""What a calibration needs of its runner kind, checked the way the calibration would fail:
the calibration runner (the installed package, or a binary that runs and names production's
version) and the model (a GGUF file, a model Ollama has pulled, or none for the simulated
runner; each kind's `model_check`). `slots.measurement.readiness` puts these beside the port,
state and production checks `vibey-gh doctor` shows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ..errors import VibeyError
from ..interfaces.identity import RunnerInfo
from .contract import FAIL, OK, WARN, Check, RunnerConfig
from .registry import runner_kind

Config = TypeVar("Config", bound=RunnerConfig)


def binary_check(
    config: Config,
    calibration_version: Callable[[Config], tuple[str, str | None]] | None,
    production: RunnerInfo | None,
) -> Check:
    """The calibration runner: `calibration_version` gives a separate binary's path and
    version (None: the calibration runner is this package, as production's is)."""
    name = "calibration runner"
    installed = runner_kind(config.runner).installed_check()
    if installed is not None:
        return installed
    if calibration_version is None:
        return Check(name, OK, f"{config.runner}, started by this package")
    try:
        binary, version = calibration_version(config)
    except (VibeyError, OSError) as exc:
        return Check(
            name,
            FAIL,
            str(exc),
            f"install {config.runner}, or set [local_models] runner_binary to its path",
        )
    if version is None:
        return Check(
            name,
            FAIL,
            f"`{binary} --version` names no {config.runner} version",
            f"runner_binary must be {config.runner} itself: evidence is keyed to its version",
        )
    if production is not None and production.version and production.version != version:
        return Check(
            name,
            FAIL,
            f"{binary}: version {version}, production's is {production.version}",
            "install the same version as production (or calibrate with --out, not recorded)",
        )
    return Check(name, OK, f"{binary} {version}")


def model_check(config: RunnerConfig, production: RunnerInfo | None) -> Check:
    """The model the calibration runner loads, as its kind checks it."""
    return runner_kind(config.runner).model_check(config, production)


__all__ = ["FAIL", "OK", "WARN", "Check", "binary_check", "model_check"]
