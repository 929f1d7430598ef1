"""llama.cpp's wire formats, typed: the chat request this package sends to
/v1/chat/completions, and what it reads of the status answers (/props, /slots, /v1/models).

Answers are read through `runners/http/wire.py`'s lenient reads: a field of the wrong type reads as
absent. The chat answer and its streamed chunks are read in `openai_api`.
"""

from __future__ import annotations

from typing import TypedDict

import msgspec

from ...http.wire import (
    JsonObject,
    Messages,
    ToolSpecs,
    as_object,
    count_or_none,
    field,
    names_in,
    text_or_none,
)


class StreamOptions(TypedDict):
    include_usage: bool


class _ChatRequestBase(TypedDict):
    messages: Messages
    stream: bool
    temperature: float
    seed: int
    max_tokens: int


class ChatRequest(_ChatRequestBase, total=False):
    """POST /v1/chat/completions: the deterministic settings of design §5; `stream_options`
    only when streamed, `tools` only when the turn offers any."""

    stream_options: StreamOptions
    tools: ToolSpecs


class Props(msgspec.Struct, frozen=True):
    """What /props says of a llama.cpp server: its build (`build_info`, e.g. "b4747-2d219b38"),
    the slots it serves (`total_slots`), each slot's context
    (`default_generation_settings.n_ctx`) and its model file (`model_path`); None where it does
    not say, or says it in another type."""

    build: str | None
    slots: int | None
    window: int | None
    model_path: str | None

    @classmethod
    def read(cls, body: object) -> Props:
        build = text_or_none(field(body, "build_info"))
        slots = count_or_none(field(body, "total_slots"))
        window = count_or_none(field(field(body, "default_generation_settings"), "n_ctx"))
        return cls(
            build.strip() if build and build.strip() else None,
            slots if slots is not None and slots > 0 else None,
            window,
            text_or_none(field(body, "model_path")),
        )


def slots_processing(body: object) -> bool | None:
    """Whether any slot of a /slots answer is processing; None when the answer is no list."""
    if not isinstance(body, list):
        return None
    return any(bool(as_object(slot).get("is_processing")) for slot in body)


def served_models(body: object) -> tuple[str, ...]:
    """The model ids of a /v1/models answer (`data[].id`)."""
    return names_in(field(body, "data"), "id")


# --- what a llama.cpp server answers, as the simulated runner (which speaks this API) writes it


class GenerationSettings(TypedDict):
    n_ctx: int
    params: JsonObject


class PropsReply(TypedDict):
    """GET /props."""

    default_generation_settings: GenerationSettings
    total_slots: int
    model_alias: str
    model_path: str
    endpoint_slots: bool
    build_info: str


class SlotReply(TypedDict):
    """One slot of GET /slots."""

    id: int
    n_ctx: int
    speculative: bool
    is_processing: bool


class PromptDetails(TypedDict):
    cached_tokens: int


class Usage(TypedDict):
    """OpenAI's counts; `prompt_tokens_details.cached_tokens`: prompt tokens a slot's cache
    held (llama-server fills it)."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    prompt_tokens_details: PromptDetails


class Timings(TypedDict):
    """llama-server's own counts: `cache_n` reused, `prompt_n` read, `predicted_n` written."""

    cache_n: int
    prompt_n: int
    predicted_n: int


class AnswerMessage(TypedDict, total=False):
    """The assistant's message in a chat answer: its text, or (content null) its tool calls."""

    role: str
    content: str | None
    tool_calls: list[JsonObject]


class AnswerChoice(TypedDict):
    index: int
    finish_reason: str
    message: AnswerMessage


class ChatCompletion(TypedDict):
    """POST /v1/chat/completions, unstreamed."""

    object: str
    model: str
    choices: list[AnswerChoice]
    usage: Usage
    timings: Timings


class _ChatChunkBase(TypedDict):
    object: str
    model: str
    choices: list[JsonObject]


class ChatChunk(_ChatChunkBase, total=False):
    """One server-sent event of a streamed answer: `timings` on the one with the finish
    reason, `usage` on a last one of its own when asked for."""

    usage: Usage
    timings: Timings


class ErrorDetail(TypedDict):
    code: int
    message: str
    type: str


class ErrorReply(TypedDict):
    """An error answer: `type` "exceed_context_size_error" for a prompt over the window."""

    error: ErrorDetail
