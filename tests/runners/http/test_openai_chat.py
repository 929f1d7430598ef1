from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from tests.support.runners import recorded
from vibey_gh.interfaces.schema import as_json
from vibey_gh.interfaces.slots_interface import REFUSED_OVER_WINDOW, ChatSettings, ToolCall
from vibey_gh.runners.http.chat_turns import parse_arguments
from vibey_gh.runners.http.openai_chat import (
    OpenAIChatClient,
    chat_payload,
    parse_chat_completion,
)

SETTINGS = ChatSettings(window=1024, max_tokens=16, temperature=0.0, seed=42, timeout_s=7.5)
MESSAGES = [{"role": "user", "content": "hello"}]


def parse(name: str):  # type: ignore[no-untyped-def]
    answer = recorded(f"llama_server/{name}.json")
    return parse_chat_completion(answer.status, answer.body, 10.0, 12.5)


def test_recorded_stop_answer_is_served_with_usage_and_text() -> None:
    turn = parse("chat_stop")
    assert turn.served
    assert turn.status == 200 and turn.finish_reason == "stop"
    assert turn.prompt_tokens == 42 and turn.output_tokens == 8
    assert turn.text == "The capital of France is Paris."
    assert turn.tool_calls == ()
    assert (turn.started, turn.ended, turn.latency_s) == (10.0, 12.5, 2.5)


def test_recorded_length_answer_is_served() -> None:
    turn = parse("chat_length")
    assert turn.served and turn.finish_reason == "length" and turn.output_tokens == 8


def test_tool_call_arguments_arrive_as_json_strings_and_become_dicts() -> None:
    turn = parse("chat_tool_calls")
    assert turn.served and turn.finish_reason == "tool_calls"
    assert turn.text == ""
    assert turn.tool_calls == (
        ToolCall("read_file", {"path": "src/vibey_gh/config.py"}),
        ToolCall("read_file", {"path": "README.md", "max_lines": 40}),
    )


def test_unparsable_tool_arguments_are_kept_raw() -> None:
    turn = parse("chat_tool_calls_unparsable_arguments")
    assert turn.tool_calls == (
        ToolCall("read_file", {"_unparsed": '{"path": "src/vibey_gh/config.py"'}),
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("", {}),
        (None, {}),
        ({"already": "dict"}, {"already": "dict"}),
        ("[1, 2]", {"_unparsed": "[1, 2]"}),
        ("not json", {"_unparsed": "not json"}),
    ],
)
def test_parse_arguments(raw: object, expected: dict[str, object]) -> None:
    assert parse_arguments(raw) == expected


def test_200_without_finish_reason_is_a_failed_turn() -> None:
    turn = parse("chat_no_finish_reason")
    assert turn.status == 200 and turn.finish_reason is None
    assert turn.error == "no done reason"
    assert not turn.served


@pytest.mark.parametrize(
    "name", ["exceed_context_current", "exceed_context_dec2025", "exceed_context_b4747"]
)
def test_every_over_window_wording_is_refused_over_window(name: str) -> None:
    turn = parse(name)
    assert turn.status == 400
    assert turn.error == REFUSED_OVER_WINDOW
    assert not turn.served


def test_other_errors_keep_status_and_message() -> None:
    turn = parse("server_error")
    assert turn.error == "http 500: Compute error."
    loading = parse("loading")
    assert loading.error == "http 503: Loading model"


def test_unknown_finish_reason_is_not_served() -> None:
    body = recorded("llama_server/chat_stop.json").body
    body["choices"][0]["finish_reason"] = "content_filter"
    turn = parse_chat_completion(200, body, 0.0, 1.0)
    assert not turn.served and "content_filter" in (turn.error or "")


def test_payload_is_deterministic_and_carries_tools_only_when_given() -> None:
    payload = chat_payload(MESSAGES, None, SETTINGS)
    assert payload == {
        "messages": MESSAGES,
        "stream": False,
        "temperature": 0.0,
        "seed": 42,
        "max_tokens": 16,
    }
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]
    assert chat_payload(MESSAGES, tools, SETTINGS)["tools"] == tools


def client_with(handler: Callable[[httpx.Request], httpx.Response]) -> OpenAIChatClient:
    ticks = iter(range(100))
    return OpenAIChatClient(
        "http://runner.test:8080/",
        transport=httpx.MockTransport(handler),
        monotonic=lambda: float(next(ticks)),
    )


def test_client_posts_to_chat_completions_and_parses() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = recorded("llama_server/chat_stop.json")
        return httpx.Response(answer.status, json=answer.body)

    turn = client_with(handler).chat(MESSAGES, None, SETTINGS)
    assert turn.served and turn.text.endswith("Paris.")
    assert (turn.started, turn.ended) == (0.0, 1.0)
    assert str(seen[0].url) == "http://runner.test:8080/v1/chat/completions"
    assert json.loads(seen[0].content)["seed"] == 42


def test_timeout_is_a_failed_turn_without_status() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    turn = client_with(handler).chat(MESSAGES, None, SETTINGS)
    assert turn.status is None and turn.error == "timeout after 7.5s"
    assert not turn.served


def test_connection_error_is_a_failed_turn_without_status() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    turn = client_with(handler).chat(MESSAGES, None, SETTINGS)
    assert turn.status is None
    assert turn.error == "connection failed: connection refused"


def test_non_json_error_body_is_kept_as_text() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text="Bad Gateway")

    turn = client_with(handler).chat(MESSAGES, None, SETTINGS)
    assert turn.error == "http 502: Bad Gateway"


def test_cached_prompt_tokens_come_from_usage_or_llama_servers_timings() -> None:
    from vibey_gh.runners.http.openai_chat import cached_prompt_tokens, parse_chat_completion

    both = {
        "choices": [{"finish_reason": "stop", "message": {"content": "hi"}}],
        "usage": {"prompt_tokens": 235, "prompt_tokens_details": {"cached_tokens": 225}},
        "timings": {"cache_n": 225, "prompt_n": 10},
    }
    assert parse_chat_completion(200, both, 0.0, 1.0).cached_tokens == 225
    assert cached_prompt_tokens({"timings": {"cache_n": 7}}) == 7
    assert cached_prompt_tokens({"usage": {"prompt_tokens": 3}}) is None
    plain = parse_chat_completion(200, {**both, "usage": {}, "timings": {}}, 0.0, 1.0)
    assert plain.cached_tokens is None
    assert "cached_tokens" not in as_json(plain)


def test_llama_servers_timings_are_its_prompt_and_generation_speed() -> None:
    timings = parse("chat_stop").runner_timings
    assert timings is not None
    assert (timings.prompt_tokens, timings.output_tokens) == (42, 8)
    # tokens over seconds, as llama-server's own formula (1e3 / ms × n) and Ollama's eval rate
    # give them: the reply's prompt_per_second; its predicted_per_second (30.6) counts one
    # token fewer in this recorded build
    assert timings.prompt_per_s == pytest.approx(76.9981, rel=1e-5)
    assert timings.output_per_s == pytest.approx(8 / 0.228711)


@pytest.mark.parametrize("prompt_ms", [-5.0, 1e300, "545", True, None, float("inf")], ids=repr)
def test_an_implausible_timing_is_dropped_with_its_count(prompt_ms: object) -> None:
    answer = recorded("llama_server/chat_stop.json")
    body = json.loads(json.dumps(answer.body))
    body["timings"]["prompt_ms"] = prompt_ms
    timings = parse_chat_completion(200, body, 0.0, 1.0).runner_timings
    assert timings is not None
    assert (timings.prompt_tokens, timings.prompt_s, timings.prompt_per_s) == (None, None, None)
    assert timings.output_tokens == 8  # the other pair is kept


def test_an_answer_without_timings_records_that_the_runner_reported_none() -> None:
    answer = recorded("llama_server/chat_stop.json")
    body = {k: v for k, v in answer.body.items() if k != "timings"}
    turn = parse_chat_completion(200, body, 0.0, 1.0)
    assert turn.runner_timings is not None and not turn.runner_timings.reported_any
    assert as_json(turn)["runner_timings"] == {}


def test_a_stream_keeps_the_timings_of_its_last_chunk_beside_the_usage() -> None:
    """As the embedded runner streams: the finish reason, then usage and timings together."""
    from vibey_gh.runners.http.openai_chat import OpenAIChunks

    chunks = OpenAIChunks()
    chunks.take({"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}]})
    chunks.take({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
    usage = {"completion_tokens": 8, "prompt_tokens": 31, "prompt_tokens_details": {}}
    timings = {"cache_n": 0, "prompt_n": 31, "prompt_ms": 4298.772, "predicted_n": 8,
               "predicted_ms": 3946.375}  # fmt: skip
    chunks.take({"choices": [], "usage": usage, "timings": timings})
    turn = chunks.result(200, 0.0, 9.0)
    assert turn.served and turn.output_tokens == 8
    assert turn.runner_timings is not None and turn.runner_timings.prompt_tokens == 31
    assert turn.runner_timings.output_s == pytest.approx(3.946375)
