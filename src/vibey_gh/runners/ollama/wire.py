"""Ollama's wire formats, typed: the /api/chat request this package sends, and what it reads of
the status answers (/api/version, /api/tags, /api/ps).

Answers are read through `runners/http/wire.py`'s lenient reads: a field of the wrong type reads as
absent. The chat answer and its streamed lines are read in `chat`.
"""

from __future__ import annotations

from typing import TypedDict

from ..http.wire import Messages, ToolSpecs, field, names_in, objects


class ChatOptions(TypedDict):
    """`api.Options` as Ollama's Go types want them: integers for num_ctx, seed and
    num_predict, a number for temperature."""

    num_ctx: int
    temperature: float
    seed: int
    num_predict: int


class _ChatRequestBase(TypedDict):
    model: str
    messages: Messages
    stream: bool
    truncate: bool
    shift: bool
    options: ChatOptions


class ChatRequest(_ChatRequestBase, total=False):
    """POST /api/chat: `stream` always said (Ollama streams when it is omitted), truncation and
    context shift off; `tools` only when the turn offers any."""

    tools: ToolSpecs


def version_of(body: object) -> str | None:
    """The version an /api/version answer names (`version`), when it is a non-empty string."""
    version = field(body, "version")
    return version if isinstance(version, str) and version else None


def said_version(body: object) -> str | None:
    """`version` of an /api/version answer when it is a string, even an empty one."""
    version = field(body, "version")
    return version if isinstance(version, str) else None


def loaded_models(body: object) -> tuple[str, ...]:
    """The models an /api/ps answer lists (loading ones included): `models[].name`, else
    `.model`."""
    return names_in(field(body, "models"), "name", "model")


def digest_from_tags(body: object, model: str) -> str | None:
    """The manifest digest of `model` in an /api/tags answer ("name" or "name:latest")."""
    wanted = {model} if ":" in model else {model, f"{model}:latest"}
    for entry in objects(field(body, "models")):
        if entry.get("name") in wanted or entry.get("model") in wanted:
            digest = entry.get("digest")
            return digest if isinstance(digest, str) and digest else None
    return None
