"""The one place that maps a runner kind's name to its `contract.RunnerKind`.

Everything a kind knows (default port and URL, who production is, how to watch it, how to set
its parallelism, its calibration runner, its chat client) is asked of `runner_kind(name)`; the
functions below are the common questions asked by name. Light enough for `slots allowed` to
identify production on every decision: the kinds import their adapters only when asked. The
names alone, which the config reads, are in `interfaces.runner_names`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import BadInput
from ..interfaces.runner_names import DEFAULT_RUNNER as DEFAULT_RUNNER
from ..interfaces.runner_names import RUNNER_NAMES as RUNNER_NAMES
from .llamacpp.kinds import EmbeddedKind, LlamaServerKind, OllamaKind, SimulatedKind

if TYPE_CHECKING:
    from ..config import LocalModels, SimulatedModel
    from ..interfaces.identity import RunnerInfo
    from ..interfaces.slots_interface import ProductionWatch, Runner
    from ..state import StateLayout
    from .contract import ChatClient, RunnerKind
    from .ollama.settings import EnvironmentReader

_KINDS: dict[str, RunnerKind] = {
    kind.name: kind for kind in (EmbeddedKind(), LlamaServerKind(), OllamaKind(), SimulatedKind())
}


def runner_kind(name: str) -> RunnerKind:
    """The kind named `name`; BadInput naming the valid kinds otherwise."""
    try:
        return _KINDS[name]
    except KeyError:
        raise BadInput(
            f"unknown runner {name!r}; valid runners: {', '.join(RUNNER_NAMES)}"
        ) from None


def registered_names() -> tuple[str, ...]:
    """The names of the kinds registered here, in order (the same as `RUNNER_NAMES`)."""
    return tuple(_KINDS)


def check_kind(name: str) -> str:
    return runner_kind(name).name


def runner_for(
    kind: str,
    state: StateLayout | None = None,
    config: LocalModels | None = None,
    simulated: SimulatedModel | None = None,
) -> Runner:
    """The Runner that starts servers of `kind`, with `config`'s production settings (its
    runner_args, or production's Ollama environment); BadInput naming the valid kinds
    otherwise. `simulated`: a simulated runner's capacity model (default: the config's)."""
    return runner_kind(kind).calibration_runner(state, config, simulated)


def identify_production(
    config: LocalModels,
    state: StateLayout | None = None,
    read_environment: EnvironmentReader | None = None,
) -> RunnerInfo:
    """Kind, version, model digest and settings of the production setup, starting nothing.

    embedded: the installed xllamacpp and the GGUF's sha256. simulated: this package's version
    and a digest of the capacity model. ollama: what production says on /api/version and
    /api/tags, and the environment it runs with. llama-server: production's /props build and
    slots, the GGUF's sha256 and the config's runner_args. RunnerError when the production
    runner that must say its version does not answer.
    """
    return runner_kind(config.runner).identify_production(config, state, read_environment)


def production_watch(config: LocalModels) -> ProductionWatch:
    """Ollama is watched through /api/ps; the llama.cpp kinds (and the simulated runner, which
    speaks their API) through /health and /slots."""
    return watch_url(config.runner, config.production)


def watch_url(kind: str, base_url: str) -> ProductionWatch:
    """What a runner of `kind` at `base_url` holds: production's, or the calibration runner's."""
    return runner_kind(kind).watch(base_url)


def chat_client(kind: str, base_url: str, model: str) -> ChatClient:
    """The chat client of a runner of `kind` at `base_url`, in that runner's wire format:
    Ollama's /api/chat, or llama.cpp's OpenAI-compatible API for embedded and llama-server."""
    return runner_kind(kind).chat_client(base_url, model)
