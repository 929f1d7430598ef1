"""Streamed and unstreamed answers of the same turn agree on real llama.cpp: the embedded runner
(xllamacpp with the shipped SmolLM2) and a llama-server built from source, where one is here.

Tiny on purpose (2 CPU cores shared): one slot, a 512-token window, at most 8 output tokens
(the shipped model answers both turns in text, cut at that length, as it does at 24).
At one slot and temperature 0 llama.cpp answers the same prompt the same way, so the
reassembled stream must be exactly the unstreamed answer.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ports import free_port
from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerLaunch
from vibey_gh.lanes.tools import tool_definitions
from vibey_gh.runners.contract import Runner, RunningRunner
from vibey_gh.runners.llamacpp.embedded import EmbeddedRunner
from vibey_gh.runners.llamacpp.llama_server import LlamaServerRunner
from vibey_gh.state import StateLayout

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

WINDOW = 512
PLAIN = ChatSettings(window=WINDOW, max_tokens=8, timeout_s=120)
STREAMED = ChatSettings(window=WINDOW, max_tokens=8, timeout_s=120, stream=True)
TURNS = [
    ([{"role": "user", "content": "Name three colours of the rainbow."}], None),
    (
        [
            {"role": "system", "content": "Use the read_file tool to answer."},
            {"role": "user", "content": "What is in setup.py?"},
        ],
        tool_definitions(),
    ),
]
REPO = Path(__file__).resolve().parents[2]
LLAMA_SERVER = (
    str(REPO / "tools" / "bin" / "llama-server")
    if (REPO / "tools" / "bin" / "llama-server").exists()
    else shutil.which("llama-server")
)


def started(runner: Runner, root: Path) -> Iterator[RunningRunner]:
    launch = RunnerLaunch(
        1, WINDOW, free_port(), "default", root / "runner.log", binary=LLAMA_SERVER, threads=2
    )
    running = runner.start(launch)
    try:
        running.wait_ready(180)
        yield running
    finally:
        running.stop()


def assert_streamed_matches_unstreamed(running: RunningRunner) -> None:
    for messages, tools in TURNS:
        whole = running.chat(messages, tools, PLAIN)
        parts = running.chat(messages, tools, STREAMED)
        assert whole.served, whole.error
        assert parts.served, parts.error
        assert (parts.text, parts.tool_calls, parts.finish_reason) == (
            whole.text,
            whole.tool_calls,
            whole.finish_reason,
        )
        assert parts.output_tokens == whole.output_tokens
        assert parts.streamed and parts.first_token is not None and parts.last_token is not None
        assert parts.started < parts.first_token <= parts.last_token <= parts.ended
        assert parts.token_chunks >= 2  # llama-server sends a chunk a token


def test_embedded_streams_what_it_answers_unstreamed(tmp_path: Path) -> None:
    for running in started(EmbeddedRunner(StateLayout(tmp_path / "state")), tmp_path):
        assert_streamed_matches_unstreamed(running)


@pytest.mark.skipif(
    LLAMA_SERVER is None, reason="no llama-server here (tools/install-llama-server.sh builds one)"
)
def test_llama_server_streams_what_it_answers_unstreamed(tmp_path: Path) -> None:
    runner = LlamaServerRunner(StateLayout(tmp_path / "state"))
    for running in started(runner, tmp_path):
        assert_streamed_matches_unstreamed(running)
