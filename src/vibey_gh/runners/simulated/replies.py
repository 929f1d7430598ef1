"""What the simulated server answers, in llama.cpp's wire format (`llamacpp/wire.py`): a chat
completion, the chunks of a streamed one, the counts llama-server reports with them, errors."""

from __future__ import annotations

import json

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


def completion(answer: Answer, prompt: int, cached: int, slot: int) -> ChatCompletion:
    """An unstreamed answer: its text, or (content null) its tool call; `cached`: the prompt
    tokens the slot's cache held."""
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
        "timings": timings_of(prompt, cached, answer),
    }


def usage_of(prompt: int, cached: int, answer: Answer) -> Usage:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": answer.output_tokens,
        "total_tokens": prompt + answer.output_tokens,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def timings_of(prompt: int, cached: int, answer: Answer) -> Timings:
    """llama-server's counts: `cache_n` reused, `prompt_n` read, `predicted_n` written."""
    return {"cache_n": cached, "prompt_n": prompt - cached, "predicted_n": answer.output_tokens}


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
