"""What both chat APIs share in making a turn's TurnResult: the failures (an over-window
refusal, an HTTP error, an answer that is no object or reports an error), a served answer's
done reason, counts and tool calls, and one POST whose transport failures become failed turns.

OpenAI's format (`openai_chat.py`) and Ollama's (`ollama/runner.py`) differ in where
these fields sit; each passes them here. Every httpx exception is translated here into the
turn's error text, so a caller never sees a transport exception.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from contextlib import closing

import httpx

from ...guarded import InputProblem, loads_json
from ...interfaces.slots_interface import (
    REFUSED_OVER_WINDOW,
    SERVED_REASONS,
    ChatSettings,
    ToolCall,
    TurnResult,
)
from ...interfaces.turns import RunnerTimings
from .replies import UnusableReply, read_reply
from .streaming import StreamFormat, StreamProblem, post_streamed_turn, send_turn
from .wire import JsonObject, count_or_none

CONNECT_TIMEOUT_S = 5.0

# A decoded reply body (a JSON value, or text when it was no JSON) -> the turn it gave.
ParseReply = Callable[[int, object, float, float], TurnResult]


def error_message(body: object, fallback: str = "") -> str:
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


def parse_arguments(raw: object) -> JsonObject:
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


_REQUEST_TOKENS = re.compile(r"request \((\d{1,12}) tokens\)")


def refused_prompt_tokens(body: object) -> int | None:
    """The prompt's length as the runner counted it when it refused it as over the window:
    llama-server's `error.n_prompt_tokens`, else the "request (N tokens)" of its message (which
    Ollama passes on inside its own error string); None when the refusal does not say."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        counted = count_or_none(error.get("n_prompt_tokens"))
        if counted is not None:
            return counted
    found = _REQUEST_TOKENS.search(json.dumps(body) if not isinstance(body, str) else body)
    return int(found.group(1)) if found else None


def failed_answer(
    status: int,
    body: object,
    started: float,
    ended: float,
    over_window: Callable[[object], bool],
    describe: Callable[[object], str],
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


def answered_turn(
    status: int,
    reason: object,
    prompt_tokens: object,
    output_tokens: object,
    message: JsonObject,
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
    tool_calls = message.get("tool_calls")
    for call in tool_calls if isinstance(tool_calls, list) and tool_calls else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            calls.append(
                ToolCall(str(function.get("name", "")), parse_arguments(function.get("arguments")))
            )
    return TurnResult(
        status=status,
        finish_reason=done,
        prompt_tokens=count_or_none(prompt_tokens),
        output_tokens=count_or_none(output_tokens),
        text=str(message.get("content") or ""),
        tool_calls=tuple(calls),
        started=started,
        ended=ended,
        error=error,
    )


def chunk_object(chunk: object) -> JsonObject:
    """A decoded chunk, which must be a JSON object."""
    if not isinstance(chunk, dict):
        raise StreamProblem(f"a chunk is not a JSON object: {chunk!r:.60}")
    return chunk


def failed_turn(status: int | None, started: float, ended: float, error: str) -> TurnResult:
    return TurnResult(status, None, None, None, "", (), started, ended, error)


class StreamedText:
    """What every format's chunks are reassembled into alike (a `ChunkAssembler` builds on
    it): the answer's text pieces in order, the counts and timings the runner reports, and the
    message of an error chunk (an error after the stream began)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.prompt_tokens: object = None
        self.output_tokens: object = None
        self.timings = RunnerTimings()
        self.error: str | None = None

    def opened(self, chunk: object) -> JsonObject | None:
        """`chunk` as the object it must be; None for an error chunk, whose message is kept."""
        chunk = chunk_object(chunk)
        if chunk.get("error") is not None:
            self.error = error_message(chunk, "no message")
            return None
        return chunk

    def content(self, piece: object) -> bool:
        """Keep a piece of answer text; True when there was one."""
        if isinstance(piece, str) and piece:
            self.text.append(piece)
            return True
        return False

    def failure(self, status: int, started: float, ended: float) -> TurnResult | None:
        """The failed turn an error chunk makes; None when the stream carried none."""
        if self.error is None:
            return None
        return failed_turn(status, started, ended, f"error in answer: {self.error}")


def decode_body(response: httpx.Response, timeout_s: float) -> object:
    """The body of a streamed response (see `replies.read_reply`)."""
    return read_reply(response, str(response.request.url), timeout_s)


def post_turn(
    client: httpx.Client,
    url: str,
    payload: Mapping[str, object],
    settings: ChatSettings,
    parse: ParseReply,
    monotonic: Callable[[], float],
    *,
    runner_name: str,
    stream: StreamFormat,
) -> TurnResult:
    """POST one turn: streamed and reassembled in `stream`'s format when `settings` ask (a
    calibration's turns), else read whole; `parse` reads an answer's body (an error body, when
    streamed). Transport failures become failed turns with status None."""
    if settings.stream:
        return post_streamed_turn(
            client,
            url,
            payload,
            settings,
            runner_name=runner_name,
            stream=stream,
            parse_error=parse,
            monotonic=monotonic,
        )
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
