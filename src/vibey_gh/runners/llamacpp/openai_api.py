"""The OpenAI-compatible chat client of llama.cpp servers (embedded and llama-server).

One request per turn: POST /v1/chat/completions with the deterministic settings of design §5,
streamed when the settings ask (a calibration's turns; reassembled by `OpenAIChunks`), else
not. Whatever comes back becomes a TurnResult; every httpx exception is translated here
into the turn's error text, so a caller never sees a transport exception.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import replace
from typing import Any

import httpx

from ...guarded import InputProblem, loads_json
from ...interfaces.slots_interface import (
    REFUSED_OVER_WINDOW,
    SERVED_REASONS,
    ChatSettings,
    ToolCall,
    TurnResult,
)
from ..local_http import as_dict
from ..replies import UnusableReply, read_reply
from ..streaming import StreamProblem, post_streamed_turn, send_turn

CHAT_PATH = "/v1/chat/completions"
CONNECT_TIMEOUT_S = 5.0

# How llama-server words a prompt longer than the slot, across versions (runners.md §9).
OVER_WINDOW_TYPE = "exceed_context_size_error"
OVER_WINDOW_PHRASES = ("exceeds the available context size", "exceed the context size")


def chat_payload(
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    settings: ChatSettings,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
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


def error_message(body: Any, fallback: str = "") -> str:
    """The human message of an error body: {"error": {"message": ...}}, {"error": "..."}, text."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return str(error.get("message") or error.get("type") or json.dumps(error))
        if error is not None:
            return str(error)
    if isinstance(body, str) and body.strip():
        return body.strip()
    return fallback


def is_over_window(body: Any) -> bool:
    """True when an error body says the prompt does not fit the slot's window."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("type") == OVER_WINDOW_TYPE:
        return True
    text = error_message(body).lower()
    return any(phrase in text for phrase in OVER_WINDOW_PHRASES)


def parse_arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict; a string that is not a JSON object is kept unparsed."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = loads_json(raw) if raw.strip() else {}
        except InputProblem:
            return {"_unparsed": raw}
        if isinstance(parsed, dict):
            return parsed
        return {"_unparsed": raw}
    if raw is None:
        return {}
    return {"_unparsed": json.dumps(raw)}


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_REQUEST_TOKENS = re.compile(r"request \((\d{1,12}) tokens\)")


def refused_prompt_tokens(body: Any) -> int | None:
    """The prompt's length as the runner counted it when it refused it as over the window:
    llama-server's `error.n_prompt_tokens`, else the "request (N tokens)" of its message (which
    Ollama passes on inside its own error string); None when the refusal does not say."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        counted = _int_or_none(error.get("n_prompt_tokens"))
        if counted is not None:
            return counted
    found = _REQUEST_TOKENS.search(json.dumps(body) if not isinstance(body, str) else body)
    return int(found.group(1)) if found else None


def failed_answer(
    status: int,
    body: Any,
    started: float,
    ended: float,
    over_window: Callable[[Any], bool],
    describe: Callable[[Any], str],
) -> TurnResult | None:
    """The failures both chat APIs share, or None when the answer is a 200 JSON object:
    a refusal of an over-window prompt, another HTTP error, a body that is no object, or an
    error reported inside a 200."""

    def failed(error: str, prompt_tokens: int | None = None) -> TurnResult:
        return TurnResult(status, None, prompt_tokens, None, "", (), started, ended, error)

    if status != 200:
        if status == 400 and over_window(body):
            return failed(REFUSED_OVER_WINDOW, refused_prompt_tokens(body))
        return failed(f"http {status}: {describe(body)}")
    if not isinstance(body, dict):
        return failed("answer is not a JSON object")
    if body.get("error") is not None:
        return failed(f"error in answer: {describe(body)}")
    return None


def parse_chat_completion(status: int, body: Any, started: float, ended: float) -> TurnResult:
    """Turn one /v1/chat/completions answer (status and decoded body) into a TurnResult."""
    failure = failed_answer(
        status, body, started, ended, is_over_window, lambda b: error_message(b, "no message")
    )
    if failure is not None:
        return failure
    choices = body.get("choices")
    choice = as_dict(choices[0] if isinstance(choices, list) and choices else None)
    message = as_dict(choice.get("message"))
    usage = as_dict(body.get("usage"))
    answered = answered_turn(
        status,
        choice.get("finish_reason"),
        usage.get("prompt_tokens"),
        usage.get("completion_tokens"),
        message,
        started,
        ended,
    )
    return replace(answered, cached_tokens=cached_prompt_tokens(body))


def cached_prompt_tokens(body: dict[str, Any]) -> int | None:
    """Prompt tokens the runner reused from its cache: `usage.prompt_tokens_details
    .cached_tokens` (OpenAI's field, which llama-server fills), else llama-server's
    `timings.cache_n`; None when the answer says neither."""
    details = as_dict(as_dict(body.get("usage")).get("prompt_tokens_details"))
    cached = _int_or_none(details.get("cached_tokens"))
    if cached is None:
        cached = _int_or_none(as_dict(body.get("timings")).get("cache_n"))
    return cached


def answered_turn(
    status: int,
    reason: Any,
    prompt_tokens: Any,
    output_tokens: Any,
    message: dict[str, Any],
    started: float,
    ended: float,
) -> TurnResult:
    """A 200 answer of either chat API: served only with a done reason that is an answer."""
    done = reason if isinstance(reason, str) and reason else None
    error = None
    if done is None:
        error = "no done reason"
    elif done not in SERVED_REASONS:
        error = f"done reason {done!r} is not an answer"
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            calls.append(
                ToolCall(str(function.get("name", "")), parse_arguments(function.get("arguments")))
            )
    return TurnResult(
        status=status,
        finish_reason=done,
        prompt_tokens=_int_or_none(prompt_tokens),
        output_tokens=_int_or_none(output_tokens),
        text=str(message.get("content") or ""),
        tool_calls=tuple(calls),
        started=started,
        ended=ended,
        error=error,
    )


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


def chunk_object(chunk: Any) -> dict[str, Any]:
    """A decoded chunk, which must be a JSON object."""
    if not isinstance(chunk, dict):
        raise StreamProblem(f"a chunk is not a JSON object: {chunk!r:.60}")
    return chunk


def failed_turn(status: int | None, started: float, ended: float, error: str) -> TurnResult:
    return TurnResult(status, None, None, None, "", (), started, ended, error)


class OpenAIChunks:
    """Reassembles chat-completion chunks: content pieces in order, tool-call deltas by index."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.finish: Any = None
        self.prompt_tokens: Any = None
        self.output_tokens: Any = None
        self.cached: int | None = None
        self.error: str | None = None

    def take(self, chunk: Any) -> bool:
        chunk = chunk_object(chunk)
        if chunk.get("error") is not None:
            self.error = error_message(chunk, "no message")
            return False
        self._counts(chunk)
        choices = chunk.get("choices")
        choice = as_dict(choices[0] if isinstance(choices, list) and choices else None)
        delta = as_dict(choice.get("delta"))
        carried = False
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.text.append(content)
            carried = True
        calls = delta.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            carried = self._tool_delta(as_dict(call)) or carried
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self.finish = reason
        return carried

    def _counts(self, chunk: dict[str, Any]) -> None:
        cached = cached_prompt_tokens(chunk)
        self.cached = cached if cached is not None else self.cached
        usage = as_dict(chunk.get("usage"))
        if "completion_tokens" in usage:
            self.prompt_tokens = usage.get("prompt_tokens")
            self.output_tokens = usage.get("completion_tokens")
            return
        timings = as_dict(chunk.get("timings"))
        if self.output_tokens is None and "predicted_n" in timings:
            self.output_tokens = timings.get("predicted_n")

    def _tool_delta(self, call: dict[str, Any]) -> bool:
        index = call.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = max(self.calls, default=-1) + (0 if call.get("id") is None else 1)
            index = max(index, 0)
        slot = self.calls.setdefault(index, {"name": "", "arguments": ""})
        function = as_dict(call.get("function"))
        name, arguments = function.get("name"), function.get("arguments")
        if isinstance(name, str) and name:
            slot["name"] = name
        if isinstance(arguments, str):
            slot["arguments"] += arguments
        return True

    def finished(self) -> bool:
        return False  # the usage chunk follows the finish reason: read to the stream's end

    def result(self, status: int, started: float, ended: float) -> TurnResult:
        if self.error is not None:
            return failed_turn(status, started, ended, f"error in answer: {self.error}")
        message = {
            "content": "".join(self.text),
            "tool_calls": [
                {"function": {"name": c["name"], "arguments": c["arguments"]}}
                for _, c in sorted(self.calls.items())
            ],
        }
        answered = answered_turn(
            status, self.finish, self.prompt_tokens, self.output_tokens, message, started, ended
        )
        return replace(answered, cached_tokens=self.cached)


def decode_body(response: httpx.Response, timeout_s: float) -> Any:
    """The body of a streamed response (see `replies.read_reply`)."""
    return read_reply(response, str(response.request.url), timeout_s)


def post_turn(
    client: httpx.Client,
    url: str,
    payload: dict[str, Any],
    settings: ChatSettings,
    parse: Callable[[int, Any, float, float], TurnResult],
    monotonic: Callable[[], float],
) -> TurnResult:
    """POST one turn and parse it; transport failures become failed turns with status None."""
    started = monotonic()
    timeout = httpx.Timeout(settings.timeout_s, connect=CONNECT_TIMEOUT_S)
    try:
        with closing(send_turn(client, url, payload, timeout)) as response:
            status = response.status_code
            body = decode_body(response, settings.timeout_s)
    except UnusableReply as exc:
        return TurnResult(status, None, None, None, "", (), started, monotonic(), str(exc))
    except httpx.TimeoutException:
        ended = monotonic()
        return TurnResult(
            None, None, None, None, "", (), started, ended, f"timeout after {settings.timeout_s:g}s"
        )
    except httpx.HTTPError as exc:
        ended = monotonic()
        return TurnResult(
            None, None, None, None, "", (), started, ended, f"connection failed: {exc or type(exc)}"
        )
    except RuntimeError:
        # httpx raises this when the client was closed under us: the runner was stopped
        return TurnResult(None, None, None, None, "", (), started, monotonic(), "runner stopped")
    return parse(status, body, started, monotonic())


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

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: ChatSettings,
    ) -> TurnResult:
        if settings.stream:
            return post_streamed_turn(
                self._client,
                self.base_url + CHAT_PATH,
                chat_payload(messages, tools, settings),
                settings,
                runner_name=f"{self.runner_name} at {self.base_url}",
                media_type=SSE_MEDIA_TYPE,
                payload_lines=sse_payload,
                assembler=OpenAIChunks(),
                parse_error=parse_chat_completion,
                monotonic=self._monotonic,
            )
        return post_turn(
            self._client,
            self.base_url + CHAT_PATH,
            chat_payload(messages, tools, settings),
            settings,
            parse_chat_completion,
            self._monotonic,
        )

    def close(self) -> None:
        self._client.close()
