"""Is the production Ollama holding a model right now? Polled once a second.

A calibration step taken while production works is not clean (design §5, Clean steps). Each
poll is two short GETs (/api/ps, /api/version) with a timeout of at most a second; an Ollama
that does not answer is reported as unreachable and not busy, with the reason.
"""

from __future__ import annotations

from ...errors import RunnerError
from ...interfaces.slots_interface import ProductionState
from ..http.local_http import http_get
from .wire import loaded_models, said_version

POLL_TIMEOUT_S = 1.0


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
        version = said_version(version_answer.body)
        if ps.status != 200:
            return ProductionState(
                reachable=True,
                busy=None,
                version=version,
                reason=f"{self.base_url}/api/ps answered {ps.status}",
            )
        models = loaded_models(ps.body)
        return ProductionState(reachable=True, busy=bool(models), models=models, version=version)
