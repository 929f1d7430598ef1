"""The lanes' chat client for the production runner named by `[local_models]`.

It is the runner kind's one chat client (`runners.registry.chat_client`), the same one the
calibration measures with: llama.cpp's OpenAI-compatible API for embedded and llama-server,
Ollama's /api/chat with the calibrated window as `num_ctx` and truncation and context shift off.
Lanes keep their messages in OpenAI format — the format their records and the corpus hold — and
the Ollama client turns them into Ollama's own on the way out.
"""

from __future__ import annotations

from ..config import LocalModels
from ..runners.contract import ChatClient as ChatClient  # what a lane needs of a runner


def production_client(config: LocalModels) -> ChatClient:
    """A chat client for the configured production runner (`production_url`)."""
    from ..runners.registry import chat_client

    return chat_client(config.runner, config.production, config.model)


def runner_description(config: LocalModels) -> dict[str, object]:
    """How a lane record names the runner it talked to."""
    return {"kind": config.runner, "url": config.production, "model": config.model}
