"""The one place that names runner kinds: start one, watch production, identify production.

Adapters are imported only when asked for: `slots allowed` calls `identify_production` on every
decision and must not pay for httpx or llama.cpp to do it.
"""

from __future__ import annotations

from ..config import LocalModels
from ..errors import BadInput, RunnerError
from ..interfaces.slots_interface import ProductionWatch, Runner, RunnerInfo
from ..state import StateLayout

RUNNER_NAMES = ("embedded", "llama-server", "ollama")
DEFAULT_PORTS = {"embedded": 8080, "llama-server": 8080, "ollama": 11434}


def check_kind(kind: str) -> str:
    if kind not in RUNNER_NAMES:
        raise BadInput(f"unknown runner {kind!r}; valid runners: {', '.join(RUNNER_NAMES)}")
    return kind


def runner_for(kind: str, state: StateLayout | None = None) -> Runner:
    """The Runner that starts servers of `kind`; BadInput naming the valid kinds otherwise."""
    check_kind(kind)
    if kind == "embedded":
        from .embedded import EmbeddedRunner

        return EmbeddedRunner(state)
    if kind == "llama-server":
        from .llama_server import LlamaServerRunner

        return LlamaServerRunner(state)
    from .ollama import OllamaRunner

    return OllamaRunner()


def production_watch(config: LocalModels) -> ProductionWatch:
    """Ollama is watched through /api/ps; llama-server and embedded through /health and /slots."""
    return watch_url(config.runner, config.production)


def watch_url(kind: str, base_url: str) -> ProductionWatch:
    """What a runner of `kind` at `base_url` holds: production's, or the calibration runner's."""
    from .production import LlamaServerWatch, OllamaWatch

    if check_kind(kind) == "ollama":
        return OllamaWatch(base_url)
    return LlamaServerWatch(base_url)


def identify_production(config: LocalModels, state: StateLayout | None = None) -> RunnerInfo:
    """Kind, version and model digest of the production setup, without starting anything.

    embedded: the installed xllamacpp and the GGUF's sha256. ollama: what production says on
    /api/version and /api/tags. llama-server: production's /props build and the GGUF's sha256.
    RunnerError when the production runner that must say its version does not answer.
    """
    from .digest import gguf_digest
    from .models import resolve_gguf

    kind = check_kind(config.runner)
    if kind == "ollama":
        from .ollama import identify

        return identify(config.production, config.model)
    missing: dict[str, str] = {}
    model_path = resolve_gguf(config.model)
    if kind == "embedded":
        from .versions import embedded_version

        version = embedded_version()
        if version is None:
            missing["version"] = "the xllamacpp package is not installed"
    else:
        version = _llama_server_version(config.production)
    return RunnerInfo(kind, version, str(model_path), gguf_digest(model_path, state), missing)


def _llama_server_version(base_url: str) -> str:
    from .llama_server import version_from_props
    from .local_http import http_get

    answer = http_get(base_url.rstrip("/") + "/props")
    version = version_from_props(answer.body) if answer.status == 200 else None
    if version is None:
        raise RunnerError(
            f"llama-server at {base_url} gave no build_info on /props (http {answer.status})"
        )
    return version
