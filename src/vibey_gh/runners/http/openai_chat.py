"""The OpenAI-compatible chat client: llama.cpp's servers (embedded, llama-server) and the
simulated runner speak it, and so would any later kind that does (vLLM, SGLang, LM Studio).

One request per turn: POST /v1/chat/completions with the deterministic settings of design §5
(`openai_wire.ChatRequest`), streamed when the settings ask (a calibration's turns; reassembled by
`OpenAIChunks`), else not. Whatever comes back becomes a TurnResult (`chat_turns`), every
transport failure a failed turn, so a caller never sees a transport exception.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
from msgspec.structs import replace

from ...interfaces.slots_interface import ChatSettings, TurnResult
from ...interfaces.turns import RunnerTimings, reported
from .chat_turns import StreamedText, answered_turn, error_message, failed_answer, post_turn
from .openai_wire import ChatRequest
from .streaming import StreamFormat
from .wire import (
    JsonObject,
    Messages,
    ToolFunction,
    ToolSpecs,
    as_object,
    count_or_none,
    field,
    first_object,
)

CHAT_PATH = "/v1/chat/completions"

# How llama-server words a prompt longer than the slot, across versions (runners.md §9).
OVER_WINDOW_TYPE = "exceed_context_size_error"
OVER_WINDOW_PHRASES = ("exceeds the available context size", "exceed the context size")


def chat_payload(messages: Messages, tools: ToolSpecs, settings: ChatSettings) -> ChatRequest:
    payload: ChatRequest = {
        "messages": messages,
        "stream": settings.stream,
        "temperature": settings.temperature,
        "seed": settings.seed,
        "max_tokens": settings.max_tokens,
    }
    if settings.stream:
        payload["stream_options"] = {"include_usage": True}
    if tools:
        payload["tools"] = tools
    return payload


def is_over_window(body: object) -> bool:
    """True when an error body says the prompt does not fit the slot's window."""
    error = field(body, "error")
    if isinstance(error, dict) and error.get("type") == OVER_WINDOW_TYPE:
        return True
    text = error_message(body).lower()
    return any(phrase in text for phrase in OVER_WINDOW_PHRASES)


def parse_chat_completion(status: int, body: object, started: float, ended: float) -> TurnResult:
    """Turn one /v1/chat/completions answer (status and decoded body) into a TurnResult."""
    failure = failed_answer(
        status, body, started, ended, is_over_window, lambda b: error_message(b, "no message")
    )
    if failure is not None:
        return failure
    reply = as_object(body)  # an object: failed_answer refuses anything else
    choice = first_object(reply.get("choices"))
    usage = as_object(reply.get("usage"))
    answered = answered_turn(
        status,
        choice.get("finish_reason"),
        usage.get("prompt_tokens"),
        usage.get("completion_tokens"),
        as_object(choice.get("message")),
        started,
        ended,
    )
    return replace(
        answered,
        cached_tokens=cached_prompt_tokens(reply),
        runner_timings=llama_server_timings(reply.get("timings")),
    )


def llama_server_timings(timings: object) -> RunnerTimings:
    """llama-server's `timings` (`prompt_n` in `prompt_ms`, `predicted_n` in `predicted_ms`),
    each pair kept only when plausible; all None when there is no such object."""
    found = as_object(timings)
    prompt_tokens, prompt_s = reported(found.get("prompt_n"), found.get("prompt_ms"), 1000.0)
    output_tokens, output_s = reported(found.get("predicted_n"), found.get("predicted_ms"), 1000.0)
    return RunnerTimings(prompt_tokens, prompt_s, output_tokens, output_s)


def cached_prompt_tokens(body: JsonObject) -> int | None:
    """Prompt tokens the runner reused from its cache: `usage.prompt_tokens_details
    .cached_tokens` (OpenAI's field, which llama-server fills), else llama-server's
    `timings.cache_n`; None when the answer says neither."""
    cached = count_or_none(
        field(field(body.get("usage"), "prompt_tokens_details"), "cached_tokens")
    )
    if cached is None:
        cached = count_or_none(field(body.get("timings"), "cache_n"))
    return cached


# ---------------------------------------------------------------------------------------------
# Streamed answers. llama.cpp's server (embedded, llama-server, and the simulated runner that
# speaks its API) streams chat-completion chunks as server-sent events: `data: {json}` lines,
# then `data: [DONE]`. A chunk's `choices[0].delta` carries a piece of `content`, or
# `tool_calls` deltas keyed by `index`: the first delta of a call brings its `id`, `type` and
# `function.name`, later ones further pieces of `function.arguments` (a JSON text, split
# anywhere). The last choice chunk carries `finish_reason`; with `stream_options.include_usage`
# a final chunk with no choices carries `usage`, and llama.cpp adds `timings` to the last one.
# An error after the stream began comes as a chunk holding `error`.
# ---------------------------------------------------------------------------------------------

SSE_MEDIA_TYPE = "text/event-stream"
_DATA = b"data:"
_DONE = b"[DONE]"


def sse_payload(line: bytes) -> bytes | None:
    """The JSON text of a `data:` line; None for comments, other fields, blanks and [DONE]."""
    if not line.startswith(_DATA):
        return None
    data = line[len(_DATA) :].strip()
    return None if not data or data == _DONE else data


class OpenAIChunks(StreamedText):
    """Reassembles chat-completion chunks: content pieces in order, tool-call deltas by index."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[int, dict[str, str]] = {}
        self.finish: str | None = None
        self.cached: int | None = None

    def take(self, chunk: object) -> bool:
        opened = self.opened(chunk)
        if opened is None:
            return False
        self._counts(opened)
        choice = first_object(opened.get("choices"))
        delta = as_object(choice.get("delta"))
        carried = self.content(delta.get("content"))
        calls = delta.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            carried = self._tool_delta(as_object(call)) or carried
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self.finish = reason
        return carried

    def _counts(self, chunk: JsonObject) -> None:
        cached = cached_prompt_tokens(chunk)
        self.cached = cached if cached is not None else self.cached
        timings = as_object(chunk.get("timings"))
        if timings:  # on the usage chunk, or on the finish reason's when usage is not asked
            self.timings = llama_server_timings(timings)
        usage = as_object(chunk.get("usage"))
        if "completion_tokens" in usage:
            self.prompt_tokens = usage.get("prompt_tokens")
            self.output_tokens = usage.get("completion_tokens")
            return
        if self.output_tokens is None and "predicted_n" in timings:
            self.output_tokens = timings.get("predicted_n")

    def _tool_delta(self, call: JsonObject) -> bool:
        index = call.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = max(self.calls, default=-1) + (0 if call.get("id") is None else 1)
            index = max(index, 0)
        slot = self.calls.setdefault(index, {"name": "", "arguments": ""})
        function = as_object(call.get("function"))
        name, arguments = function.get("name"), function.get("arguments")
        if isinstance(name, str) and name:
            slot["name"] = name
        if isinstance(arguments, str):
            slot["arguments"] += arguments
        return True

    def finished(self) -> bool:
        return False  # the usage chunk follows the finish reason: read to the stream's end

    def result(self, status: int, started: float, ended: float) -> TurnResult:
        failure = self.failure(status, started, ended)
        if failure is not None:
            return failure
        calls: list[dict[str, ToolFunction]] = [
            {"function": {"name": c["name"], "arguments": c["arguments"]}}
            for _, c in sorted(self.calls.items())
        ]
        message: JsonObject = {"content": "".join(self.text), "tool_calls": calls}
        answered = answered_turn(
            status, self.finish, self.prompt_tokens, self.output_tokens, message, started, ended
        )
        return replace(answered, cached_tokens=self.cached, runner_timings=self.timings)


OPENAI_STREAM = StreamFormat(SSE_MEDIA_TYPE, sse_payload, OpenAIChunks)


class OpenAIChatClient:
    """Chat with a llama.cpp server at `base_url`. Thread-safe: replay workers share one."""

    def __init__(
        self,
        base_url: str,
        *,
        transport: httpx.BaseTransport | None = None,
        monotonic: Callable[[], float] | None = None,
        runner_name: str = "the runner",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.runner_name = runner_name
        self._client = httpx.Client(transport=transport, trust_env=False)
        self._monotonic = monotonic or time.monotonic

    def chat(self, messages: Messages, tools: ToolSpecs, settings: ChatSettings) -> TurnResult:
        return post_turn(
            self._client,
            self.base_url + CHAT_PATH,
            chat_payload(messages, tools, settings),
            settings,
            parse_chat_completion,
            self._monotonic,
            runner_name=f"{self.runner_name} at {self.base_url}",
            stream=OPENAI_STREAM,
        )

    def close(self) -> None:
        self._client.close()
