"""The simulated runner: its capacity model and answers (pure), and its server, which answers
like llama-server does (the same endpoints, refusals and error bodies)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.support.ports import free_port
from vibey_gh.config import SimulatedModel
from vibey_gh.interfaces.slots_interface import (
    REFUSED_OVER_WINDOW,
    ChatSettings,
    RunnerLaunch,
)
from vibey_gh.runners.llamacpp.api.watch import LlamaServerWatch
from vibey_gh.runners.llamacpp.identify import version_from_props
from vibey_gh.runners.simulated.model import (
    ProcessorSharing,
    answer_for,
    changes_under_load,
    prompt_digest,
    sharing_rate,
)
from vibey_gh.runners.simulated.runner import SimulatedRunner
from vibey_gh.slots.measurement.stepping.passes import Marks

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "parameters": {"type": "object", "properties": {"path": {}, "lines": {}}},
        },
    }
]


def test_sharing_rate_grows_to_the_knee_then_each_turn_slows() -> None:
    assert [sharing_rate(n, 4) for n in (1, 2, 4)] == [1.0, 1.0, 1.0]
    assert sharing_rate(8, 4) == 0.5
    # throughput (turns in flight × each one's rate) is flat after the knee
    assert {n * sharing_rate(n, 4) for n in (4, 5, 8, 16)} == {4.0}


def test_turns_beyond_the_knee_share_its_capacity() -> None:
    sharing = ProcessorSharing(knee=2)
    finished: list[float] = []
    start = time.monotonic()

    def turn() -> None:
        sharing.serve(0.2)
        finished.append(time.monotonic() - start)

    threads = [threading.Thread(target=turn) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # four turns of 0.2 s on a capacity of two: about 0.4 s for all of them, not 0.2
    assert min(finished) >= 0.35


def test_answers_depend_on_the_prompt_and_change_only_under_load_with_noise() -> None:
    messages = [{"role": "user", "content": "what does add do?"}]
    other = [{"role": "user", "content": "what does sub do?"}]
    alone = answer_for(messages, None, 768, loaded=False, noise=0.5)
    assert alone == answer_for(messages, None, 768, loaded=False, noise=0.5)
    assert alone.text != answer_for(other, None, 768, loaded=False, noise=0.5).text
    assert answer_for(messages, None, 768, loaded=True, noise=0.0) == alone
    changing = [
        [{"role": "user", "content": f"question {i}"}]
        for i in range(200)
        if changes_under_load(
            prompt_digest([{"role": "user", "content": f"question {i}"}], None), 0.5
        )
    ]
    assert 20 < len(changing) < 80, "about a quarter of prompts at noise 0.5"
    first = changing[0]
    loaded = answer_for(first, None, 768, loaded=True, noise=0.5)
    quiet = answer_for(first, None, 768, loaded=False, noise=0.5)
    assert loaded.text != quiet.text and loaded.tool_name == quiet.tool_name


def test_a_short_cap_ends_with_length() -> None:
    answer = answer_for([{"role": "user", "content": "x"}], None, 1, loaded=False, noise=0)
    assert answer.output_tokens == 1 and answer.finish_reason == "length"


@pytest.fixture
def served(tmp_path: Path):  # type: ignore[no-untyped-def]
    runner = SimulatedRunner(SimulatedModel(knee=2, noise=0.0, tokens_per_second=2000.0))
    running = runner.start(RunnerLaunch(2, 512, free_port(), "simulated", tmp_path / "log"))
    try:
        running.wait_ready(30.0)
        yield running
    finally:
        running.stop()


def test_it_answers_like_llama_server(served) -> None:  # type: ignore[no-untyped-def]
    with httpx.Client(base_url=served.base_url, trust_env=False) as client:
        assert client.get("/health").json() == {"status": "ok"}
        props = client.get("/props").json()
        assert props["total_slots"] == 2
        assert props["default_generation_settings"]["n_ctx"] == 512
        assert version_from_props(props) == served.info().version
        slots = client.get("/slots").json()
        assert [s["id"] for s in slots] == [0, 1] and not any(s["is_processing"] for s in slots)
        assert client.post("/v1/chat/completions", content=b"{").status_code == 400
        assert client.post("/v1/chat/completions", json={"messages": []}).status_code == 400
    settings = ChatSettings(window=512, max_tokens=64)
    text = served.chat([{"role": "user", "content": "hi"}], None, settings)
    assert text.served and text.finish_reason in ("stop", "length") and text.text
    again = served.chat([{"role": "user", "content": "hi"}], None, settings)
    assert again.text == text.text, "deterministic"
    tool = next(
        r
        for r in (
            served.chat([{"role": "user", "content": f"read {i}"}], TOOLS, settings)
            for i in range(20)
        )
        if r.tool_calls
    )
    assert tool.finish_reason == "tool_calls"
    assert tool.tool_calls[0].name == "read_file"
    assert sorted(tool.tool_calls[0].arguments) == ["lines", "path"]
    too_long = served.chat([{"role": "user", "content": "word " * 1000}], None, settings)
    assert not too_long.served and too_long.error == REFUSED_OVER_WINDOW
    assert LlamaServerWatch(served.base_url).poll().busy is False


def test_a_served_production_says_its_slots_to_the_gate(served) -> None:  # type: ignore[no-untyped-def]
    """`vibey-gh runner serve --runner simulated --slots 2` as production: its identity says
    the 2 slots it serves, so the gate never calls its parallelism unknown."""
    from vibey_gh.config import LocalModels
    from vibey_gh.runners.registry import identify_production

    config = LocalModels(runner="simulated", production_url=served.base_url)
    assert identify_production(config).serving_slots == 2
    gone = LocalModels(runner="simulated", production_url=f"http://127.0.0.1:{free_port()}")
    assert identify_production(gone).serving_slots is None, "not answering: unknown"


def test_every_pass_of_a_calibration_gets_the_same_answer_so_the_same_work() -> None:
    """The pass line keeps a real runner's prompt cache from serving a repeated conversation;
    the question is the same, and so is the answer's length: a turn is the same work in every
    pass, and its latency at N slots can be paired with its latency at one slot."""
    marks = Marks(0)
    turn = [{"role": "user", "content": "what does add do?"}]
    first, *later = [
        answer_for(marks.marked(turn, k), None, 768, loaded=False, noise=0.1) for k in (1, 2, 12)
    ]
    assert all(answer == first for answer in later)
    other = [{"role": "user", "content": "what does sub do?"}]
    assert answer_for(marks.marked(other, 1), None, 768, loaded=False, noise=0.1) != first
