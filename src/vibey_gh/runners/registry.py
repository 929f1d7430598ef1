"""The one place that names runner kinds: start a runner of a kind, watch one at a URL.

Adapters are imported only when asked for. Who production is (`identify.identify_production`)
lives beside this module, light enough for `slots allowed` to ask on every decision.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..config import LocalModels
from ..errors import BadInput
from ..state import StateLayout

if TYPE_CHECKING:
    from ..interfaces.slots_interface import ProductionWatch, Runner

RUNNER_NAMES = ("embedded", "llama-server", "ollama")
DEFAULT_PORTS = {"embedded": 8080, "llama-server": 8080, "ollama": 11434}


def check_kind(kind: str) -> str:
    if kind not in RUNNER_NAMES:
        raise BadInput(f"unknown runner {kind!r}; valid runners: {', '.join(RUNNER_NAMES)}")
    return kind


def runner_for(
    kind: str, state: StateLayout | None = None, config: LocalModels | None = None
) -> Runner:
    """The Runner that starts servers of `kind`, with `config`'s production settings (its
    runner_args, or production's Ollama environment); BadInput naming the valid kinds
    otherwise."""
    check_kind(kind)
    if kind == "embedded":
        from .embedded import EmbeddedRunner

        return EmbeddedRunner(state)
    if kind == "llama-server":
        from .llama_server import LlamaServerRunner

        return LlamaServerRunner(state, runner_args=config.runner_args if config else ())
    from .ollama import OllamaRunner
    from .settings import production_settings

    settings = production_settings(config) if config is not None else None
    return OllamaRunner(settings=settings)


def production_watch(config: LocalModels) -> ProductionWatch:
    """Ollama is watched through /api/ps; llama-server and embedded through /health and /slots."""
    return watch_url(config.runner, config.production)


def watch_url(kind: str, base_url: str) -> ProductionWatch:
    """What a runner of `kind` at `base_url` holds: production's, or the calibration runner's."""
    from .production import LlamaServerWatch, OllamaWatch

    if check_kind(kind) == "ollama":
        return OllamaWatch(base_url)
    return LlamaServerWatch(base_url)
