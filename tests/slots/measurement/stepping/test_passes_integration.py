"""Pass marks on real llama.cpp (the embedded runner, the shipped SmolLM2): a repeated pass
reuses from the prompt cache what its conversation shares within itself, as the first pass
did, and not the conversation the first pass left; unmarked, it would reuse all of it.

Tiny on purpose (2 CPU cores shared): one slot, a 1024-token window, one conversation of two
turns, 4 output tokens; two passes marked, then three turns unmarked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.ports import free_port
from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerLaunch
from vibey_gh.runners.llamacpp.embedded import EmbeddedRunner
from vibey_gh.slots.corpus.turns import Segment, Turn
from vibey_gh.slots.judging.records import TurnRecord
from vibey_gh.slots.measurement.stepping.replay import replay_corpus
from vibey_gh.state import StateLayout

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

WINDOW = 1024
SETTINGS = ChatSettings(window=WINDOW, max_tokens=4, timeout_s=120)
QUESTION = "Read this list and say which item is a fruit: " + ", ".join(
    f"stone {n}" for n in range(24)
)


def conversation() -> Segment:
    system = {"role": "system", "content": "You are terse."}
    first = [system, {"role": "user", "content": QUESTION + ", apple."}]
    second = [
        *first,
        {"role": "assistant", "content": "apple"},
        {"role": "user", "content": "Why?"},
    ]
    turns = (Turn("r#0", "r", 0, first, [], 1, None), Turn("r#1", "r", 1, second, [], 1, None))
    return Segment("r#0-1", "r", 0, turns)


def cached(turns: list[TurnRecord]) -> list[int]:
    ordered = sorted(turns, key=lambda t: t.result.started)
    assert all(t.result.served for t in ordered), [t.result.error for t in ordered]
    counts = [t.result.cached_tokens for t in ordered]
    assert all(c is not None for c in counts), "llama-server reports its cached prompt tokens"
    return [c for c in counts if c is not None]


def test_a_repeated_pass_reuses_only_what_its_conversation_shares(tmp_path: Path) -> None:
    launch = RunnerLaunch(1, WINDOW, free_port(), "default", tmp_path / "runner.log", threads=2)
    running = EmbeddedRunner(StateLayout(tmp_path / "state")).start(launch)
    try:
        running.wait_ready(180)
        by_mark = {}
        for mark in (True, False):
            outcome = replay_corpus(
                running,
                [conversation()],
                1,
                SETTINGS,
                # unmarked, the repeat's opening turn is all that is asked of it
                lambda turns, mark=mark: None if mark or len(turns) < 3 else "enough",
                keep_going=lambda turns: len(turns) < 4,
                mark_passes=mark,
            )
            by_mark[mark] = outcome.turns
    finally:
        running.stop()
    prompt = by_mark[True][0].result.prompt_tokens or 0
    first_open, first_next, again_open, again_next = cached(by_mark[True])
    # the second turn of a pass reuses the first turn's prompt, in either pass
    assert first_next > prompt // 2 and again_next > prompt // 2
    assert abs(again_next - first_next) <= 8
    # the repeat's opening turn reuses no more than the system prompt before the mark
    assert again_open < prompt // 4, (again_open, prompt)
    # unmarked, the same opening turn is served from what the first pass left
    unmarked = cached(by_mark[False])
    assert unmarked[2] > prompt * 3 // 4, (unmarked, prompt)
