"""Where production shows its own settings, what differs from the config.

llama-server says on /props how many slots it serves (`total_slots`), the context of each
(`default_generation_settings.n_ctx`) and the model file (`model_path`). A production started
with other values than the config's serves something the evidence did not measure; doctor and
calibrate say so. Ollama does not show its settings over HTTP; its environment is read instead
(`settings`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import RunnerError, RunnerNotFound
from ..contract import RunnerConfig
from ..local_http import as_dict, http_get
from .identify import slots_from_props


def window_from_props(props: Any) -> int | None:
    """The context per slot: /props `default_generation_settings.n_ctx`."""
    n_ctx = as_dict(as_dict(props).get("default_generation_settings")).get("n_ctx")
    return n_ctx if isinstance(n_ctx, int) and not isinstance(n_ctx, bool) else None


def props_drift(config: RunnerConfig, props: Any, model_path: Path | None) -> list[str]:
    """Differences between a /props answer and `config`, as short phrases."""
    differences = []
    slots = slots_from_props(props)
    declared = config.concurrent_runs
    if slots is not None and isinstance(declared, int) and slots != declared:
        differences.append(f"it serves {slots} slot(s), concurrent_runs is {declared}")
    window = window_from_props(props)
    if window is not None and window != config.window:
        differences.append(f"its context per slot is {window}, window is {config.window}")
    served = as_dict(props).get("model_path")
    named = isinstance(served, str) and bool(served) and model_path is not None
    if named and model_path is not None and Path(str(served)).name != model_path.name:
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
