"""The simulated runner's prompt cache: a slot reuses the prefix it served last, reported where
llama-server reports it; its `/apply-template` and `/tokenize` count what the chat reports."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.ports import free_port
from vibey_gh.config import SimulatedModel
from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerLaunch, RunningRunner
from vibey_gh.runners.simulated import SimulatedRunner
from vibey_gh.runners.simulated_cache import SlotPromptCache, prompt_text, shared_prefix_chars
from vibey_gh.runners.simulated_model import CHARS_PER_TOKEN, prompt_tokens

WINDOW = 2048


def conversation(name: str, turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": f"{name} " * 200}]
    for index in range(turns):
        messages.append({"role": "user", "content": f"{name} question {index} " * 8})
    return messages


def test_the_shared_prefix_is_counted_to_the_character() -> None:
    assert shared_prefix_chars("abcdef", "abcxyz") == 3
    assert shared_prefix_chars("abc", "abcdef") == 3
    assert shared_prefix_chars("", "abc") == 0
    assert shared_prefix_chars("x" * 100_000 + "a", "x" * 100_000 + "b") == 100_000


def test_a_prompt_goes_to_the_free_slot_that_holds_most_of_it() -> None:
    cache = SlotPromptCache(3)
    first, second = prompt_text(conversation("a", 1), None), prompt_text(conversation("b", 1), None)
    assert cache.serve(0, first, 100) == 0
    assert cache.serve(1, second, 100) == 0
    later = prompt_text(conversation("b", 2), None)
    assert cache.choose([0, 1, 2], later) == 1
    # Nothing shared: the longest-idle free slot, as the free list orders them.
    assert cache.choose([2, 0], prompt_text(conversation("c", 1), None)) == 2
    reused = cache.serve(1, later, prompt_tokens(conversation("b", 2), None))
    assert reused == len(second.removesuffix("]")) // CHARS_PER_TOKEN
    # The same prompt again: all of it but its last token, which is always read again.
    assert cache.serve(1, later, 50) == 49


@pytest.fixture
def served(tmp_path: Path) -> Iterator[RunningRunner]:
    runner = SimulatedRunner(SimulatedModel(knee=2, noise=0.0, tokens_per_second=4000.0))
    running = runner.start(RunnerLaunch(2, WINDOW, free_port(), "simulated", tmp_path / "log"))
    try:
        running.wait_ready(30.0)
        yield running
    finally:
        running.stop()


@pytest.mark.parametrize("stream", [False, True])
def test_a_runs_next_turn_reports_the_prefix_its_slot_served_as_cached(
    served: RunningRunner, stream: bool
) -> None:
    settings = ChatSettings(window=WINDOW, max_tokens=4, stream=stream)
    name = f"run{stream}"
    first = served.chat(conversation(name, 1), None, settings)
    # Another run in between takes the other slot and shares nothing with the first.
    other = served.chat(conversation("other" + name, 1), None, settings)
    second = served.chat(conversation(name, 2), None, settings)
    assert first.served and other.served and second.served
    assert first.cached_tokens == 0 and other.cached_tokens == 0
    assert second.prompt_tokens is not None and second.cached_tokens is not None
    shared = len(prompt_text(conversation(name, 1), None)) - 1  # all but its closing bracket
    assert second.cached_tokens == shared // CHARS_PER_TOKEN
    assert 0 < second.cached_tokens < second.prompt_tokens


def test_the_unstreamed_answer_carries_llama_servers_timings(served: RunningRunner) -> None:
    body = {"messages": conversation("timed", 1), "max_tokens": 4}
    with httpx.Client(base_url=served.base_url, trust_env=False) as client:
        client.post("/v1/chat/completions", json=body)
        answer = client.post("/v1/chat/completions", json=body).json()
    timings, usage = answer["timings"], answer["usage"]
    assert timings["cache_n"] == usage["prompt_tokens_details"]["cached_tokens"] > 0
    assert timings["cache_n"] + timings["prompt_n"] == usage["prompt_tokens"]


def test_tokenize_of_the_template_counts_what_the_chat_reports(served: RunningRunner) -> None:
    messages = conversation("count", 3)
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]
    with httpx.Client(base_url=served.base_url, trust_env=False) as client:
        prompt = client.post("/apply-template", json={"messages": messages, "tools": tools})
        tokens = client.post("/tokenize", json={"content": prompt.json()["prompt"]})
        assert client.post("/tokenize", json={"content": 3}).status_code == 400
        assert client.post("/apply-template", json={"messages": "x"}).status_code == 400
    assert len(tokens.json()["tokens"]) == prompt_tokens(messages, tools)
