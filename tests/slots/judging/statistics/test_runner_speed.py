"""pp and tg of a step: llama-bench's mean ± sd of each turn's rate, from the runner's own
timings, and the reason where there is none."""

from __future__ import annotations

import statistics

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.slot_builders import answer, make_step, same_answers
from vibey_gh.errors import MalformedJson
from vibey_gh.interfaces.schema import as_json, checked
from vibey_gh.interfaces.turns import RunnerTimings
from vibey_gh.slots.judging.baseline import sweep_figures
from vibey_gh.slots.judging.figures import SweepFigures
from vibey_gh.slots.judging.records import TurnRecord
from vibey_gh.slots.judging.statistics.runner_speed import (
    NO_TURN_SERVED,
    NOT_RECORDED,
    NOT_REPORTED,
    NOTHING_TIMED,
    RunnerSpeed,
    runner_speed,
)


def timed(prompt: tuple[int, float] | None, output: tuple[int, float] | None):  # type: ignore[no-untyped-def]
    p_tokens, p_s = prompt or (None, None)
    o_tokens, o_s = output or (None, None)
    return msgspec.structs.replace(
        answer("x"), runner_timings=RunnerTimings(p_tokens, p_s, o_tokens, o_s)
    )


def test_each_turns_rate_gives_the_mean_and_sample_sd() -> None:
    turns = [timed((500, 1.0), (20, 1.0)), timed((300, 0.5), (30, 1.0)), timed((0, 0.0), None)]
    speed = runner_speed(turns)
    # a turn whose prompt came whole from the cache has no pp; one without tg counts none
    assert speed.prompt.mean == pytest.approx(550.0) and speed.prompt.turns == 2
    assert speed.prompt.sd == pytest.approx(statistics.stdev([500.0, 600.0]))
    assert speed.generation.mean == pytest.approx(25.0) and speed.generation.turns == 2


def test_a_reply_of_one_token_has_no_generation_rate() -> None:
    """llama.cpp samples a reply's first token with its prompt and times generation from it:
    a tool call of one token reads 0.001 ms, which would make the step's tg a million."""
    speed = runner_speed([timed((100, 0.5), (1, 1e-6)), timed((100, 0.5), (64, 1.0))])
    assert speed.generation.mean == pytest.approx(64.0) and speed.generation.turns == 1
    alone = runner_speed([timed((100, 0.5), (1, 1e-6))])
    assert alone.generation.mean is None and alone.generation.why_none == NOTHING_TIMED
    assert alone.prompt.mean == pytest.approx(200.0)


def test_one_turn_has_a_mean_without_an_sd() -> None:
    speed = runner_speed([timed((100, 0.5), (10, 1.0))])
    assert speed.prompt.mean == pytest.approx(200.0) and speed.prompt.sd is None


@pytest.mark.parametrize(
    ("turns", "why"),
    [
        ([], NO_TURN_SERVED),
        ([answer("x")], NOT_RECORDED),
        ([timed(None, None)], NOT_REPORTED),
        ([timed((0, 0.0), (0, 0.0))], NOTHING_TIMED),
    ],
    ids=["nothing served", "older evidence", "runner silent", "nothing to divide"],
)
def test_no_figure_is_none_with_its_reason_never_zero(turns: list, why: str) -> None:  # type: ignore[type-arg]
    speed = runner_speed(turns)
    for rate in (speed.prompt, speed.generation):
        assert (rate.mean, rate.sd, rate.why_none) == (None, None, why)


def test_a_step_without_recorded_timings_reads_not_recorded_through_stored_figures() -> None:
    steps = [make_step(0, 1, same_answers()), make_step(1, 2, same_answers())]
    figures = checked(as_json(sweep_figures(steps)), SweepFigures)
    assert all(s.speed is not None for s in figures.steps)
    assert {s.speed.prompt.why_none for s in figures.steps if s.speed} == {NOT_RECORDED}


def test_stored_speeds_are_checked_as_they_are_read() -> None:
    good = as_json(runner_speed([timed((100, 0.5), (10, 1.0))]))
    assert checked(good, RunnerSpeed).prompt.mean == pytest.approx(200.0)
    for damaged in (
        {"mean": -1.0, "sd": None, "turns": 1, "why_none": None},
        {"mean": None, "sd": None, "turns": 0, "why_none": None},
    ):
        with pytest.raises(MalformedJson):
            checked({**good, "prompt": damaged}, RunnerSpeed)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 10**6), st.floats(0, 1e4), st.integers(0, 10**4), st.floats(0, 1e4)
        ),
        max_size=6,
    )
)
def test_a_turns_timings_survive_the_record_and_the_figure_is_a_pure_function_of_them(
    pairs: list[tuple[int, float, int, float]],
) -> None:
    results = [
        msgspec.structs.replace(answer("x"), runner_timings=RunnerTimings(*pair)) for pair in pairs
    ]
    records = [TurnRecord(f"t{i}", "s", 0, r) for i, r in enumerate(results)]
    read_back = [checked(as_json(r), TurnRecord).result for r in records]
    assert read_back == results
    assert runner_speed(read_back) == runner_speed(results)


@pytest.mark.parametrize("stored", [{"prompt_s": -1.0}, {"prompt_tokens": 1.5}, "fast"])
def test_implausible_stored_timings_are_refused_naming_the_field(stored: object) -> None:
    record = as_json(TurnRecord("t", "s", 0, answer("x")))
    record["result"]["runner_timings"] = stored  # type: ignore[index]
    with pytest.raises(MalformedJson, match="runner_timings"):
        checked(record, TurnRecord)
