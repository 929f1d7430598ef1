"""Who the production runner is: kind, version and model digest, without starting anything.

Each kind's `identify_production` (`kinds`) calls its function here.

`slots allowed` asks this on every decision, so it speaks to production through the small
socket GET of `local_http` and never imports an adapter (httpx, llama.cpp, process handling).
The embedded runner is identified from the installed package and the model file alone, so
`local_http` (and the socket module) is imported only for the kinds that are asked over HTTP.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...config import LocalModels
from ...errors import RunnerError
from ...interfaces.identity import RunnerInfo
from ...state import StateLayout

if TYPE_CHECKING:
    from ..ollama.settings import EnvironmentReader


def identify_ollama_production(
    config: LocalModels, read_environment: EnvironmentReader | None = None
) -> RunnerInfo:
    """What production says on /api/version and /api/tags, and the environment it runs with."""
    from ..ollama.settings import production_settings

    info = identify_ollama(config.production, config.model)
    settings = production_settings(config, read_environment)
    if settings.missing:
        info.missing["settings"] = settings.missing
    return replace(
        info,
        settings=settings.fingerprinted,
        settings_source=settings.source,
        serving_slots=settings.serving_slots,
    )


def identify_embedded(config: LocalModels, state: StateLayout | None = None) -> RunnerInfo:
    """The installed xllamacpp and the GGUF's sha256."""
    from .versions import embedded_version

    version = embedded_version()
    info = gguf_identity(config, version, state)
    if version is None:
        info.missing["version"] = "the xllamacpp package is not installed"
    return info


def identify_llama_server(config: LocalModels, state: StateLayout | None = None) -> RunnerInfo:
    """Production's /props build and slots, the GGUF's sha256 and the config's runner_args;
    RunnerError when production does not say its build."""
    props = _llama_server_props(config.production)
    info = gguf_identity(config, version_from_props(props), state)
    return replace(info, serving_slots=slots_from_props(props))


def gguf_identity(
    config: LocalModels, version: str | None, state: StateLayout | None = None
) -> RunnerInfo:
    """A llama.cpp runner's identity: `version`, the GGUF's path and sha256, the config's
    runner_args (llama-server)."""
    from ..ollama.settings import production_settings
    from .digest import gguf_digest
    from .models import resolve_gguf

    model_path = resolve_gguf(config.model)
    settings = production_settings(config)
    return RunnerInfo(
        config.runner,
        version,
        str(model_path),
        gguf_digest(model_path, state),
        settings=settings.fingerprinted,
        settings_source=settings.source or None,
    )


def _llama_server_props(base_url: str) -> dict[str, Any]:
    from ..local_http import as_dict, http_get

    answer = http_get(base_url.rstrip("/") + "/props")
    if answer.status != 200 or version_from_props(answer.body) is None:
        raise RunnerError(
            f"llama-server at {base_url} gave no build_info on /props (http {answer.status})"
        )
    return as_dict(answer.body)


def slots_from_props(props: object) -> int | None:
    """The slots a llama-server serves: `total_slots` of /props."""
    if isinstance(props, dict):
        slots = props.get("total_slots")
        if isinstance(slots, int) and not isinstance(slots, bool) and slots > 0:
            return slots
    return None


def version_from_props(props: object) -> str | None:
    """llama-server's version is the `build_info` of /props, e.g. "b4747-2d219b38"."""
    if isinstance(props, dict):
        build = props.get("build_info")
        if isinstance(build, str) and build.strip():
            return build.strip()
    return None


def digest_from_tags(tags: Any, model: str) -> str | None:
    """The manifest digest of `model` in an /api/tags answer ("name" or "name:latest")."""
    from ..local_http import as_dict

    wanted = {model} if ":" in model else {model, f"{model}:latest"}
    for entry in as_dict(tags).get("models") or []:
        entry = as_dict(entry)
        if entry.get("name") in wanted or entry.get("model") in wanted:
            digest = entry.get("digest")
            return digest if isinstance(digest, str) and digest else None
    return None


def identify_ollama(base_url: str, model: str) -> RunnerInfo:
    """Version and model digest of the Ollama at `base_url`; RunnerError when it does not answer."""
    from ..local_http import http_get

    base = base_url.rstrip("/")
    version_answer = http_get(base + "/api/version")
    if version_answer.status != 200:
        raise RunnerError(f"{base}/api/version answered {version_answer.status}")
    version = version_answer.json_object().get("version")
    missing: dict[str, str] = {}
    if not isinstance(version, str) or not version:
        version = None
        missing["version"] = f"{base}/api/version did not name a version"
    tags = http_get(base + "/api/tags")
    digest = digest_from_tags(tags.body, model) if tags.status == 200 else None
    if digest is None:
        missing["model_digest"] = (
            f"model {model} is not listed by {base}/api/tags (ollama pull {model})"
        )
    return RunnerInfo("ollama", version, model, digest, missing)
