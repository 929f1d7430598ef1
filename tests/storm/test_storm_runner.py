"""The storm loop with a fake production runner: obeys `allowed`, records, calibrates, stops."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace
from storm_fakes import FakeAllowed, FakeCalibration, FakeProduction, deps, make_queue

from tests.support.hostile import hostile_production
from vibey_gh.config import LocalModels, load_config
from vibey_gh.errors import BadInput, ConfigError, Refused
from vibey_gh.lanes.client import production_client
from vibey_gh.lanes.records import iter_records
from vibey_gh.slots.evidence.requests import write_request
from vibey_gh.slots.measurement.calibration_setup import CalibrationOutcome
from vibey_gh.state import StateLayout
from vibey_gh.storm import runner as storm_runner
from vibey_gh.storm.lock import file_lock, model_lock
from vibey_gh.storm.runner import CANCELLED_WAIT_S, run_storm
from vibey_gh.storm.setup import StormControl, StormOptions, storm_folder


def options(queue: Path, **changes: Any) -> StormOptions:
    settings: dict[str, Any] = {"once": True, "poll_s": 0.05, **changes}
    return StormOptions(queue=queue, **settings)


def spans(layout: StateLayout, queue: Path) -> list[tuple[float, float]]:
    found = []
    for record in iter_records(storm_folder(layout, queue)):
        assert record.start is not None and record.end is not None
        found.append((record.start["t"], record.end["t"]))
    return sorted(found)


def request_calibration(layout: StateLayout) -> None:
    write_request(layout, "f" * 16, {}, "unmeasured", 0.0, {"runner": "embedded"})


def test_one_allowed_runs_the_lanes_one_at_a_time(tmp_path: Path, layout: StateLayout) -> None:
    queue = make_queue(tmp_path, 3)
    said: list[str] = []
    summary = run_storm(options(queue), deps(layout, FakeAllowed(1), FakeProduction(), said=said))
    assert summary.answer().queue == {"pending": 0, "running": 0, "done": 3, "failed": 0}
    times = spans(layout, queue)
    assert len(times) == 3
    assert all(later[0] >= earlier[1] for earlier, later in zip(times, times[1:], strict=False))
    log = summary.log
    assert log is not None and log.parent.parent == layout.lanes
    text = log.read_text(encoding="utf-8")
    assert "pass 1: allowed 1 — unmeasured: no evidence" in text
    assert "pass 1: allowed 1 — unmeasured: no evidence" in said
    assert text.count(" answered after 2 turns") == 3


def test_two_allowed_runs_two_lanes_at_once(tmp_path: Path, layout: StateLayout) -> None:
    queue = make_queue(tmp_path, 2)
    both_in_flight = threading.Barrier(2, timeout=120)

    def meet(messages: list[dict[str, Any]]) -> None:
        if len(messages) == 2:
            both_in_flight.wait()  # breaks (and fails the lanes) unless two run together

    summary = run_storm(options(queue), deps(layout, FakeAllowed(2), FakeProduction(meet)))
    assert summary.answer().lanes_done == 2 and not both_in_flight.broken


def test_an_idle_storm_with_a_request_calibrates_once_then_asks_again(
    tmp_path: Path, layout: StateLayout
) -> None:
    queue = make_queue(tmp_path, 1)
    request_calibration(layout)
    allowed = FakeAllowed(1)
    calibration = FakeCalibration()
    summary = run_storm(options(queue), deps(layout, allowed, FakeProduction(), calibration))
    assert calibration.calls == [(storm_folder(layout, queue), queue.resolve() / "done")]
    assert summary.calibrations[0]["recorded"] is True
    text = summary.log.read_text(encoding="utf-8") if summary.log else ""
    assert "calibration recorded: ideal 1 — measured: one is the floor" in text
    assert text.index("calibration recorded") < text.rindex(": allowed 1")
    assert allowed.calls == summary.passes >= 3


def test_no_request_no_calibration(tmp_path: Path, layout: StateLayout) -> None:
    queue = make_queue(tmp_path, 1)
    calibration = FakeCalibration()
    run_storm(options(queue), deps(layout, FakeAllowed(1), FakeProduction(), calibration))
    assert calibration.calls == []


class SteppingClock:
    """Wall and monotonic time that move `step` seconds on every reading."""

    def __init__(self, step: float) -> None:
        self.t, self.step = 1_000.0, step

    def monotonic(self) -> float:
        self.t += self.step
        return self.t

    def now(self) -> float:
        return 2_000_000_000.0 + self.monotonic()

    def sleep(self, seconds: float) -> None:
        self.t += seconds


def test_a_calibration_that_could_not_run_is_retried_with_a_logged_backoff(
    tmp_path: Path, layout: StateLayout
) -> None:
    queue = make_queue(tmp_path, 0)
    request_calibration(layout)
    calibration = FakeCalibration(Refused("the production runner holds qwen3:8b"))
    storm_deps = replace(
        deps(layout, FakeAllowed(1), FakeProduction(), calibration), clock=SteppingClock(40.0)
    )
    summary = run_storm(options(queue, once=False, max_passes=12), storm_deps)
    tries = len(calibration.calls)
    assert 3 <= tries < 12  # tried again, but not on every pass: the waits double
    assert summary.log is not None
    text = summary.log.read_text(encoding="utf-8")
    assert (
        "calibration not run: the production runner holds qwen3:8b; "
        "trying again on an idle pass in 30s (attempt 1 failed)"
    ) in text
    assert "in 60s (attempt 2 failed)" in text and "in 120s (attempt 3 failed)" in text
    assert [c["attempt"] for c in summary.calibrations] == list(range(1, tries + 1))


def test_a_calibration_that_failed_runs_on_a_later_pass_and_then_never_again(
    tmp_path: Path, layout: StateLayout
) -> None:
    queue = make_queue(tmp_path, 0)
    request_calibration(layout)
    calls: list[Any] = []

    def busy_once(*args: Any) -> CalibrationOutcome:
        calls.append(args)
        if len(calls) == 1:
            raise Refused("the production runner holds qwen3:8b")
        return CalibrationOutcome("f" * 16, 1, "measured: one is the floor", True, True, None)

    storm_deps = replace(
        deps(layout, FakeAllowed(1), FakeProduction()),
        calibrate=busy_once,
        clock=SteppingClock(100.0),
    )
    summary = run_storm(options(queue, once=False, max_passes=8), storm_deps)
    assert len(calls) == 2
    assert summary.calibrations[0]["attempt"] == 1 and summary.calibrations[1]["recorded"]


def most_lanes_at_once(layout: StateLayout, tmp_path: Path, allowed: FakeAllowed) -> int:
    in_flight = [0, 0]  # now, most
    lock = threading.Lock()

    def slow(messages: list[dict[str, Any]]) -> None:
        with lock:
            in_flight[0] += 1
            in_flight[1] = max(in_flight[1], in_flight[0])
        time.sleep(0.2)
        with lock:
            in_flight[0] -= 1

    queue = make_queue(tmp_path, 3)
    summary = run_storm(options(queue), deps(layout, allowed, FakeProduction(slow)))
    assert summary.answer().lanes_done == 3
    return in_flight[1]


def test_lanes_never_outnumber_the_slots_production_serves(
    tmp_path: Path, layout: StateLayout
) -> None:
    capped = FakeAllowed(3)
    capped.production_slots = 1
    assert most_lanes_at_once(layout, tmp_path / "capped", capped) == 1
    assert most_lanes_at_once(layout, tmp_path / "free", FakeAllowed(3)) >= 2


def test_a_stop_interrupts_running_lanes_back_to_pending(
    tmp_path: Path, layout: StateLayout
) -> None:
    queue = make_queue(tmp_path, 2)
    control = StormControl()

    def stop_on_first(messages: list[dict[str, Any]]) -> None:
        control.request_stop()

    summary = run_storm(
        options(queue), deps(layout, FakeAllowed(1), FakeProduction(stop_on_first)), control
    )
    assert summary.stopped
    assert summary.answer().queue == {"pending": 2, "running": 0, "done": 0, "failed": 0}
    statuses = [r.status for r in iter_records(storm_folder(layout, queue))]
    assert statuses == ["interrupted"]


def test_max_passes_stops_claiming_but_lets_the_lane_finish(
    tmp_path: Path, layout: StateLayout
) -> None:
    queue = make_queue(tmp_path, 3)
    summary = run_storm(
        options(queue, once=False, max_passes=1), deps(layout, FakeAllowed(1), FakeProduction())
    )
    assert summary.passes == 1
    assert summary.answer().queue == {"pending": 2, "running": 0, "done": 1, "failed": 0}


def test_a_stop_while_max_passes_waits_for_its_lane_cancels_it_too(
    tmp_path: Path, layout: StateLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(storm_runner, "CANCELLED_WAIT_S", 0.1)
    queue = make_queue(tmp_path, 1)
    control = StormControl()
    release = threading.Event()

    def stop_later(messages: list[dict[str, Any]]) -> None:
        threading.Timer(0.3, control.request_stop).start()  # once the loop has returned
        release.wait(30)

    try:
        summary = run_storm(
            options(queue, once=False, max_passes=1, stop_grace_s=0.1),
            deps(layout, FakeAllowed(2), FakeProduction(stop_later)),  # room: no wait for it
            control,
        )
    finally:
        release.set()
    assert summary.stopped
    assert summary.answer().queue == {"pending": 1, "running": 0, "done": 0, "failed": 0}
    log = (storm_folder(layout, queue) / "storm.log").read_text(encoding="utf-8")
    assert log.index("1 passes done: waiting for running lanes") < log.index("did not stop")


def test_no_lane_starts_while_a_calibration_holds_the_model_lock(
    tmp_path: Path, layout: StateLayout
) -> None:
    queue = make_queue(tmp_path, 1)
    production = FakeProduction()
    with model_lock(layout, exclusive=True, role="calibration"):
        summary = run_storm(
            options(queue, once=False, max_passes=2), deps(layout, FakeAllowed(1), production)
        )
    assert production.requests == 0 and summary.answer().queue["pending"] == 1
    text = summary.log.read_text(encoding="utf-8") if summary.log else ""
    assert "not starting lanes: the model lock is held by calibration pid" in text


def test_a_broken_spec_fails_with_a_record(tmp_path: Path, layout: StateLayout) -> None:
    queue = make_queue(tmp_path, 1)
    (queue / "pending" / "broken.toml").write_text("id = \n", encoding="utf-8")
    summary = run_storm(options(queue), deps(layout, FakeAllowed(1), FakeProduction()))
    assert summary.answer().queue == {"pending": 0, "running": 0, "done": 1, "failed": 1}
    statuses = sorted(str(r.status) for r in iter_records(storm_folder(layout, queue)))
    assert statuses == ["answered", "failed"]


def test_one_storm_per_queue(tmp_path: Path, layout: StateLayout) -> None:
    queue = make_queue(tmp_path, 1)
    lock = layout.locks / f"{storm_folder(layout, queue).name}.lock"
    held = file_lock(lock, exclusive=True, wait=False, role="storm", name="storm queue lock")
    with held, pytest.raises(Refused, match="storm queue lock is held by storm pid"):
        run_storm(options(queue), deps(layout, FakeAllowed(1), FakeProduction()))


def test_a_restart_settles_what_a_crash_left_running(tmp_path: Path, layout: StateLayout) -> None:
    queue = make_queue(tmp_path, 2)
    first = run_storm(
        options(queue, once=False, max_passes=1), deps(layout, FakeAllowed(1), FakeProduction())
    )
    assert first.answer().queue["done"] == 1
    # as if killed right after the lane's end event, before its spec moved to done/
    done = queue / "done"
    for name in [p.name for p in done.iterdir()]:
        (done / name).rename(queue / "running" / name)
    production = FakeProduction()
    second = run_storm(options(queue), deps(layout, FakeAllowed(1), production))
    assert second.answer().queue == {"pending": 0, "running": 0, "done": 2, "failed": 0}
    assert second.started == 1 and production.requests == 2  # only the lane never run
    assert second.log is not None and "recovered lane0.toml: lane lane0-" in (
        second.log.read_text(encoding="utf-8")
    )


def test_bad_options_are_bad_input(tmp_path: Path, layout: StateLayout) -> None:
    queue = make_queue(tmp_path, 0)
    with pytest.raises(BadInput):
        run_storm(options(queue, poll_s=0), deps(layout, FakeAllowed(1), FakeProduction()))
    with pytest.raises(BadInput):
        run_storm(options(queue, max_passes=0), deps(layout, FakeAllowed(1), FakeProduction()))


def test_a_config_broken_mid_storm_goes_on_at_one_lane_and_logs_it_each_pass(
    tmp_path: Path, layout: StateLayout
) -> None:
    queue = make_queue(tmp_path, 4)
    config_dir = tmp_path / "cwd"
    config_dir.mkdir()
    config_file = config_dir / "vibey-gh.toml"
    config_file.write_text('[local_models]\nconcurrent_runs = "measured"\n')
    calls = 0

    def load() -> LocalModels:
        nonlocal calls
        calls += 1
        config = load_config(cwd=config_dir, environ={})
        if calls == 1:  # someone edits the file while the first lanes run
            config_file.write_text('[local_models]\nconcurrent_runs = "measurd"\n')
        return config

    request_calibration(layout)
    calibration = FakeCalibration()
    storm_deps = replace(
        deps(layout, FakeAllowed(3), FakeProduction(), calibration), load_config=load
    )
    summary = run_storm(options(queue), storm_deps)
    assert summary.answer().lanes_done == 4
    times = spans(layout, queue)
    first_three_end = max(end for _start, end in times[:3])
    assert times[3][0] >= first_three_end  # the fourth waited: one lane at a time
    text = (summary.log or Path()).read_text(encoding="utf-8")
    broken = text.count("allowed 1 — config error: ")
    assert broken >= 2 and broken == summary.passes - 1
    assert "local_models.concurrent_runs must be" in text
    assert calibration.calls == []  # nothing calibrates on a config nobody can read


def test_a_config_broken_from_the_start_is_bad_input(tmp_path: Path, layout: StateLayout) -> None:
    queue = make_queue(tmp_path, 1)

    def load() -> LocalModels:
        raise ConfigError("vibey-gh.toml: local_models.window must be an integer, not 'big'")

    storm_deps = replace(deps(layout, FakeAllowed(1), FakeProduction()), load_config=load)
    with pytest.raises(ConfigError) as raised:
        run_storm(options(queue), storm_deps)
    assert raised.value.exit_code == 2


@pytest.mark.timeout(60)
def test_a_stop_cancels_turns_a_dripping_production_never_ends(
    tmp_path: Path, layout: StateLayout
) -> None:
    """Production accepts each request and drips a byte at a time (the request timeout is 600 s):
    after the grace the turns are cancelled, the lanes end "interrupted", their specs go back."""
    queue = make_queue(tmp_path, 2)
    control = StormControl()
    with hostile_production("drip") as server:
        config = LocalModels(
            concurrent_runs="measured", window=4096, runner="llama-server",
            production_url=server.url,
        )  # fmt: skip
        world = replace(
            deps(layout, FakeAllowed(2), FakeProduction(), config=config),
            client_for=production_client,
        )
        stopped_at: list[float] = []

        def stop_once_both_drip() -> None:
            while server.answered.get("drip", 0) < 2:
                time.sleep(0.02)
            stopped_at.append(time.monotonic())
            control.request_stop()

        threading.Thread(target=stop_once_both_drip, daemon=True).start()
        summary = run_storm(options(queue, stop_grace_s=0.3), world, control)
        took = time.monotonic() - stopped_at[0]
    assert summary.stopped and took < 0.3 + CANCELLED_WAIT_S, took
    assert summary.answer().queue == {"pending": 2, "running": 0, "done": 0, "failed": 0}
    records = list(iter_records(storm_folder(layout, queue)))
    assert [r.status for r in records] == ["interrupted", "interrupted"]
    log = (storm_folder(layout, queue) / "storm.log").read_text(encoding="utf-8")
    assert "2 lane(s) still in a turn after 0.3s; cancelled 2 request(s) in flight" in log


def test_a_lane_that_ignores_the_cancel_goes_back_to_pending_unended(
    tmp_path: Path, layout: StateLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(storm_runner, "CANCELLED_WAIT_S", 0.1)
    queue = make_queue(tmp_path, 1)
    control = StormControl()
    release = threading.Event()

    def hang(messages: list[dict[str, Any]]) -> None:
        control.request_stop()
        release.wait(30)  # a turn no cancel reaches

    try:
        summary = run_storm(
            options(queue, stop_grace_s=0.1),
            deps(layout, FakeAllowed(1), FakeProduction(hang)),
            control,
        )
    finally:
        release.set()
    assert summary.answer().queue == {"pending": 1, "running": 0, "done": 0, "failed": 0}
    log = (storm_folder(layout, queue) / "storm.log").read_text(encoding="utf-8")
    assert "did not stop; its record has no end → pending/lane0.toml" in log


def test_a_stop_grace_out_of_range_is_bad_input(tmp_path: Path, layout: StateLayout) -> None:
    queue = make_queue(tmp_path, 1)
    for grace in (-1.0, 1e9, float("nan")):
        with pytest.raises(BadInput, match="the stop grace must be 0 to 60 seconds"):
            run_storm(
                options(queue, stop_grace_s=grace), deps(layout, FakeAllowed(1), FakeProduction())
            )
