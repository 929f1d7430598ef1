"""The Ollama runner: a calibration `ollama serve` of its own beside production.

It runs with production's own settings and shares its model store (OLLAMA_MODELS), never
the rest of the shell's environment (`settings.calibration_base_env`), but never prunes the
store (OLLAMA_NOPRUNE), keeps one model loaded forever, logs at debug level so unloads and evictions
show, and sizes every slot to the window. Turns go to /api/chat with truncate and shift off and
the same num_ctx every time (a different one would reload the model mid-step).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import httpx

from ..clock import SYSTEM_CLOCK, Clock
from ..errors import RunnerError
from ..interfaces.slots_interface import (
    ChatSettings,
    RunnerInfo,
    RunnerLaunch,
    TurnResult,
)
from .cancel import cancel_connections_to
from .identify import identify_ollama
from .local_http import as_dict
from .openai_api import (
    answered_turn,
    decode_body,
    error_message,
    failed_answer,
    post_turn,
)
from .openai_api import is_over_window as llama_server_over_window
from .process import LOOPBACK, ChildProcess, ensure_port_free, find_executable
from .settings import ProductionSettings, calibration_base_env
from .watchdog import watched_argv

KIND = "ollama"
BINARY = "ollama"
PRELOAD_TIMEOUT_S = 600.0

# Ollama's own wording of a prompt longer than num_ctx (runners.md §4): era B's runner, and
# era C's rendered path; era C's native path forwards llama-server's error (matched separately).
OLLAMA_OVER_WINDOW_PHRASES = (
    "the input length exceeds the context length",
    "the prompt is longer than the context length",
)


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


def chat_payload(
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    settings: ChatSettings,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "stream": False,
        "truncate": False,
        "shift": False,
        "options": {
            "num_ctx": settings.window,
            "temperature": settings.temperature,
            "seed": settings.seed,
            "num_predict": settings.max_tokens,
        },
    }
    if tools:
        payload["tools"] = tools
    return payload


def unwrap_error(body: Any) -> str:
    """Ollama's error text; era C wraps llama-server's JSON error inside the string."""
    text = error_message(body, "no message")
    if text.startswith("{"):
        try:
            inner = json.loads(text)
        except ValueError:
            return text
        return error_message(inner, text)
    return text


def is_over_window(body: Any) -> bool:
    text = error_message(body).lower()
    if any(phrase in text for phrase in OLLAMA_OVER_WINDOW_PHRASES):
        return True
    if "exceed_context_size_error" in text:
        return True
    return llama_server_over_window(body) or llama_server_over_window({"error": unwrap_error(body)})


def parse_chat(status: int, body: Any, started: float, ended: float) -> TurnResult:
    """Turn one /api/chat answer (stream false) into a TurnResult."""
    failure = failed_answer(status, body, started, ended, is_over_window, unwrap_error)
    if failure is not None:
        return failure
    return answered_turn(
        status,
        body.get("done_reason"),
        body.get("prompt_eval_count"),
        body.get("eval_count"),
        as_dict(body.get("message")),
        started,
        ended,
    )


def find_binary(configured: str | None) -> str:
    return find_executable(configured, BINARY)


class OllamaClient:
    """The HTTP side of one Ollama server: readiness, preload, chat. Thread-safe."""

    def __init__(
        self,
        base_url: str,
        model: str,
        window: int,
        clock: Clock = SYSTEM_CLOCK,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.window = window
        self._clock = clock
        self._client = httpx.Client(transport=transport, trust_env=False)

    def answers(self) -> bool:
        try:
            return self._client.get(self.base_url + "/api/version", timeout=1.0).status_code == 200
        except httpx.HTTPError:
            return False

    def preload(self) -> float:
        """Load the model with an empty chat (done_reason "load") at the window used later."""
        payload = chat_payload(self.model, [], None, ChatSettings(window=self.window))
        started = self._clock.monotonic()
        try:
            response = self._client.post(
                self.base_url + "/api/chat", json=payload, timeout=PRELOAD_TIMEOUT_S
            )
        except httpx.HTTPError as exc:
            raise RunnerError(f"loading {self.model} failed: {exc or type(exc).__name__}") from None
        seconds = self._clock.monotonic() - started
        body = decode_body(response)
        if response.status_code != 200:
            raise RunnerError(
                f"loading {self.model} failed: http {response.status_code}: {unwrap_error(body)}"
            )
        if as_dict(body).get("done_reason") != "load":
            raise RunnerError(f"loading {self.model} gave no load confirmation: {body!r:.200}")
        return seconds

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: ChatSettings,
    ) -> TurnResult:
        return post_turn(
            self._client,
            self.base_url + "/api/chat",
            chat_payload(self.model, messages, tools, settings),
            settings,
            parse_chat,
            self._clock.monotonic,
        )

    def close(self) -> None:
        self._client.close()


class OllamaServer:
    """A started calibration `ollama serve` (a RunningRunner)."""

    def __init__(
        self, child: ChildProcess, launch: RunnerLaunch, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        self.base_url = f"http://{LOOPBACK}:{launch.port}"
        self._port = launch.port
        self.log_path = child.log_path
        self.model = launch.model
        self._child = child
        self._clock = clock
        self._api = OllamaClient(self.base_url, launch.model, launch.window, clock)

    @property
    def pid(self) -> int | None:
        return self._child.pid

    def exit_code(self) -> int | None:
        """None while the runner's process runs."""
        return self._child.exit_code()

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        self._child.wait_ready(self._api.answers, timeout_s, self._clock)

    def preload(self) -> float:
        return self._api.preload()

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: ChatSettings,
    ) -> TurnResult:
        return self._api.chat(messages, tools, settings)

    def info(self) -> RunnerInfo:
        return identify_ollama(self.base_url, self.model)

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
        self, clock: Clock = SYSTEM_CLOCK, settings: ProductionSettings | None = None
    ) -> None:
        self._clock = clock
        self._settings = settings or ProductionSettings()

    def start(self, launch: RunnerLaunch) -> OllamaServer:
        binary = find_binary(launch.binary)
        ensure_port_free(launch.port)
        child = ChildProcess.start(
            watched_argv([binary, "serve"]),  # stops when the calibration that started it dies
            launch.log_path,
            name="ollama serve",
            env=ollama_env(launch, calibration_base_env(self._settings, os.environ)),
        )
        return OllamaServer(child, launch, self._clock)
