"""Is a llama.cpp server (or the simulated runner, which speaks its API) busy right now?
Polled once a second.

A calibration step taken while production works is not clean (design §5, Clean steps). Each
poll is one or two short GETs with a timeout of at most a second; a production runner that does
not answer is reported as unreachable and not busy, with the reason.
"""

from __future__ import annotations

from ....errors import RunnerError
from ....interfaces.slots_interface import ProductionState
from ...http.local_http import HttpAnswer, http_get
from .wire import served_models, slots_processing

POLL_TIMEOUT_S = 1.0


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
        return served_models(answer.body) if answer.status == 200 else ()

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
        busy = slots_processing(slots.body)
        if slots.status != 200 or busy is None:
            return ProductionState(
                reachable=True,
                busy=None,
                models=models,
                reason=f"{self.base_url}/slots answered {slots.status}; start it with --slots",
            )
        return ProductionState(reachable=True, busy=busy, models=models)


class NoWatch:
    """For a setup without a production runner: never busy."""

    def poll(self) -> ProductionState:
        return ProductionState(
            reachable=False, busy=False, reason="no production runner is watched"
        )
