"""Replay with think time, on the simulated runner: a worker waits each turn's think time
before sending it, records what it waited and which turn closed a run, and a stop never waits
out a think time."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ports import free_port
from tests.support.simulated import simulated_config
from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerLaunch
from vibey_gh.runners.contract import RunningRunner
from vibey_gh.runners.registry import runner_for
from vibey_gh.slots.corpus.turns import Segment, Turn
from vibey_gh.slots.judging.records import TurnRecord
from vibey_gh.slots.measurement.stepping.replay import replay_corpus

SETTINGS = ChatSettings(window=1024, max_tokens=12)


@pytest.fixture
def runner(tmp_path: Path) -> Iterator[RunningRunner]:
    config = simulated_config(knee=4, tokens_per_second=5000.0)
    launch = RunnerLaunch(4, 1024, free_port(), "default", tmp_path / "runner.log")
    running = runner_for("simulated", config=config).start(launch)
    running.wait_ready()
    try:
        yield running
    finally:
        running.stop()


def run(run_id: str, thinks: list[float]) -> Segment:
    turns = tuple(
        Turn(f"{run_id}#{i}", run_id, i, [{"role": "user", "content": f"{run_id} {i}"}], [], 10, t)
        for i, t in enumerate(thinks)
    )
    return Segment(f"{run_id}#0-{len(turns) - 1}", run_id, 0, turns)


def never(_turns: list[TurnRecord]) -> str | None:
    return None


def test_each_turn_waits_its_think_time_and_the_last_turn_closes_its_run(
    runner: RunningRunner,
) -> None:
    runs = [run("a", [0.0, 0.4, 0.2]), run("b", [0.0, 0.3])]
    outcome = replay_corpus(runner, runs, 2, SETTINGS, never, think=lambda t: t.think_s or 0.0)
    by_id = {record.turn_id: record for record in outcome.turns}
    assert set(by_id) == {"a#0", "a#1", "a#2", "b#0", "b#1"}
    for earlier, later, think in (("a#0", "a#1", 0.4), ("a#1", "a#2", 0.2), ("b#0", "b#1", 0.3)):
        assert by_id[later].think_s == think
        assert by_id[later].result.started - by_id[earlier].result.ended >= think - 0.01
    assert [r.turn_id for r in outcome.turns if r.closes] == sorted(
        ["a#2", "b#1"], key=lambda turn: by_id[turn].result.ended
    )


def test_an_early_stop_wakes_a_worker_in_its_think_time(runner: RunningRunner) -> None:
    runs = [run("a", [0.0, 60.0]), run("b", [0.0, 60.0])]
    began = time.monotonic()
    outcome = replay_corpus(
        runner,
        runs,
        2,
        SETTINGS,
        lambda turns: "decided" if len(turns) == 2 else None,
        think=lambda t: t.think_s or 0.0,
    )
    assert outcome.ended_early == "decided"
    assert time.monotonic() - began < 10.0  # not the 60 s think time


def test_an_outside_stop_wakes_a_worker_in_its_think_time(runner: RunningRunner) -> None:
    stopped = threading.Event()
    timer = threading.Timer(0.5, stopped.set)
    timer.start()
    began = time.monotonic()
    outcome = replay_corpus(
        runner,
        [run("a", [0.0, 60.0])],
        1,
        SETTINGS,
        never,
        accept=lambda: not stopped.is_set(),
        think=lambda t: t.think_s or 0.0,
    )
    timer.join()
    assert [r.turn_id for r in outcome.turns] == ["a#0"]
    assert time.monotonic() - began < 10.0


def test_the_drain_wakes_a_worker_in_its_think_time(runner: RunningRunner) -> None:
    # every corpus turn is answered once; worker 1 then waits a long think time before a
    # repeat while worker 0 ends the measurement: the drain needs no more turns, so it wakes
    sent: set[str] = set()

    def think(turn: Turn) -> float:
        repeat = turn.id in sent
        sent.add(turn.id)
        return 60.0 if repeat and threading.current_thread().name.endswith("-1") else 0.0

    began = time.monotonic()
    outcome = replay_corpus(
        runner,
        [run("a", [0.0]), run("b", [0.0])],
        2,
        SETTINGS,
        never,
        keep_going=lambda turns: len(turns) < 3,
        think=think,
    )
    assert time.monotonic() - began < 10.0
    assert {r.turn_id for r in outcome.turns} == {"a#0", "b#0"}


def test_a_step_judged_turn_by_turn_ends_without_a_whole_pass(runner: RunningRunner) -> None:
    # runs whose last tool takes a minute: a pass would take minutes; the step ends after three
    # turns, the second worker stopping in its first wait (its share of its run's mean think
    # time, about 6 s, so the two do not send in step) and no one waiting out the minute
    runs = [run(name, [0.0, 0.05, 0.05, 0.05, 60.0]) for name in "abc"]
    began = time.monotonic()
    outcome = replay_corpus(
        runner,
        runs,
        2,
        SETTINGS,
        never,
        keep_going=lambda turns: len(turns) < 3,
        think=lambda t: t.think_s or 0.0,
        by_turn=True,
    )
    assert time.monotonic() - began < 5.0
    served = [record.turn_id for record in outcome.turns]
    assert served == ["a#0", "a#1", "a#2"]
