"""The lanes' chat client for the production runner named by `[local_models]`.

It is the runner kind's one chat client (`RunnerKind.chat_client`), the same one the
calibration measures with: llama.cpp's OpenAI-compatible API for embedded and llama-server,
Ollama's /api/chat with the calibrated window as `num_ctx` and truncation and context shift off.
Lanes keep their messages in OpenAI format — the format their records and the corpus hold — and
the Ollama client turns them into Ollama's own on the way out.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from ..config import LocalModels
from ..runners.cancel import cancel_connections_to
from ..runners.contract import ChatClient as ChatClient  # what a lane needs of a runner
from ..runners.registry import runner_kind


def production_client(config: LocalModels) -> ChatClient:
    """A chat client for the configured production runner (`production_url`)."""
    return runner_kind(config.runner).chat_client(config.production, config.model)


def runner_description(config: LocalModels) -> dict[str, object]:
    """How a lane record names the runner it talked to."""
    return {"kind": config.runner, "url": config.production, "model": config.model}


# On a stop, a lane gets this long to end at its turn's end; a turn still in flight is then
# cancelled, so a stop ends within seconds whatever production does (a request may wait 600 s).
STOP_GRACE_S = 5.0


def cancel_production_requests(config: LocalModels) -> int:
    """Cancel this process's requests in flight to production (a storm's lanes when it stops):
    their connections are shut down, which wakes a reader blocked on a runner that drips a
    byte at a time. Returns how many."""
    try:
        url = urlsplit(config.production)
        host, port = url.hostname, url.port or (443 if url.scheme == "https" else 80)
    except ValueError:
        return 0
    return cancel_connections_to(port, host) if host else 0
