"""A started llama.cpp server (embedded or llama-server): ready check, chat, identity, stop.

Both kinds speak the same HTTP API; they differ only in how they are started and how their
version is read, which the caller passes in.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx

from ...clock import SYSTEM_CLOCK, Clock
from ...errors import VibeyError
from ...interfaces.slots_interface import ChatSettings, RunnerInfo, TurnResult
from ...state import StateLayout
from ..cancel import cancel_connections_to
from ..digest import gguf_digest
from ..http.openai_chat import OpenAIChatClient
from ..http.wire import Messages, ToolSpecs
from ..process import LOOPBACK, STOP_GRACE_S, ChildProcess, ChildServer

HEALTH_PATH = "/health"


class LlamaCppServer(ChildServer):
    """A RunningRunner for a llama.cpp HTTP server in a child process.

    The model loads while the server starts, so `wait_ready` is the load and `preload` only
    reports how long that took.
    """

    def __init__(
        self,
        *,
        kind: str,
        child: ChildProcess,
        port: int,
        model_path: Path,
        version: Callable[[str], str | None],
        state: StateLayout | None = None,
        clock: Clock = SYSTEM_CLOCK,
        transport: httpx.BaseTransport | None = None,
        stop_grace_s: float = STOP_GRACE_S,
    ) -> None:
        self.kind = kind
        self.base_url = f"http://{LOOPBACK}:{port}"
        self._port = port
        self.log_path = child.log_path
        self.model_path = model_path
        self._child = child
        self._version = version
        self._state = state
        self._clock = clock
        self._chat = OpenAIChatClient(
            self.base_url, transport=transport, monotonic=clock.monotonic, runner_name=kind
        )
        self._probe = httpx.Client(transport=transport, trust_env=False, timeout=1.0)
        self._ready_s: float | None = None
        self._stop_grace_s = stop_grace_s

    def _healthy(self) -> bool:
        try:
            return self._probe.get(self.base_url + HEALTH_PATH).status_code == 200
        except httpx.HTTPError:
            return False

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        self._wait(timeout_s)

    def _wait(self, timeout_s: float) -> float:
        if self._ready_s is None:
            self._ready_s = self._child.wait_ready(self._healthy, timeout_s, self._clock)
        return self._ready_s

    def preload(self) -> float:
        return self._wait(120.0)

    def chat(
        self,
        messages: Messages,
        tools: ToolSpecs,
        settings: ChatSettings,
    ) -> TurnResult:
        return self._chat.chat(messages, tools, settings)

    def info(self) -> RunnerInfo:
        missing: dict[str, str] = {}
        version = self._version(self.base_url)
        if version is None:
            missing["version"] = f"{self.kind} at {self.base_url} did not say its version"
        digest: str | None
        try:
            digest = gguf_digest(self.model_path, self._state)
        except (VibeyError, OSError) as exc:
            digest = None
            missing["model_digest"] = str(exc)
        return RunnerInfo(self.kind, version, str(self.model_path), digest, missing)

    def stop(self) -> None:
        """Cancel the turns in flight (their connections are closed, which the server notices
        and stops generating for), then stop the server: a busy one stops as fast as an idle
        one instead of finishing every answer first."""
        try:
            cancel_connections_to(self._port)
            self._chat.close()
            self._probe.close()
        finally:
            self._child.stop(self._stop_grace_s)
