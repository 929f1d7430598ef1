"""A trace corpus's deepest turn, counted by the embedded runner's own tokenizer."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.ports import free_port
from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerLaunch
from vibey_gh.runners.contract import RunningRunner
from vibey_gh.runners.llamacpp.embedded import EmbeddedRunner
from vibey_gh.slots.corpus.corpus import build_corpus
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.slots.corpus.turns import Turn
from vibey_gh.state import StateLayout

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SAMPLES = Path("/work/shared/data/agent-traces")
WINDOW = 4096


def post(runner: RunningRunner, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        runner.base_url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.loads(answer.read())


def runner_count(runner: RunningRunner, messages: list[dict[str, Any]]) -> int:
    """Prompt tokens as the runner counts them: its chat template, then its tokenizer."""
    prompt = post(runner, "/apply-template", {"messages": messages})["prompt"]
    return len(post(runner, "/tokenize", {"content": prompt, "add_special": True})["tokens"])


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningRunner]:
    root = tmp_path_factory.mktemp("embedded")
    launch = RunnerLaunch(
        slots=1,
        window=WINDOW,
        port=free_port(),
        model="default",
        log_path=root / "runner.log",
        threads=2,
    )
    started = EmbeddedRunner(StateLayout(root / "state")).start(launch)
    try:
        started.wait_ready(180)
        yield started
    finally:
        started.stop()


@pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"the sample traces are absent ({SAMPLES})")
def test_the_scaled_trace_turn_nearest_the_edge_fits_with_its_answer_by_the_runners_count(
    runner: RunningRunner,
) -> None:
    cap = 768
    pool = build_pool(
        PoolSources(from_traces=[SAMPLES], fit="scale"), window=WINDOW, answer_cap=cap
    )
    corpus = build_corpus(pool, window=WINDOW, answer_cap=cap)

    def room(turn: Turn) -> int:
        return min(turn.max_tokens or cap, cap)

    # every turn fits by construction (test_traces); the one nearest the edge, by the runner
    edge = max(corpus.turns(), key=lambda turn: turn.depth_estimate + room(turn))
    counted = runner_count(runner, edge.messages)
    # prompt and answer inside the window: nothing for the runner to shift, cut or refuse
    assert counted + room(edge) <= WINDOW
    # and the stand-in text costs about what the estimate says
    assert counted >= 0.85 * edge.depth_estimate


@pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"the sample traces are absent ({SAMPLES})")
def test_a_demo_sized_trace_corpus_fills_the_window_by_the_runners_count(
    runner: RunningRunner,
) -> None:
    # Tokenizing needs no context: the runner's small window does not limit the count.
    window = 65536
    pool = build_pool(PoolSources(from_traces=[SAMPLES], fit="scale"), window=window)
    corpus = build_corpus(pool, window=window, segments_per_stratum=2, segment_turns=2)
    deepest = max(corpus.turns(), key=lambda turn: turn.depth_estimate)
    counted = runner_count(runner, deepest.messages)
    assert 0.9 * window <= counted <= window


def test_a_trace_runs_shared_blocks_come_back_from_the_runners_prompt_cache(
    runner: RunningRunner, tmp_path: Path
) -> None:
    requests = [
        {"t": 0, "type": "n", "in": 64 * n + 5, "out": 1, "hash_ids": list(range(1, n + 1))}
        for n in (8, 10)
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"id": "warm", "block_size": 64, "requests": requests}))
    (run,) = build_pool(PoolSources(from_traces=[path], fit="scale"), window=WINDOW).runs
    settings = ChatSettings(window=WINDOW, max_tokens=1, timeout_s=240)
    first, second = (runner.chat(turn.messages, None, settings) for turn in run.turns)
    assert first.served and second.served, (first.error, second.error)
    assert first.prompt_tokens is not None and second.cached_tokens is not None
    # The second request repeats the first's eight blocks: the runner reuses them.
    assert second.cached_tokens >= 0.9 * 64 * 8
