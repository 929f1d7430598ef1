"""OpenAI's chat wire format, typed, as every server that speaks it takes and answers it: the
request this package sends to /v1/chat/completions, and the answer, its streamed chunks and an
error as the simulated runner writes them (llama-server adds `timings` and the usage's
`prompt_tokens_details`; a server that leaves them out is read the same, `openai_chat`).
"""

from __future__ import annotations

from typing import TypedDict

from .wire import JsonObject, Messages, ToolSpecs


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
    """llama-server's own counts and times: `cache_n` reused, `prompt_n` read in `prompt_ms`,
    `predicted_n` written in `predicted_ms`, and the rates derived from them."""

    cache_n: int
    prompt_n: int
    prompt_ms: float
    prompt_per_token_ms: float
    prompt_per_second: float
    predicted_n: int
    predicted_ms: float
    predicted_per_token_ms: float
    predicted_per_second: float


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
