"""The OpenAI-compatible chat client of llama.cpp servers (embedded and llama-server).

One request per turn: POST /v1/chat/completions, not streamed, with the deterministic settings
of design §5. Whatever comes back becomes a TurnResult; every httpx exception is translated here
into the turn's error text, so a caller never sees a transport exception.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx

from ..guarded import InputProblem, loads_json
from ..interfaces.slots_interface import (
    REFUSED_OVER_WINDOW,
    SERVED_REASONS,
    ChatSettings,
    ToolCall,
    TurnResult,
)
from .local_http import as_dict
from .replies import UnusableReply, read_reply

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
        "stream": False,
        "temperature": settings.temperature,
        "seed": settings.seed,
        "max_tokens": settings.max_tokens,
    }
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

    def failed(error: str) -> TurnResult:
        return TurnResult(status, None, None, None, "", (), started, ended, error)

    if status != 200:
        if status == 400 and over_window(body):
            return failed(REFUSED_OVER_WINDOW)
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
    return answered_turn(
        status,
        choice.get("finish_reason"),
        usage.get("prompt_tokens"),
        usage.get("completion_tokens"),
        message,
        started,
        ended,
    )


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
        with client.stream("POST", url, json=payload, timeout=timeout) as response:
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
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._client = httpx.Client(transport=transport, trust_env=False)
        self._monotonic = monotonic or time.monotonic

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        settings: ChatSettings,
    ) -> TurnResult:
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
