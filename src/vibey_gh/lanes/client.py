"""The lanes' chat client for the production runner named by `[local_models]`.

Embedded and llama-server production speak llama.cpp's OpenAI-compatible API
(`runners.openai_api`). Ollama is asked through /api/chat with the calibrated window as
`num_ctx` and truncation and context shift off (`runners.ollama`), so a lane's turns are served
the way the calibration measured them. Lanes keep their messages in OpenAI format — the format
their records and the corpus hold — and only the Ollama client turns tool-call arguments into
the JSON objects Ollama expects, on the way out.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from typing import Any, Protocol

from ..config import LocalModels
from ..interfaces.slots_interface import ChatSettings, TurnResult


class ChatClient(Protocol):
    """What a lane needs of a runner: one request per turn, and a close."""

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: ChatSettings,
    ) -> TurnResult: ...

    def close(self) -> None: ...


def ollama_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy with every tool call's `arguments` decoded to an object (Ollama's own form)."""
    converted = copy.deepcopy(messages)
    for message in converted:
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                try:
                    decoded = json.loads(function["arguments"] or "{}")
                except json.JSONDecodeError:
                    continue
                if isinstance(decoded, dict):
                    function["arguments"] = decoded
    return converted


class OllamaChatClient:
    """Chat with a running Ollama (production) through /api/chat."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        transport: Any = None,
        monotonic: Callable[[], float] | None = None,
    ) -> None:
        import httpx

        self.base_url = base_url.rstrip("/")
        self.model = model
        self._client = httpx.Client(transport=transport, trust_env=False)
        self._monotonic = monotonic or time.monotonic

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: ChatSettings,
    ) -> TurnResult:
        from ..runners.ollama import chat_payload, parse_chat
        from ..runners.openai_api import post_turn

        payload = chat_payload(self.model, ollama_messages(messages), tools, settings)
        return post_turn(
            self._client,
            self.base_url + "/api/chat",
            payload,
            settings,
            parse_chat,
            self._monotonic,
        )

    def close(self) -> None:
        self._client.close()


def production_client(config: LocalModels) -> ChatClient:
    """A chat client for the configured production runner (`production_url`)."""
    if config.runner == "ollama":
        return OllamaChatClient(config.production, config.model)
    from ..runners.openai_api import OpenAIChatClient

    return OpenAIChatClient(config.production)


def runner_description(config: LocalModels) -> dict[str, Any]:
    """How a lane record names the runner it talked to."""
    return {"kind": config.runner, "url": config.production, "model": config.model}
