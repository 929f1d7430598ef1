"""The simulated runner streams as llama-server does, its tokens timed by its capacity model,
and a streamed answer reassembles to exactly the unstreamed one."""

from __future__ import annotations

import json
import math
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.support.ports import free_port
from vibey_gh.config import SimulatedModel
from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerLaunch
from vibey_gh.runners.http.openai_chat import OpenAIChunks
from vibey_gh.runners.simulated.model import (
    ProcessorSharing,
    answer_deltas,
    answer_for,
    sharing_rate,
    split_text,
    token_work,
    work_seconds,
)
from vibey_gh.runners.simulated.runner import SimulatedRunner

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "parameters": {"type": "object", "properties": {"path": {}, "lines": {}}},
        },
    }
]


def test_a_sublinear_runner_shares_less_than_n_slots_of_speed() -> None:
    assert sharing_rate(4, 100, 0.5) == pytest.approx(2 / 4)
    assert sharing_rate(1, 100, 0.5) == 1.0
    # turn latency grows as N / N^0.5 = √N: 1.41× at two, 2× at four
    assert 1 / sharing_rate(2, 100, 0.5) == pytest.approx(math.sqrt(2))
    assert sharing_rate(8, 4, 1.0) == sharing_rate(8, 4) == 0.5


def test_token_work_adds_up_to_the_turn_and_puts_the_prompt_first() -> None:
    stages = token_work(400, 30, tokens_per_second=100.0, noise_z=0.7, noise=0.2)
    assert len(stages) == 30
    assert sum(stages) == pytest.approx(
        work_seconds(400, 30, tokens_per_second=100.0, noise_z=0.7, noise=0.2)
    )
    assert stages[0] > stages[1] == stages[-1]


@pytest.mark.parametrize("text,pieces", [("abcdefg", 3), ("ab", 5), ("", 1)])
def test_split_text_keeps_every_character_in_order(text: str, pieces: int) -> None:
    parts = split_text(text, pieces)
    assert len(parts) == pieces and "".join(parts) == text


def test_the_deltas_of_an_answer_reassemble_to_it() -> None:
    for i in range(30):
        messages = [{"role": "user", "content": f"read {i}"}]
        answer = answer_for(messages, TOOLS, 768, loaded=False, noise=0.0)
        assembler = OpenAIChunks()
        for delta in answer_deltas(answer):
            choice = {"index": 0, "delta": delta, "finish_reason": None}
            assembler.take({"choices": [choice]})
        assembler.take({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        result = assembler.result(200, 0.0, 1.0)
        assert len(answer_deltas(answer)) == answer.output_tokens
        if answer.tool_name is None:
            assert result.text == answer.text and not result.tool_calls
        else:
            assert result.tool_calls[0].name == answer.tool_name
            assert result.tool_calls[0].arguments == answer.tool_arguments


def test_stages_come_out_one_by_one_at_the_shared_rate() -> None:
    sharing = ProcessorSharing(knee=1)
    times: list[float] = []
    start = time.monotonic()

    def other() -> None:
        sharing.serve(0.2)

    neighbour = threading.Thread(target=other)
    neighbour.start()
    for _ in sharing.serve_stages([0.05, 0.05, 0.05]):
        times.append(time.monotonic() - start)
    neighbour.join()
    # two turns on one slot's capacity: each stage takes twice its work while both run
    assert len(times) == 3
    assert times[0] >= 0.09
    assert times[2] >= 0.25


@pytest.fixture
def served(tmp_path: Path):  # type: ignore[no-untyped-def]
    model = SimulatedModel(knee=2, noise=0.0, tokens_per_second=2000.0)
    running = SimulatedRunner(model).start(
        RunnerLaunch(2, 512, free_port(), "simulated", tmp_path / "log")
    )
    try:
        running.wait_ready(30.0)
        yield running
    finally:
        running.stop()


def test_streamed_and_unstreamed_answers_of_a_turn_agree(served) -> None:  # type: ignore[no-untyped-def]
    plain = ChatSettings(window=512, max_tokens=64)
    streamed = ChatSettings(window=512, max_tokens=64, stream=True)
    tool_calls = 0
    for i in range(12):
        messages = [{"role": "user", "content": f"read {i}"}]
        whole = served.chat(messages, TOOLS, plain)
        parts = served.chat(messages, TOOLS, streamed)
        assert whole.served and parts.served, parts.error
        assert (parts.text, parts.tool_calls) == (whole.text, whole.tool_calls)
        assert (parts.finish_reason, parts.output_tokens) == (
            whole.finish_reason,
            whole.output_tokens,
        )
        assert parts.prompt_tokens == whole.prompt_tokens
        assert parts.streamed and not whole.streamed
        assert parts.first_token is not None and parts.last_token is not None
        assert parts.started < parts.first_token <= parts.last_token <= parts.ended
        assert parts.token_chunks >= 1
        for turn in (whole, parts):
            # llama-server's timings, timed by the server's clock under the capacity model:
            # inside the turn as the client saw it
            timings = turn.runner_timings
            assert timings is not None and timings.prompt_s is not None
            assert timings.prompt_tokens == (turn.prompt_tokens or 0) - (turn.cached_tokens or 0)
            assert timings.output_tokens == turn.output_tokens and timings.output_s is not None
            assert 0 < timings.prompt_s + timings.output_s <= turn.latency_s
        tool_calls += bool(parts.tool_calls)
    assert 0 < tool_calls < 12, "both kinds of answer were compared"


def test_the_stream_is_server_sent_events_ending_in_done(served) -> None:  # type: ignore[no-untyped-def]
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with httpx.Client(trust_env=False) as client:
        answer = client.post(served.base_url + "/v1/chat/completions", json=body)
    assert answer.headers["content-type"] == "text/event-stream"
    events = [line for line in answer.text.splitlines() if line]
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(line.removeprefix("data: ")) for line in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0
    assert chunks[-2]["choices"][0]["finish_reason"] in ("stop", "length")


def test_a_runner_that_does_not_stream_fails_the_turn_naming_itself() -> None:
    def unstreamed(request: httpx.Request) -> httpx.Response:
        answer = {"choices": [{"finish_reason": "stop", "message": {"content": "hi"}}]}
        return httpx.Response(200, json=answer)

    from vibey_gh.runners.http.openai_chat import OpenAIChatClient

    client = OpenAIChatClient(
        "http://127.0.0.1:9", transport=httpx.MockTransport(unstreamed), runner_name="llama-server"
    )
    result = client.chat([{"role": "user", "content": "hi"}], None, ChatSettings(512, stream=True))
    assert not result.served and not result.streamed
    assert result.error is not None and result.error.startswith(
        "llama-server at http://127.0.0.1:9"
    )
    assert "did not stream" in result.error


def test_a_sublinear_model_is_another_fingerprint_and_a_linear_one_keeps_its_own() -> None:
    from vibey_gh.runners.simulated.model import model_digest, model_name

    linear = SimulatedModel()
    assert "scaling" not in model_name(linear)  # evidence measured before scaling still matches
    assert model_digest(SimulatedModel(scaling=0.5)) != model_digest(linear)
