"""The calibration loop end to end on the simulated runner: fast, and with a known answer.

The simulated runner is a real server in a child process (llama-server's API over a capacity
model), started and stopped by the sweep like every other kind; only the model is missing.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from msgspec.structs import replace

from tests.support.progress import Recorder
from tests.support.simulated import calibrate, simulated_config
from vibey_gh.composition import build_environment
from vibey_gh.config import SimulatedModel
from vibey_gh.errors import BadInput
from vibey_gh.interfaces.schema import as_json
from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerLaunch
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.judging.judge import judge_sweep
from vibey_gh.slots.judging.metrics import step_metrics
from vibey_gh.slots.judging.statistics.sequential import look_times
from vibey_gh.slots.measurement.stepping.step import (
    ENDED_BAR_CAP,
    ENDED_CAP,
    ENDED_DECIDED,
    ENDED_MINIMUM,
    ENDED_OUT_OF_REACH,
)
from vibey_gh.state import StateLayout


def test_a_sweep_on_the_simulated_runner_finds_its_knee(
    tmp_path: Path, layout: StateLayout
) -> None:
    # turns of about a third of a second: the harness's own milliseconds per turn stay small;
    # steps up to 2 s: what is tested is the precision the bar is measured to
    config = simulated_config(max_step_seconds=2.0, tokens_per_second=200.0)
    corpus, outcome = calibrate(tmp_path, layout, config, max_slots=3)
    assert outcome.recorded and outcome.complete
    evidence = load_evidence(outcome.evidence)
    assert outcome.ideal == 2, outcome.reason
    wanted = {t.id for s in corpus.segments for t in s.turns}
    for step in evidence.steps:
        assert {t.turn_id for t in step.turns} == wanted, "every corpus turn at least once"
        assert step.measurement is not None
        assert step.measurement["end"] - step.measurement["start"] >= config.min_step_seconds / 2
        if step.slots > 1:
            # a step that serves more than the best before it is the next step's bar: it may
            # be measured to the cap for its precision after its gain was decided; one that
            # could not climb over the best before it by its cap stops (futility)
            ended = (ENDED_MINIMUM, ENDED_DECIDED, ENDED_CAP, ENDED_BAR_CAP, ENDED_OUT_OF_REACH)
            assert step.measurement["why_ended"] in ended
            continue
        # a one-slot run is the bar: measured on until its interval is within ±min_gain/2
        assert step.measurement["why_ended"] in (ENDED_MINIMUM, ENDED_DECIDED, ENDED_BAR_CAP)
        metrics = step_metrics(step)
        low, high = metrics.interval(0.9)
        half_width = (high - low) / 2 / metrics.turns_per_hour
        if step.measurement["why_ended"] == ENDED_BAR_CAP:
            assert not metrics.has_interval or half_width > 0.05
        else:
            assert half_width <= 0.05 + 0.01  # within a batch of the moment it was decided
    assert evidence.data["confidence"] == 0.9
    two = evidence.data["verdicts"][2]
    assert two["gain_low"] <= two["gain"] <= two["gain_high"]
    assert two["gain_low"] >= 0.10 and two["label"] == "qualifies"
    assert evidence.data["method"]["steps"]["kind"] == "steady-state"


def test_a_resumed_sweep_keeps_its_steps_and_decides_the_same(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = simulated_config()
    _, first = calibrate(tmp_path, layout, config, max_runs=2)
    assert not first.complete and first.new_steps == 2
    first_steps = load_evidence(first.evidence).steps
    recorder = Recorder()
    _, second = calibrate(tmp_path, layout, config, recorder)
    assert second.complete and second.resumed_steps == 2
    assert any("resuming: 2 completed step(s)" in m for m in recorder.messages)
    assert [s[0] for s in recorder.started] == list(range(2, 2 + second.new_steps))
    recorded = load_evidence(second.evidence).steps
    assert [as_json(s) for s in recorded[:2]] == [as_json(s) for s in first_steps]
    # the answer is the one its steps give, the resumed two among them (whether the simulated
    # knee is found on so short steps is `test_a_sweep_on_the_simulated_runner_finds_its_knee`'s
    # question, and a loaded machine may leave it undecided)
    assert second.ideal is not None
    assert second.ideal == judge_sweep(recorded, config.bounds).ideal


def test_a_checkpoint_of_another_step_length_is_not_resumed_nor_discarded_in_silence(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = simulated_config()
    calibrate(tmp_path, layout, config, max_runs=1, slots=(1, 1, 2))
    longer = replace(config, min_step_seconds=0.5)
    with pytest.raises(BadInput, match="--min-step-seconds 0.3 → 0.5"):
        calibrate(tmp_path, layout, longer, max_runs=1, slots=(1, 1, 2))
    recorder = Recorder()
    _, outcome = calibrate(
        tmp_path, layout, longer, recorder, max_runs=1, slots=(1, 1, 2), restart=True
    )
    assert outcome.resumed_steps == 0
    assert not any("resuming" in m for m in recorder.messages)


def test_the_memory_ceiling_ends_a_step_at_once(tmp_path: Path, layout: StateLayout) -> None:
    config = simulated_config()
    env = build_environment(config, layout)
    # a machine whose whole memory is what this one already has in use
    used = env.memory.sample().wired_bytes
    assert used is not None
    env = replace(env, device=replace(env.device, memory_bytes=used, memory_limit_bytes=None))
    corpus, outcome = calibrate(tmp_path, layout, config, env=env, slots=(1, 1, 2))
    steps = load_evidence(outcome.evidence).steps
    two = steps[2]
    assert two.ended_early is not None and "memory" in two.ended_early
    assert len(two.turns) < corpus.turn_count, "the step ended at once, before a full pass"
    assert outcome.ideal in (1, None)


def test_a_step_during_which_production_worked_is_measured_again(
    tmp_path: Path, layout: StateLayout
) -> None:
    from vibey_gh.runners.registry import runner_for

    # steps up to 2 s: step 2's first attempt outlasts the 1 Hz production watch
    config = simulated_config(max_step_seconds=2.0)
    production_port = int(config.production.rsplit(":", 1)[1])
    slow = replace(config, simulated=SimulatedModel(tokens_per_second=20.0))
    production = runner_for("simulated", config=slow).start(
        RunnerLaunch(1, 512, production_port, "simulated", tmp_path / "production.log")
    )
    production.wait_ready()
    recorder = Recorder()
    asked: list[threading.Thread] = []

    def busy_production(done: int) -> None:
        # inside step 2's first attempt: production serves a turn of about two seconds
        if recorder.started[-1] != (2, 2, 1) or done != 1 or asked:
            return
        settings = ChatSettings(window=512, max_tokens=40)
        thread = threading.Thread(
            target=production.chat,
            args=([{"role": "user", "content": "hello"}], None, settings),
        )
        asked.append(thread)
        thread.start()
        thread.join(0.5)

    recorder.turn_hook.append(busy_production)
    try:
        _, outcome = calibrate(tmp_path, layout, config, recorder, slots=(1, 1, 2))
    finally:
        for thread in asked:
            thread.join()
        production.stop()
    steps = load_evidence(outcome.evidence).steps
    assert steps[2].discarded_attempts == 1 and steps[2].attempt == 2
    assert steps[2].production.clean
    assert any("discarded" in m for m in recorder.messages)


@pytest.mark.parametrize("runner", ["simulated"])
def test_the_simulated_runner_is_identified_without_a_production_server(
    runner: str, tmp_path: Path
) -> None:
    from vibey_gh.runners.registry import identify_production

    config = replace(simulated_config(), runner=runner)
    info = identify_production(config)
    other = identify_production(replace(config, simulated=SimulatedModel(knee=3)))
    assert info.kind == "simulated" and info.version
    assert info.model_digest != other.model_digest, "another capacity model, another device"


def test_an_interleaved_step_serves_blocks_of_one_and_n_and_is_judged_on_them(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = replace(
        simulated_config(max_step_seconds=6.0, tokens_per_second=400.0), interleave_seconds=0.25
    )
    _, outcome = calibrate(tmp_path, layout, config, slots=(1, 1, 2))
    assert outcome.recorded
    evidence = load_evidence(outcome.evidence)
    assert evidence.data["method"]["interleave_seconds"] == 0.25
    one, _, two = evidence.steps
    assert not one.blocks
    assert [b.at_once for b in two.blocks[:8]] == [1, 2, 2, 1, 1, 2, 2, 1][: len(two.blocks)]
    assert two.measurement is not None and two.measurement["block_seconds"] == 0.25
    # eight pairs of 0.25 s blocks cannot close by half the 0.3 s minimum: no extra look
    assert one.measurement is not None
    assert two.measurement["looks"] == one.measurement["looks"] == len(look_times(0.3, 6))
    for turn in two.turns:
        if turn.block >= 0 and two.blocks[turn.block].at_once == 1:
            assert turn.worker == 0  # one at a time: worker 0's
    in_blocks = [t for t in two.turns if t.block >= 0]
    assert {t.worker for t in in_blocks} == {0, 1}
    verdict = evidence.data["verdicts"][2]
    assert verdict["gain_low"] <= verdict["gain"] <= verdict["gain_high"]
    # a checkpoint of steps that did not interleave is not resumed with ones that do
    plain = replace(config, interleave_seconds=None)
    calibrate(tmp_path, layout, plain, max_runs=1, slots=(1, 1, 2))
    with pytest.raises(BadInput, match="--interleave-seconds unset → 0.25"):
        calibrate(tmp_path, layout, config, max_runs=1, slots=(1, 1, 2))


def test_an_interleaved_step_whose_pairs_close_by_half_the_minimum_is_looked_at_there(
    tmp_path: Path, layout: StateLayout
) -> None:
    """Blocks of 0.05 s close eight pairs in under a second: the N=2 step plans a first look
    at 1 s of its 2 s minimum (where it stops on a clear gain depends on how fast this
    machine closes its blocks: the rule itself is tested with a clock in test_stopping)."""
    config = replace(
        simulated_config(min_step_seconds=2.0, max_step_seconds=10.0), interleave_seconds=0.05
    )
    _, outcome = calibrate(tmp_path, layout, config, slots=(1, 1, 2))
    assert outcome.recorded
    one, _, two = load_evidence(outcome.evidence).steps
    assert one.measurement is not None and two.measurement is not None
    assert two.measurement["looks"] == len(look_times(2.0, 10.0)) + 1
    assert one.measurement["looks"] == len(look_times(2.0, 10.0))
    assert two.measurement["why_ended"] == ENDED_DECIDED, two.measurement
