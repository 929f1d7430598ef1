"""Ollama's own settings: what the calibration runner mirrors and the fingerprint holds, so
evidence measured with other settings never answers for these.

The config's `runner_env` when given, else the variables production really runs with, read from
the app's or the unit's environment (`platforms.service_env`). The calibration `ollama serve`
gets those, OLLAMA_MODELS, and the few variables a program needs to run (HOME, PATH, TMPDIR) —
never the rest of the shell's environment, which production does not see.

The calibration sets slots, window, address, keep-alive, pruning and log level itself, so
those variables are read (production's parallelism is what `slots allowed` compares with) but
are not part of the fingerprint.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ...errors import Refused
from ..contract import EnvironmentReader, ProductionSettings, RunnerConfig

# what `runner_env` may hold: Ollama's own variables
RUNNER_ENV_PREFIX = "OLLAMA_"
# the systemd unit a Linux install runs `ollama serve` from
SYSTEMD_UNIT = "ollama"

# what decides how much a loaded model takes or how fast it serves (runners.md §2)
OLLAMA_CAPACITY_VARIABLES = (
    "OLLAMA_FLASH_ATTENTION",
    "OLLAMA_KV_CACHE_TYPE",
    "OLLAMA_GPU_OVERHEAD",
    "OLLAMA_SCHED_SPREAD",
    "OLLAMA_LLM_LIBRARY",
    "OLLAMA_NEW_ENGINE",
)
# set by the calibration for every step; production's values are read, never mirrored
CALIBRATION_OWNED_VARIABLES = (
    "OLLAMA_HOST",
    "OLLAMA_NUM_PARALLEL",
    "OLLAMA_CONTEXT_LENGTH",
    "OLLAMA_NOPRUNE",
    "OLLAMA_DEBUG",
    "OLLAMA_KEEP_ALIVE",
    "OLLAMA_MAX_LOADED_MODELS",
)
MODELS_VARIABLE = "OLLAMA_MODELS"
NUM_PARALLEL = "OLLAMA_NUM_PARALLEL"
READ_FROM_PRODUCTION = (
    *OLLAMA_CAPACITY_VARIABLES,
    NUM_PARALLEL,
    "OLLAMA_CONTEXT_LENGTH",
    MODELS_VARIABLE,
)
# what any program needs to run at all; none of it changes what a model takes
PROCESS_VARIABLES = ("HOME", "PATH", "TMPDIR")


def read_service_environment(names: tuple[str, ...]) -> tuple[dict[str, str], str, str | None]:
    """This machine's production Ollama environment (the platform seam does the reading)."""
    # lazy: the config reads this module on every call; the service's environment is read
    # (launchctl, systemctl) only when an Ollama production is identified
    from ...platforms.service_env import service_environment_here

    found = service_environment_here(names, SYSTEMD_UNIT)
    return found.values, found.source, found.missing


def serving_slots(environment: Mapping[str, str]) -> int | None:
    """OLLAMA_NUM_PARALLEL as Ollama reads it (unset: 1, its default since v0.10)."""
    text = environment.get(NUM_PARALLEL, "").strip().strip("\"'")
    if not text:
        return 1
    return max(int(text), 1) if text.isdigit() else None


def production_settings(
    config: RunnerConfig, read_environment: EnvironmentReader | None = None
) -> ProductionSettings:
    """The settings of `config`'s production Ollama (see the module's docstring)."""
    if config.runner_env is not None:
        environment, source, missing = dict(config.runner_env), "config runner_env", None
    else:
        reader = read_environment or read_service_environment
        environment, source, missing = reader(READ_FROM_PRODUCTION)
    slots = serving_slots(environment) if source and missing is None else None
    return ProductionSettings(measured_variables(environment), environment, source, missing, slots)


def measured_variables(environment: Mapping[str, str]) -> dict[str, str]:
    """The variables of `environment` that are part of a fingerprint: what a calibration runs
    with, and what `slots apply` gives production back (not the ones the calibration owns, nor
    the model store)."""
    return {
        name: value
        for name, value in sorted(environment.items())
        if name not in CALIBRATION_OWNED_VARIABLES and name != MODELS_VARIABLE
    }


def default_models_dir(environ: Mapping[str, str]) -> Path:
    home = environ.get("HOME") or str(Path.home())
    return Path(home) / ".ollama" / "models"


def calibration_base_env(
    settings: ProductionSettings, environ: Mapping[str, str]
) -> dict[str, str]:
    """The calibration `ollama serve`'s environment before the calibration's own variables:
    production's settings, its model store, and what a process needs to run."""
    env = {name: environ[name] for name in PROCESS_VARIABLES if name in environ}
    env.update(
        {k: v for k, v in settings.environment.items() if k not in CALIBRATION_OWNED_VARIABLES}
    )
    if MODELS_VARIABLE not in env:
        env[MODELS_VARIABLE] = environ.get(MODELS_VARIABLE) or str(default_models_dir(environ))
    return env


def measured_environment(
    measured: Mapping[str, object], read_environment: EnvironmentReader | None = None
) -> dict[str, object]:
    """The config change that gives production back the variables the evidence recorded
    (`measured`, its fingerprint's `runner_settings`), for `slots apply`. Refused when
    production runs with a capacity variable the evidence was not measured with: apply only
    sets variables, never removes one."""
    settings = {str(name): str(value) for name, value in measured.items()}
    current, source, missing = (read_environment or read_service_environment)(
        OLLAMA_CAPACITY_VARIABLES
    )
    extra = {
        name: value for name, value in measured_variables(current).items() if name not in settings
    }
    if missing is None and extra:
        named = ", ".join(f"{name}={value}" for name, value in extra.items())
        raise Refused(
            f"production runs with {named} ({source}), which the evidence was not measured "
            "with, and apply cannot remove a variable: remove it from production's environment, "
            "or calibrate with it (runner_env)"
        )
    return {"runner_env": settings}
