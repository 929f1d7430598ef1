"""Is the production runner holding (or busy with) a model right now? Polled once a second.

A calibration step taken while production works is not clean (design §5, Clean steps). Each
poll is one or two short GETs with a timeout of at most a second; a production runner that does
not answer is reported as unreachable and not busy, with the reason.
"""

from __future__ import annotations

from typing import Any

from ...errors import RunnerError
from ...interfaces.slots_interface import ProductionState
from ..local_http import HttpAnswer, http_get

POLL_TIMEOUT_S = 1.0


def _names(entries: Any, *keys: str) -> tuple[str, ...]:
    names: list[str] = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict):
            for key in keys:
                value = entry.get(key)
                if isinstance(value, str) and value:
                    names.append(value)
                    break
    return tuple(names)


class OllamaWatch:
    """Ollama holds a model when /api/ps lists one (loading models are listed too)."""

    def __init__(self, base_url: str, timeout_s: float = POLL_TIMEOUT_S) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = min(timeout_s, POLL_TIMEOUT_S)

    def poll(self) -> ProductionState:
        try:
            ps = http_get(self.base_url + "/api/ps", self.timeout_s)
            version_answer = http_get(self.base_url + "/api/version", self.timeout_s)
        except RunnerError as exc:
            return ProductionState(reachable=False, busy=False, reason=str(exc))
        version = version_answer.json_object().get("version")
        version = version if isinstance(version, str) else None
        if ps.status != 200:
            return ProductionState(
                reachable=True,
                busy=None,
                version=version,
                reason=f"{self.base_url}/api/ps answered {ps.status}",
            )
        models = _names(ps.json_object().get("models"), "name", "model")
        return ProductionState(reachable=True, busy=bool(models), models=models, version=version)


class LlamaServerWatch:
    """llama-server (or an embedded runner) is busy while loading or while a slot processes.

    Its model is always loaded, so "holds a model" means working: /health answers 503 while
    the model loads, and /slots marks each slot that is processing.
    """

    def __init__(self, base_url: str, timeout_s: float = POLL_TIMEOUT_S) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = min(timeout_s, POLL_TIMEOUT_S)

    def _get(self, path: str) -> HttpAnswer:
        return http_get(self.base_url + path, self.timeout_s)

    def _models(self) -> tuple[str, ...]:
        try:
            answer = self._get("/v1/models")
        except RunnerError:
            return ()
        return _names(answer.json_object().get("data"), "id") if answer.status == 200 else ()

    def poll(self) -> ProductionState:
        try:
            health = self._get("/health")
            if health.status == 503:
                return ProductionState(
                    reachable=True, busy=True, reason=f"{self.base_url} is loading a model"
                )
            slots = self._get("/slots")
        except RunnerError as exc:
            return ProductionState(reachable=False, busy=False, reason=str(exc))
        models = self._models()
        if slots.status != 200 or not isinstance(slots.body, list):
            return ProductionState(
                reachable=True,
                busy=None,
                models=models,
                reason=f"{self.base_url}/slots answered {slots.status}; start it with --slots",
            )
        busy = any(isinstance(s, dict) and s.get("is_processing") for s in slots.body)
        return ProductionState(reachable=True, busy=busy, models=models)


class NoWatch:
    """For a setup without a production runner: never busy."""

    def poll(self) -> ProductionState:
        return ProductionState(
            reachable=False, busy=False, reason="no production runner is watched"
        )
