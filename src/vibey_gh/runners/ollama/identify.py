"""Who the production Ollama is: its version (/api/version), its model's digest (/api/tags) and
the environment it runs with, starting nothing.

`slots allowed` asks this on every decision, so it speaks to production through the small
socket GET of `local_http` and never imports an adapter (httpx, process handling).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec.structs import replace

from ...errors import RunnerError
from ...interfaces.identity import RunnerInfo
from ..builds import production_version
from ..contract import EnvironmentReader, RunnerConfig
from ..http.local_http import http_get
from .settings import production_settings
from .wire import digest_from_tags, version_of

if TYPE_CHECKING:
    from ...state import StateLayout

KIND = "ollama"


def identify_ollama_production(
    config: RunnerConfig,
    read_environment: EnvironmentReader | None = None,
    state: StateLayout | None = None,
) -> RunnerInfo:
    """What production says on /api/version and /api/tags, and the environment it runs with;
    a development build's version ("0.0.0") keyed to the binary that listens, as llama-server's
    nameless builds are (`builds.production_version`)."""
    info = identify_ollama(config.production, config.model)
    if info.version is not None:
        version, unkeyed = production_version(info.version, config.production, state)
        info = replace(info, version=version)
        if unkeyed is not None:
            info.missing["version"] = unkeyed
    settings = production_settings(config, read_environment)
    if settings.missing:
        info.missing["settings"] = settings.missing
    return replace(
        info,
        settings=settings.fingerprinted,
        settings_source=settings.source,
        serving_slots=settings.serving_slots,
    )


def identify_ollama(base_url: str, model: str) -> RunnerInfo:
    """Version and model digest of the Ollama at `base_url`; RunnerError when it does not answer."""
    base = base_url.rstrip("/")
    version_answer = http_get(base + "/api/version")
    if version_answer.status != 200:
        raise RunnerError(f"{base}/api/version answered {version_answer.status}")
    version = version_of(version_answer.body)
    missing: dict[str, str] = {}
    if version is None:
        missing["version"] = f"{base}/api/version did not name a version"
    tags = http_get(base + "/api/tags")
    digest = digest_from_tags(tags.body, model) if tags.status == 200 else None
    if digest is None:
        missing["model_digest"] = (
            f"model {model} is not listed by {base}/api/tags (ollama pull {model})"
        )
    return RunnerInfo(KIND, version, model, digest, missing)
