"""The one place that maps a runner kind's name to its kind (`contract.RunnerKind`).

Each kind lives in a folder of its own beside this module and is registered by one line in
`KINDS`; its name, default port, process names, log lines, settings and wire formats are all
its own. Everything a kind knows is asked of `runner_kind(name)`; the functions below are the
common questions asked by name. Light enough for `slots allowed` to identify production on
every decision (the config reads the names here too): the kinds import their adapters only
when asked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..errors import BadInput
from .llamacpp.kinds import EmbeddedKind, LlamaServerKind
from .ollama.kind import OllamaKind
from .simulated.kind import SimulatedKind

if TYPE_CHECKING:
    from ..interfaces.identity import RunnerInfo
    from ..state import StateLayout
    from .contract import (
        EnvironmentReader,
        ProductionSettings,
        ProductionWatch,
        Runner,
        RunnerConfig,
        RunnerKind,
    )

# One line per kind, in the order the names are listed to a user.
KINDS: tuple[RunnerKind, ...] = (EmbeddedKind(), LlamaServerKind(), OllamaKind(), SimulatedKind())
# the kind a config without `runner` (and `calibrate --demo` without --runner) uses
DEFAULT_KIND: RunnerKind = KINDS[0]

# the names, for what is built once at import (the command line's choices)
RUNNER_NAMES: tuple[str, ...] = tuple(kind.name for kind in KINDS)
DEFAULT_RUNNER = DEFAULT_KIND.name
# What marks a process as a model runner, beside the kinds' own process names: this package's
# command (`vibey-gh runner serve` starts the kinds this package serves).
PACKAGE_COMMAND = "vibey-gh"


def runner_kind(name: str) -> RunnerKind:
    """The kind named `name`; BadInput naming the valid kinds otherwise."""
    for kind in KINDS:
        if kind.name == name:
            return kind
    raise BadInput(f"unknown runner {name!r}; valid runners: {', '.join(registered_names())}")


def registered_names() -> tuple[str, ...]:
    """The names of the kinds registered here, in order."""
    return tuple(kind.name for kind in KINDS)


def check_kind(name: str) -> str:
    return runner_kind(name).name


def default_production_url(name: str) -> str:
    """Where production of kind `name` listens when the config names no production_url."""
    return runner_kind(name).default_production_url


def runner_markers() -> tuple[str, ...]:
    """Substrings of a process name or command line that mark a model runner of any kind."""
    names = [marker for kind in KINDS for marker in kind.process_names]
    return (*dict.fromkeys(names), PACKAGE_COMMAND)


def package_runner_modules() -> tuple[str, ...]:
    """The modules this package runs its own kinds' servers as (`python -m MODULE`)."""
    return tuple(
        marker for kind in KINDS if kind.calibrates_this_package for marker in kind.process_names
    )


def runner_for(
    kind: str,
    state: StateLayout | None = None,
    config: RunnerConfig | None = None,
) -> Runner:
    """The Runner that starts servers of `kind`, with `config`'s production settings (its
    runner_args, or production's Ollama environment); BadInput naming the valid kinds
    otherwise."""
    return runner_kind(kind).calibration_runner(state, config)


def identify_production(
    config: RunnerConfig,
    state: StateLayout | None = None,
    read_environment: EnvironmentReader | None = None,
) -> RunnerInfo:
    """Kind, version, model digest and settings of the production setup, starting nothing.

    embedded: the installed xllamacpp and the GGUF's sha256. simulated: this package's version
    and a digest of the capacity model. Both ask a production that answers for its slots.
    ollama: what production says on /api/version and /api/tags, and the environment it runs
    with. llama-server: production's /props build and slots, the GGUF's sha256 and the
    config's runner_args. RunnerError when the production runner that must say its version
    does not answer.
    """
    return runner_kind(config.runner).identify_production(config, state, read_environment)


def production_settings(
    config: RunnerConfig, read_environment: EnvironmentReader | None = None
) -> ProductionSettings:
    """The settings of `config`'s production runner that its evidence is keyed to."""
    return runner_kind(config.runner).production_settings(config, read_environment)


def measured_settings(
    config: RunnerConfig,
    measured: Mapping[str, object],
    read_environment: EnvironmentReader | None = None,
) -> dict[str, object]:
    """The config changes that give production back the settings the evidence recorded."""
    return runner_kind(config.runner).measured_settings(measured, read_environment)


def production_drift(config: RunnerConfig) -> list[str]:
    """Where production's own settings differ from the config; nothing when it does not say."""
    return runner_kind(config.runner).production_drift(config)


def calibration_binary_version(
    config: RunnerConfig, environ: Mapping[str, str] | None = None
) -> tuple[str, str | None]:
    """The calibration binary's path and version (None: its --version names none), reading
    no model; RunnerNotFound / RunnerError / BadInput when it cannot be found or run."""
    return runner_kind(config.runner).calibration_version(config, environ)


def identify_calibration_binary(
    config: RunnerConfig,
    state: StateLayout | None = None,
    environ: Mapping[str, str] | None = None,
) -> RunnerInfo:
    """The calibration runner's identity from its binary and the model store, starting no
    server. The embedded runner is the installed package: the same as production's."""
    return runner_kind(config.runner).identify_calibration(config, state, environ)


def production_watch(config: RunnerConfig) -> ProductionWatch:
    """Ollama is watched through /api/ps; the llama.cpp kinds (and the simulated runner, which
    speaks their API) through /health and /slots."""
    return watch_url(config.runner, config.production)


def watch_url(kind: str, base_url: str) -> ProductionWatch:
    """What a runner of `kind` at `base_url` holds: production's, or the calibration runner's."""
    return runner_kind(kind).watch(base_url)
