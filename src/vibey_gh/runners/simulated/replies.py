"""What the simulated server answers, in llama.cpp's wire format (`llamacpp/wire.py`): a chat
completion, the chunks of a streamed one, the counts llama-server reports with them, errors."""

from __future__ import annotations

import json
from typing import NamedTuple

from ..http.openai_wire import (
    AnswerMessage,
    ChatChunk,
    ChatCompletion,
    ErrorReply,
    Timings,
    Usage,
)
from ..http.wire import JsonObject
from .model import KIND, Answer


def completion(answer: Answer, prompt: int, cached: int, slot: int, spent: Spent) -> ChatCompletion:
    """An unstreamed answer: its text, or (content null) its tool call; `cached`: the prompt
    tokens the slot's cache held; `spent`: the seconds reading and writing took."""
    message: AnswerMessage = {"role": "assistant", "content": answer.text}
    if answer.tool_name is not None:
        message["content"] = None
        message["tool_calls"] = [
            {
                "type": "function",
                "id": f"call_{slot}",
                "function": {
                    "name": answer.tool_name,
                    "arguments": json.dumps(answer.tool_arguments, sort_keys=True),
                },
            }
        ]
    return {
        "object": "chat.completion",
        "model": KIND,
        "choices": [{"index": 0, "finish_reason": answer.finish_reason, "message": message}],
        "usage": usage_of(prompt, cached, answer),
        "timings": timings_of(prompt, cached, answer, spent),
    }


def usage_of(prompt: int, cached: int, answer: Answer) -> Usage:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": answer.output_tokens,
        "total_tokens": prompt + answer.output_tokens,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


class Spent(NamedTuple):
    """Seconds the server spent on a turn, by its own clock: reading the prompt up to the
    first token (llama.cpp samples it from the prompt's last batch), then writing the rest."""

    read_s: float
    write_s: float


def timings_of(prompt: int, cached: int, answer: Answer, spent: Spent) -> Timings:
    """llama-server's counts and times: `cache_n` reused, `prompt_n` read in `prompt_ms`,
    `predicted_n` written in `predicted_ms`, with the rates it derives from them. The times
    are what the turn took on this server's clock under the capacity model, sharing included,
    as llama-server times its own slots."""
    read, predicted = prompt - cached, answer.output_tokens
    prompt_ms, predicted_ms = spent.read_s * 1000.0, spent.write_s * 1000.0
    return {
        "cache_n": cached,
        "prompt_n": read,
        "prompt_ms": prompt_ms,
        "prompt_per_token_ms": prompt_ms / read if read else 0.0,
        "prompt_per_second": read / spent.read_s if spent.read_s > 0 else 0.0,
        "predicted_n": predicted,
        "predicted_ms": predicted_ms,
        "predicted_per_token_ms": predicted_ms / predicted if predicted else 0.0,
        "predicted_per_second": predicted / spent.write_s if spent.write_s > 0 else 0.0,
    }


def chunk_of(
    choices: list[JsonObject], *, usage: Usage | None = None, timings: Timings | None = None
) -> ChatChunk:
    chunk: ChatChunk = {"object": "chat.completion.chunk", "model": KIND, "choices": choices}
    if usage is not None:
        chunk["usage"] = usage
    if timings is not None:
        chunk["timings"] = timings
    return chunk


def error_reply(code: int, message: str, kind: str) -> ErrorReply:
    return {"error": {"code": code, "message": message, "type": kind}}
