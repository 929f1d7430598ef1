"""Who a llama.cpp production runner is: kind, version and model digest, starting nothing.

Each llama.cpp kind's `identify_production` (`kinds`) calls its function here.

`slots allowed` asks this on every decision, so it speaks to production through the small
socket GET of `local_http` and never imports an adapter (httpx, llama.cpp, process handling).
The embedded runner is identified from the installed package and the model file; its
production (`vibey-gh runner serve`) is asked only for the slots it serves, one GET of /props
that a production not running refuses at once.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec.structs import replace

from ...errors import RunnerError, RunnerNotFound
from ...interfaces.identity import RunnerInfo
from ...state import StateLayout
from ..builds import production_version
from ..contract import ProductionSettings, RunnerConfig
from ..digest import gguf_digest
from ..http.local_http import http_get
from .models import embedded_version, resolve_gguf
from .settings import runner_args_settings

if TYPE_CHECKING:
    from .api.wire import Props


def identify_embedded(config: RunnerConfig, state: StateLayout | None = None) -> RunnerInfo:
    """The installed xllamacpp and the GGUF's sha256."""
    version = embedded_version()
    info = gguf_identity(config, version, state)
    if version is None:
        info.missing["version"] = "the xllamacpp package is not installed"
    return replace(info, serving_slots=served_slots(config.production))


# production answers on 127.0.0.1 at once, or not at all: `slots allowed` never waits on it
PROPS_TIMEOUT_S = 1.0


def served_slots(base_url: str | None) -> int | None:
    """The slots a production serving llama.cpp's API (`vibey-gh runner serve`, embedded or
    simulated) says it serves (`total_slots` of /props); None when it does not answer or say.
    Without it a gate would say production's parallelism is unknown while production answers."""
    if not base_url:
        return None
    try:
        answer = http_get(base_url.rstrip("/") + "/props", timeout_s=PROPS_TIMEOUT_S)
    except RunnerError:
        return None
    slots = answer.body.get("total_slots") if isinstance(answer.body, dict) else None
    if answer.status != 200 or isinstance(slots, bool) or not isinstance(slots, int):
        return None
    return slots if slots > 0 else None


def identify_llama_server(config: RunnerConfig, state: StateLayout | None = None) -> RunnerInfo:
    """Production's /props build and slots, the GGUF's sha256 and the config's runner_args;
    RunnerError when production does not say its build."""
    props = _llama_server_props(config.production)
    settings = runner_args_settings(config.runner_args)
    version, unkeyed = production_version(props.build, config.production, state)
    info = gguf_identity(config, version, state, settings)
    if unkeyed is not None:
        info.missing["version"] = unkeyed
    return replace(info, serving_slots=props.slots)


def gguf_identity(
    config: RunnerConfig,
    version: str | None,
    state: StateLayout | None = None,
    settings: ProductionSettings | None = None,
) -> RunnerInfo:
    """A llama.cpp runner's identity: `version`, the GGUF's path and sha256, its `settings`
    (llama-server's runner_args; none for the embedded runner)."""
    model_path = resolve_gguf(config.model)
    settings = settings or ProductionSettings()
    return RunnerInfo(
        config.runner,
        version,
        str(model_path),
        gguf_digest(model_path, state),
        settings=settings.fingerprinted,
        settings_source=settings.source or None,
    )


def read_props(body: object) -> Props:
    """A /props answer, typed."""
    # lazy: llama.cpp's wire types are loaded for llama-server alone; the embedded and simulated
    # kinds' gates read only /props' total_slots
    from .api.wire import Props

    return Props.read(body)


def _llama_server_props(base_url: str) -> Props:
    answer = http_get(base_url.rstrip("/") + "/props")
    props = read_props(answer.body)
    if answer.status != 200 or props.build is None:
        raise RunnerError(
            f"llama-server at {base_url} gave no build_info on /props (http {answer.status})"
        )
    return props


def slots_from_props(props: object) -> int | None:
    """The slots a llama-server serves: `total_slots` of /props."""
    return read_props(props).slots


def version_from_props(props: object) -> str | None:
    """llama-server's version is the `build_info` of /props, e.g. "b4747-2d219b38"."""
    return read_props(props).build


# llama-server's version read from its binary, spelled as /props spells it, so the same build
# gives the same fingerprint whether production runs or not:
#   "version: 4747 (2d219b38)"                   -> "b4747-2d219b38"
#   "version: 0.6.0-dev (build 11434, commit x)" -> "b11434-x"

_LLAMA_OLD = re.compile(r"version:\s*(\d+)\s*\(([^)\s]+)\)")
_LLAMA_NEW = re.compile(r"\(build\s+(\d+),\s*commit\s+([^)\s]+)\)")


def llama_server_version(text: str) -> str | None:
    """`llama-server --version` output as /props spells build_info ("b4747-2d219b38")."""
    match = _LLAMA_NEW.search(text) or _LLAMA_OLD.search(text)
    return f"b{match.group(1)}-{match.group(2)}" if match else None


# Where production shows its own settings, what differs from the config. llama-server says on
# /props how many slots it serves (`total_slots`), the context of each
# (`default_generation_settings.n_ctx`) and the model file (`model_path`). A production started
# with other values than the config's serves something the evidence did not measure; doctor and
# calibrate say so. Ollama does not show its settings over HTTP; its environment is read instead.


def window_from_props(props: object) -> int | None:
    """The context per slot: /props `default_generation_settings.n_ctx`."""
    return read_props(props).window


def props_drift(config: RunnerConfig, props: object, model_path: Path | None) -> list[str]:
    """Differences between a /props answer and `config`, as short phrases."""
    differences = []
    said = read_props(props)
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


class LlamaCppIdentity:
    """Who a llama.cpp runner is, what it serves and where its model file is, as the kinds ask
    it: `kinds.identity()` loads this module the first time a kind is asked, so a declared
    answer never does."""

    identify_embedded = staticmethod(identify_embedded)
    identify_llama_server = staticmethod(identify_llama_server)
    gguf_identity = staticmethod(gguf_identity)
    embedded_version = staticmethod(embedded_version)
    resolve_gguf = staticmethod(resolve_gguf)
    served_slots = staticmethod(served_slots)
    production_drift = staticmethod(production_drift)


IDENTITY = LlamaCppIdentity()
