"""Where production shows its own settings, what differs from the config.

llama-server says on /props how many slots it serves (`total_slots`), the context of each
(`default_generation_settings.n_ctx`) and the model file (`model_path`). A production started
with other values than the config's serves something the evidence did not measure; doctor and
calibrate say so. Ollama does not show its settings over HTTP; its environment is read instead
(`settings`).
"""

from __future__ import annotations

from pathlib import Path

from ...errors import RunnerError, RunnerNotFound
from ..contract import RunnerConfig
from ..http.local_http import http_get
from .api.wire import Props


def window_from_props(props: object) -> int | None:
    """The context per slot: /props `default_generation_settings.n_ctx`."""
    return Props.read(props).window


def props_drift(config: RunnerConfig, props: object, model_path: Path | None) -> list[str]:
    """Differences between a /props answer and `config`, as short phrases."""
    differences = []
    said = Props.read(props)
    declared = config.concurrent_runs
    if said.slots is not None and isinstance(declared, int) and said.slots != declared:
        differences.append(f"it serves {said.slots} slot(s), concurrent_runs is {declared}")
    if said.window is not None and said.window != config.window:
        differences.append(f"its context per slot is {said.window}, window is {config.window}")
    served = said.model_path
    if served and model_path is not None and Path(served).name != model_path.name:
        differences.append(f"it serves {served}, the config's model is {model_path}")
    return differences


def production_drift(config: RunnerConfig) -> list[str]:
    """What production's /props says that differs from the config; nothing when production
    does not say (not running)."""
    from .models import resolve_gguf

    try:
        answer = http_get(config.production.rstrip("/") + "/props")
    except RunnerError:
        return []
    if answer.status != 200:
        return []
    try:
        model_path: Path | None = resolve_gguf(config.model)
    except RunnerNotFound:
        model_path = None
    return props_drift(config, answer.body, model_path)
