"""Pass marks: where the line goes, and that a repeated pass is not served from the cache an
earlier pass left (the simulated runner, cached prompt tokens twice as cheap, every earlier
prompt kept: what a llama-server with a prompt cache does)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from statistics import median

import pytest

from tests.support.ports import free_port
from vibey_gh.config import SimulatedModel
from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerLaunch
from vibey_gh.runners.contract import Messages, RunningRunner
from vibey_gh.runners.simulated.runner import SimulatedRunner
from vibey_gh.slots.corpus.turns import Segment, Turn
from vibey_gh.slots.judging.records import TurnRecord
from vibey_gh.slots.measurement.stepping.passes import Marks, pass_line
from vibey_gh.slots.measurement.stepping.replay import replay_corpus

SYSTEM = "You are a careful engineer.\nWork in small steps.\n"
WINDOW = 8192
SETTINGS = ChatSettings(window=WINDOW, max_tokens=4)


def conversation(run: str, turns: int) -> Messages:
    # each run's own opening is long, so reading it is most of what a turn costs
    messages: Messages = [{"role": "system", "content": SYSTEM + f"Task {run}: " + run * 6000}]
    for index in range(turns):
        messages.append({"role": "user", "content": f"{run} step {index}"})
    return messages


def run(name: str) -> Segment:
    turns = tuple(
        Turn(f"{name}#{i}", name, i, conversation(name, i + 1), [], 10, None) for i in range(2)
    )
    return Segment(f"{name}#0-1", name, 0, turns)


def test_the_line_goes_where_the_conversations_stop_sharing_their_opening() -> None:
    segments = [run("a"), run("b")]
    marks = Marks.of(segments)
    assert marks.shared == len(SYSTEM)  # the line after the shared system prompt
    original = segments[0].turns[1].messages
    sent = marks.marked(original, 3)
    assert (
        sent[0]["content"] == SYSTEM + pass_line(3) + "\n" + original[0]["content"][len(SYSTEM) :]
    )
    assert sent[1:] == original[1:]
    assert original[0]["content"] == conversation("a", 2)[0]["content"]  # the corpus unchanged
    # conversations that all open alike get it at the end of the opening
    alike = [
        Segment(
            "s", "s", 0, (Turn("t", "s", 0, [{"role": "system", "content": "x"}], [], 1, None),)
        )
    ]
    assert (
        Marks.of(alike).marked(alike[0].turns[0].messages, 1)[0]["content"]
        == f"x\n\n{pass_line(1)}"
    )
    parts: Messages = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert Marks(0).marked(parts, 2)[0]["content"][-1] == {"type": "text", "text": pass_line(2)}
    calls: Messages = [{"role": "assistant", "content": None}]
    assert Marks(0).marked(calls, 2) == [{"role": "system", "content": pass_line(2)}, *calls]


@pytest.fixture
def cached_runner(tmp_path: Path) -> Iterator[RunningRunner]:
    model = SimulatedModel(
        knee=1, noise=0.0, tokens_per_second=300.0, cache_speedup=2.0, cache_tokens=100_000
    )
    running = SimulatedRunner(model).start(
        RunnerLaunch(1, WINDOW, free_port(), "simulated", tmp_path / "runner.log")
    )
    try:
        running.wait_ready(30.0)
        yield running
    finally:
        running.stop()


def pass_seconds(turns: list[TurnRecord], segments: int) -> tuple[float, float]:
    """Median turn latency in the first pass and in the second (turns in the order sent): the
    median, so one turn slowed by another process on a loaded machine does not decide."""
    ordered = sorted(turns, key=lambda t: t.result.started)
    per_pass = 2 * segments
    first, second = ordered[:per_pass], ordered[per_pass : 2 * per_pass]
    assert [t.turn_id for t in first] == [t.turn_id for t in second]
    first_s = median(t.result.ended - t.result.started for t in first)
    return first_s, median(t.result.ended - t.result.started for t in second)


def test_a_repeated_pass_is_no_faster_marked_and_faster_unmarked(
    cached_runner: RunningRunner,
) -> None:
    segments = [run("a"), run("b"), run("c")]
    readings = {}
    for mark in (True, False):
        outcome = replay_corpus(
            cached_runner,
            segments,
            1,
            SETTINGS,
            lambda _turns: None,
            keep_going=lambda turns: len(turns) < 4 * len(segments),
            mark_passes=mark,
        )
        first, second = pass_seconds(outcome.turns, len(segments))
        readings[mark] = second / first
        shares = {
            p: sum(t.result.cached_tokens or 0 for t in outcome.turns if t.pass_number == p)
            for p in (1, 2)
        }
        if mark:
            # the runner's own count: a repeat reuses what its first pass reused, no more
            assert shares[2] == pytest.approx(shares[1], rel=0.02)
    assert readings[True] > 0.95, readings
    assert readings[False] < 0.85, readings
