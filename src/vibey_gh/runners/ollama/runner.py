"""The Ollama runner: a calibration `ollama serve` of its own beside production.

It runs with production's own settings and shares its model store (OLLAMA_MODELS), never
the rest of the shell's environment (`settings.calibration_base_env`), but never prunes the
store (OLLAMA_NOPRUNE), keeps one model loaded forever, logs at debug level so unloads and evictions
show, and sizes every slot to the window. Turns go to /api/chat with truncate and shift off and
the same num_ctx every time (a different one would reload the model mid-step).

Its turns go through `chat.OllamaChatClient`, as the lanes' production client's do.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from msgspec.structs import replace

from ...clock import SYSTEM_CLOCK, Clock
from ...interfaces.slots_interface import ChatSettings, RunnerInfo, RunnerLaunch, TurnResult
from ...state import StateLayout
from ..builds import keyed_to_binary
from ..cancel import cancel_connections_to
from ..contract import ProductionSettings
from ..http.wire import Messages, ToolSpecs
from ..process import LOOPBACK, ChildProcess, ChildServer, ensure_port_free, find_executable
from ..watchdog import watched_argv
from .chat import OllamaChatClient
from .identify import identify_ollama
from .settings import calibration_base_env

KIND = "ollama"
BINARY = "ollama"


def ollama_env(launch: RunnerLaunch, base_env: Mapping[str, str]) -> dict[str, str]:
    """The calibration server's environment: `base_env` (production's settings and model
    store), then ours."""
    env = dict(base_env)
    env.update(
        {
            "OLLAMA_HOST": f"{LOOPBACK}:{launch.port}",
            "OLLAMA_NUM_PARALLEL": str(launch.slots),
            "OLLAMA_NOPRUNE": "1",
            "OLLAMA_CONTEXT_LENGTH": str(launch.window),
            "OLLAMA_DEBUG": "1",
            "OLLAMA_KEEP_ALIVE": "-1",
            "OLLAMA_MAX_LOADED_MODELS": "1",
        }
    )
    env.update(launch.extra_env)
    return env


def find_binary(configured: str | None) -> str:
    return find_executable(configured, BINARY)


class OllamaServer(ChildServer):
    """A started calibration `ollama serve` (a RunningRunner)."""

    def __init__(
        self,
        child: ChildProcess,
        launch: RunnerLaunch,
        clock: Clock = SYSTEM_CLOCK,
        binary: str | None = None,
        state: StateLayout | None = None,
    ) -> None:
        self.base_url = f"http://{LOOPBACK}:{launch.port}"
        self._binary = binary
        self._state = state
        self._port = launch.port
        self.log_path = child.log_path
        self.model = launch.model
        self._child = child
        self._clock = clock
        self._api = OllamaChatClient(self.base_url, launch.model, launch.window, clock)

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        self._child.wait_ready(self._api.answers, timeout_s, self._clock)

    def preload(self) -> float:
        return self._api.preload()

    def chat(self, messages: Messages, tools: ToolSpecs, settings: ChatSettings) -> TurnResult:
        return self._api.chat(messages, tools, settings)

    def info(self) -> RunnerInfo:
        """What it says of itself; a development build's version ("0.0.0") keyed to the binary
        it was started from, as production's and the calibration binary's are."""
        info = identify_ollama(self.base_url, self.model)
        if self._binary is None:
            return info
        return replace(info, version=keyed_to_binary(info.version, self._binary, self._state))

    def stop(self) -> None:
        """Cancel the turns in flight first (Ollama stops a generation whose client went
        away), then stop the server; see `cancel`."""
        try:
            cancel_connections_to(self._port)
            self._api.close()
        finally:
            self._child.stop()


class OllamaRunner:
    kind = KIND

    def __init__(
        self,
        clock: Clock = SYSTEM_CLOCK,
        settings: ProductionSettings | None = None,
        state: StateLayout | None = None,
    ) -> None:
        self._clock = clock
        self._settings = settings or ProductionSettings()
        self._state = state

    def start(self, launch: RunnerLaunch) -> OllamaServer:
        binary = find_binary(launch.binary)
        ensure_port_free(launch.port)
        child = ChildProcess.start(
            watched_argv([binary, "serve"]),  # stops when the calibration that started it dies
            launch.log_path,
            name="ollama serve",
            env=ollama_env(launch, calibration_base_env(self._settings, os.environ)),
        )
        return OllamaServer(child, launch, self._clock, binary, self._state)
