"""Ollama's chat client: one turn per POST /api/chat, in Ollama's own wire format.

`OllamaChatClient` is the one Ollama chat client: the calibration server (`runner`) and the
lanes' production client both send through it. Callers keep messages in OpenAI format (what the
corpus and lane records hold); it sends Ollama's own (runners.md §4, `wire.ChatRequest`):
tool-call `arguments` as JSON objects — Ollama's Go type refuses a string with HTTP 400 — a
tool result's name as `tool_name`, `stream` always said (Ollama streams when it is omitted) and
integer options as integers.

Streamed (a calibration's turns), Ollama answers NDJSON (`application/x-ndjson`), one
`api.ChatResponse` a line (server/routes.go ChatHandler). Its tool parser holds text back until
it can tell a tool call from an answer, so a tool call arrives whole, arguments as an object,
in one chunk; text comes in `message.content` pieces; chunks with nothing in them are not sent,
except the last, which has `done: true`, `done_reason` and the counts. The unstreamed answer is
exactly the concatenated content and every chunk's tool calls in order (`OllamaChunks`). An
error after the stream began is a line `{"error": "..."}`.
"""

from __future__ import annotations

import copy

import httpx
from msgspec.structs import replace

from ...clock import SYSTEM_CLOCK, Clock
from ...errors import RunnerError
from ...guarded import InputProblem, loads_json
from ...interfaces.slots_interface import ChatSettings, TurnResult
from ...interfaces.turns import RunnerTimings, reported
from ..http.chat_turns import (
    StreamedText,
    answered_turn,
    decode_body,
    error_message,
    failed_answer,
    failed_turn,
    post_turn,
)
from ..http.openai_chat import is_over_window as llama_server_over_window
from ..http.streaming import StreamFormat
from ..http.wire import JsonObject, Messages, ToolSpecs, as_object, field
from .wire import ChatRequest

CHAT_PATH = "/api/chat"
PRELOAD_TIMEOUT_S = 600.0
NDJSON_MEDIA_TYPE = "application/x-ndjson"

# Ollama's own wording of a prompt longer than num_ctx (runners.md §4): era B's runner, and
# era C's rendered path; era C's native path forwards llama-server's error (matched separately).
OLLAMA_OVER_WINDOW_PHRASES = (
    "the input length exceeds the context length",
    "the prompt is longer than the context length",
)


def ollama_messages(messages: Messages) -> Messages:
    """A copy in Ollama's form: every tool call's `arguments` decoded to an object, and a tool
    result's `name` also as `tool_name`. An `arguments` string that is no JSON object is left
    as it is: Ollama refuses it, and the turn fails where it can be seen."""
    converted = copy.deepcopy(messages)
    for message in converted:
        if message.get("role") == "tool" and "name" in message and "tool_name" not in message:
            message["tool_name"] = message["name"]
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            function = field(call, "function")
            if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                try:
                    decoded = loads_json(function["arguments"] or "{}")
                except InputProblem:
                    continue
                if isinstance(decoded, dict):
                    function["arguments"] = decoded
    return converted


def chat_payload(
    model: str, messages: Messages, tools: ToolSpecs, settings: ChatSettings
) -> ChatRequest:
    """One /api/chat request in Ollama's wire format (options typed as `api.Options` wants:
    integers for num_ctx, seed and num_predict, a number for temperature)."""
    payload: ChatRequest = {
        "model": model,
        "messages": ollama_messages(messages),
        "stream": settings.stream,
        "truncate": False,
        "shift": False,
        "options": {
            "num_ctx": int(settings.window),
            "temperature": float(settings.temperature),
            "seed": int(settings.seed),
            "num_predict": int(settings.max_tokens),
        },
    }
    if tools:
        payload["tools"] = tools
    return payload


def unwrap_error(body: object) -> str:
    """Ollama's error text; era C wraps llama-server's JSON error inside the string."""
    text = error_message(body, "no message")
    if text.startswith("{"):
        try:
            inner = loads_json(text)
        except InputProblem:
            return text
        return error_message(inner, text)
    return text


def is_over_window(body: object) -> bool:
    text = error_message(body).lower()
    if any(phrase in text for phrase in OLLAMA_OVER_WINDOW_PHRASES):
        return True
    if "exceed_context_size_error" in text:
        return True
    return llama_server_over_window(body) or llama_server_over_window({"error": unwrap_error(body)})


def parse_chat(status: int, body: object, started: float, ended: float) -> TurnResult:
    """Turn one /api/chat answer (stream false) into a TurnResult."""
    failure = failed_answer(status, body, started, ended, is_over_window, unwrap_error)
    if failure is not None:
        return failure
    reply = as_object(body)  # an object: failed_answer refuses anything else
    answered = answered_turn(
        status,
        reply.get("done_reason"),
        reply.get("prompt_eval_count"),
        reply.get("eval_count"),
        as_object(reply.get("message")),
        started,
        ended,
    )
    return replace(answered, runner_timings=ollama_timings(reply))


def ollama_timings(done: JsonObject) -> RunnerTimings:
    """The counts and durations (nanoseconds) of Ollama's last chunk, each pair kept only
    when plausible. Since v0.30 `prompt_eval_count` includes the tokens llama-server's cache
    held while `prompt_eval_duration` times only the rest (runners.md §4): the rate is then
    Ollama's own "prompt eval rate", above what reading the prompt alone would give."""
    prompt_tokens, prompt_s = reported(
        done.get("prompt_eval_count"), done.get("prompt_eval_duration"), 1e9
    )
    output_tokens, output_s = reported(done.get("eval_count"), done.get("eval_duration"), 1e9)
    return RunnerTimings(prompt_tokens, prompt_s, output_tokens, output_s)


class OllamaChunks(StreamedText):
    """Reassembles Ollama's NDJSON chunks: content pieces, whole tool calls, the done line."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[object] = []
        self.done = False
        self.done_reason: object = None

    def take(self, chunk: object) -> bool:
        opened = self.opened(chunk)
        if opened is None:
            self.done = True  # an error line ends the stream
            return False
        message = as_object(opened.get("message"))
        carried = self.content(message.get("content"))
        calls = message.get("tool_calls")
        if isinstance(calls, list) and calls:
            self.calls.extend(calls)
            carried = True
        if opened.get("done") is True:
            self.done = True
            self.done_reason = opened.get("done_reason")
            self.prompt_tokens = opened.get("prompt_eval_count")
            self.output_tokens = opened.get("eval_count")
            self.timings = ollama_timings(opened)
        return carried

    def finished(self) -> bool:
        return self.done

    def result(self, status: int, started: float, ended: float) -> TurnResult:
        failure = self.failure(status, started, ended)
        if failure is not None:
            return failure
        if not self.done:
            return failed_turn(status, started, ended, "the stream ended without its done line")
        message: JsonObject = {"content": "".join(self.text), "tool_calls": self.calls}
        answered = answered_turn(
            status,
            self.done_reason,
            self.prompt_tokens,
            self.output_tokens,
            message,
            started,
            ended,
        )
        return replace(answered, runner_timings=self.timings)


def ndjson_payload(line: bytes) -> bytes | None:
    return line if line.strip() else None


OLLAMA_STREAM = StreamFormat(NDJSON_MEDIA_TYPE, ndjson_payload, OllamaChunks)


class OllamaChatClient:
    """Chat with one Ollama server through /api/chat; also its readiness and preload (the
    calibration server's). Thread-safe: replay workers and lanes share one."""

    def __init__(
        self,
        base_url: str,
        model: str,
        window: int | None = None,
        clock: Clock = SYSTEM_CLOCK,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.window = window
        self._clock = clock
        self._client = httpx.Client(transport=transport, trust_env=False)

    def answers(self) -> bool:
        try:
            return self._client.get(self.base_url + "/api/version", timeout=1.0).status_code == 200
        except httpx.HTTPError:
            return False

    def preload(self) -> float:
        """Load the model with an empty chat (done_reason "load") at the window used later."""
        if self.window is None:
            raise RunnerError(f"loading {self.model} needs the window its turns will use")
        payload = chat_payload(self.model, [], None, ChatSettings(window=self.window))
        started = self._clock.monotonic()
        url = self.base_url + CHAT_PATH
        try:
            with self._client.stream("POST", url, json=payload, timeout=PRELOAD_TIMEOUT_S) as reply:
                status = reply.status_code
                body = decode_body(reply, PRELOAD_TIMEOUT_S)
        except httpx.HTTPError as exc:
            raise RunnerError(f"loading {self.model} failed: {exc or type(exc).__name__}") from None
        seconds = self._clock.monotonic() - started
        if status != 200:
            # Ollama answers 404 for a model it has not pulled
            hint = f"; pull it first: ollama pull {self.model}" if status == 404 else ""
            raise RunnerError(
                f"loading {self.model} failed: http {status}: {unwrap_error(body)}{hint}"
            )
        if field(body, "done_reason") != "load":
            raise RunnerError(f"loading {self.model} gave no load confirmation: {body!r:.200}")
        return seconds

    def chat(self, messages: Messages, tools: ToolSpecs, settings: ChatSettings) -> TurnResult:
        return post_turn(
            self._client,
            self.base_url + CHAT_PATH,
            chat_payload(self.model, messages, tools, settings),
            settings,
            parse_chat,
            self._clock.monotonic,
            runner_name=f"ollama at {self.base_url}",
            stream=OLLAMA_STREAM,
        )

    def close(self) -> None:
        self._client.close()
