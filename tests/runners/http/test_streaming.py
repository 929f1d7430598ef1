"""Streamed answers in llama-server's format: tool-call deltas by index reassemble to the
unstreamed message; a stream is read in bounded lines; a broken stream fails the turn."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.hostile import HOSTILE_KINDS, hostile_production
from vibey_gh.interfaces.slots_interface import ChatSettings
from vibey_gh.runners.http.openai_chat import (
    OpenAIChatClient,
    OpenAIChunks,
    parse_chat_completion,
    sse_payload,
)
from vibey_gh.runners.http.streaming import MAX_LINE_BYTES, StreamProblem, before, split_lines

STREAM = ChatSettings(window=512, stream=True)
MESSAGES = [{"role": "user", "content": "read both"}]


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def call_delta(index: int, **function: str) -> dict[str, Any]:
    head = {"id": f"call_{index}", "type": "function"} if "name" in function else {}
    return {"tool_calls": [{"index": index, **head, "function": function}]}


# two calls, as llama-server streams them: name first, arguments split anywhere
TOOL_CHUNKS = [
    chunk({"role": "assistant", "content": None}),
    chunk(call_delta(0, name="read_file", arguments="")),
    chunk(call_delta(0, arguments='{"pa')),
    chunk(call_delta(0, arguments='th": "a.py"}')),
    chunk(call_delta(1, name="read_file", arguments='{"path"')),
    chunk(call_delta(1, arguments=': "b.py"}')),
    chunk({}, "tool_calls"),
    {"choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 21}},
]
UNSTREAMED = {
    "choices": [
        {
            "finish_reason": "tool_calls",
            "message": {
                "content": None,
                "tool_calls": [
                    {"function": {"name": "read_file", "arguments": '{"path": "a.py"}'}},
                    {"function": {"name": "read_file", "arguments": '{"path": "b.py"}'}},
                ],
            },
        }
    ],
    "usage": {"prompt_tokens": 40, "completion_tokens": 21},
}


def sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
        b"data: [DONE]\n\n"
    )


def client_for(body: bytes, content_type: str = "text/event-stream") -> OpenAIChatClient:
    def answer(request: httpx.Request) -> httpx.Response:
        sent = json.loads(request.content)
        assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
        return httpx.Response(200, content=body, headers={"content-type": content_type})

    return OpenAIChatClient(
        "http://127.0.0.1:9", transport=httpx.MockTransport(answer), runner_name="embedded"
    )


def test_tool_call_deltas_reassemble_to_the_unstreamed_answer() -> None:
    streamed = client_for(sse(TOOL_CHUNKS)).chat(MESSAGES, None, STREAM)
    whole = parse_chat_completion(200, UNSTREAMED, 0.0, 1.0)
    assert streamed.served, streamed.error
    assert (streamed.text, streamed.tool_calls, streamed.finish_reason) == (
        whole.text,
        whole.tool_calls,
        whole.finish_reason,
    )
    assert (streamed.prompt_tokens, streamed.output_tokens) == (40, 21)
    assert streamed.token_chunks == 5  # the role-only chunk and the finish carry no token


def test_a_text_answer_counts_its_tokens_from_llama_cpps_timings_without_usage() -> None:
    chunks = OpenAIChunks()
    for piece in ("Hel", "lo", ""):
        chunks.take(chunk({"content": piece}))
    chunks.take({**chunk({}, "stop"), "timings": {"predicted_n": 2, "prompt_n": 7}})
    result = chunks.result(200, 0.0, 1.0)
    assert result.served and result.text == "Hello" and result.output_tokens == 2


def test_only_data_lines_carry_chunks() -> None:
    assert sse_payload(b": keep-alive") is None
    assert sse_payload(b"data: [DONE]") is None
    assert sse_payload(b"event: message") is None
    assert sse_payload(b'data: {"a": 1}') == b'{"a": 1}'


def test_a_stream_that_ends_without_a_finish_reason_is_not_served() -> None:
    result = client_for(sse(TOOL_CHUNKS[:4])).chat(MESSAGES, None, STREAM)
    assert not result.served and result.error == "no done reason"


def test_an_error_chunk_fails_the_turn() -> None:
    body = sse([chunk({"content": "x"}), {"error": {"message": "Compute error.", "code": 500}}])
    result = client_for(body).chat(MESSAGES, None, STREAM)
    assert not result.served and result.error == "error in answer: Compute error."


@pytest.mark.parametrize(
    "line,problem",
    [
        (b"data: [1, 2]", "a chunk is not a JSON object"),
        (b"data: {" + b'"a":' * 1 + b"1e400}", "too large to be finite"),
        (b"data: " + b"[" * 100 + b"]" * 100, "nested more than"),
    ],
)
def test_an_unreadable_chunk_fails_the_turn_naming_the_runner(line: bytes, problem: str) -> None:
    result = client_for(line + b"\n\n").chat(MESSAGES, None, STREAM)
    assert not result.served and result.error is not None
    assert result.error.startswith("unreadable stream from embedded at http://127.0.0.1:9")
    assert problem in result.error


def test_lines_are_bounded() -> None:
    assert list(split_lines(iter([b"a\r\nb", b"c\n", b"d"]))) == [b"a", b"bc", b"d"]
    with pytest.raises(StreamProblem, match="a line longer than"):
        list(split_lines(iter([b"x" * (MAX_LINE_BYTES + 1)])))


def test_a_refusal_before_the_stream_is_read_as_an_error_body() -> None:
    refusal = {"error": {"code": 400, "message": "too long", "type": "exceed_context_size_error"}}

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json=refusal)

    client = OpenAIChatClient("http://127.0.0.1:9", transport=httpx.MockTransport(answer))
    result = client.chat(MESSAGES, None, STREAM)
    assert result.status == 400 and result.error == "refused: over window"


@pytest.mark.parametrize("kind", HOSTILE_KINDS)
def test_a_hostile_runner_fails_a_streamed_turn_without_hanging(kind: str) -> None:
    settings = ChatSettings(window=512, stream=True, timeout_s=2.0)
    with hostile_production(kind) as server:
        client = OpenAIChatClient(server.url, runner_name="llama-server")
        try:
            started = time.monotonic()
            result = client.chat(MESSAGES, None, settings)
        finally:
            client.close()
    assert not result.served and result.error
    assert time.monotonic() - started < 15.0


def test_a_stream_that_drips_ends_at_its_deadline() -> None:
    def drip() -> Iterator[bytes]:
        while True:
            time.sleep(0.05)
            yield b"d"

    with pytest.raises(StreamProblem, match="did not end in time"):
        list(split_lines(before(time.monotonic() + 0.3, drip())))
