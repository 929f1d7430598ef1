"""What a calibration needs of its runner kind, checked the way the calibration would fail:
the calibration runner (the installed package, or a binary that runs and names production's
version) and the model (a GGUF file, a model Ollama has pulled, or none for the simulated
runner). `slots.measurement.readiness` puts these beside the port, state and production
checks `vibey-gh doctor` shows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..config import LocalModels
from ..errors import VibeyError
from ..interfaces.identity import RunnerInfo
from ..interfaces.values import frozen_value

OK, WARN, FAIL = "ok", "warn", "fail"


@frozen_value
class Check:
    """One thing calibrate needs: `status` ok, warn (calibrate runs, but read this) or fail
    (calibrate would stop here); `todo` says what to do when it is not ok."""

    name: str
    status: str
    detail: str
    todo: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "todo": self.todo}


def binary_check(
    config: LocalModels,
    calibration_version: Callable[[LocalModels], tuple[str, str | None]] | None,
    production: RunnerInfo | None,
) -> Check:
    """The calibration runner: `calibration_version` gives a separate binary's path and
    version (None: the calibration runner is this package, as production's is)."""
    name = "calibration runner"
    if config.runner == "embedded":
        import importlib.util

        if importlib.util.find_spec("xllamacpp") is None:
            return Check(
                name,
                FAIL,
                "the embedded runner needs xllamacpp, which is not installed",
                "pip install 'vibey-gh[embedded]' (pipx: pipx inject vibey-gh xllamacpp)",
            )
        return Check(name, OK, "embedded llama.cpp (xllamacpp) installed")
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


def model_check(config: LocalModels, production: RunnerInfo | None) -> Check:
    """The model the calibration runner loads."""
    name = "model"
    if config.runner == "simulated":
        return Check(name, OK, "the simulated runner's capacity model")
    if config.runner == "ollama":
        if production is None:
            return Check(
                name,
                WARN,
                f"{config.model}: cannot ask production whether it is pulled",
                f"start Ollama, then check with: ollama list (ollama pull {config.model})",
            )
        if production.model_digest is None:
            return Check(
                name,
                FAIL,
                f"{config.model} is not pulled",
                f"ollama pull {config.model}",
            )
        return Check(name, OK, f"{config.model} pulled ({production.model_digest[:12]})")
    from ..errors import RunnerNotFound
    from .models import resolve_gguf

    try:
        path = resolve_gguf(config.model)
    except RunnerNotFound as exc:
        return Check(
            name, FAIL, str(exc), "set [local_models] model to a GGUF file (or --model PATH)"
        )
    return Check(name, OK, str(path))


__all__ = ["FAIL", "OK", "WARN", "Check", "binary_check", "model_check"]
