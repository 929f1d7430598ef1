"""The storm's idle time runs a requested soak, once, after the calibrations it owes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from msgspec.structs import replace
from storm_fakes import FakeAllowed, FakeProduction, deps, make_queue

from vibey_gh.errors import Refused
from vibey_gh.slots.evidence.requests import RequestDocument
from vibey_gh.slots.evidence.soak_file import write_soak_request
from vibey_gh.slots.soak.record import SoakOutcome
from vibey_gh.state import StateLayout
from vibey_gh.storm.runner import run_storm
from vibey_gh.storm.setup import StormOptions


class FakeSoak:
    def __init__(self, error: Exception | None = None) -> None:
        self.asked: list[RequestDocument] = []
        self.error = error

    def __call__(self, *args: Any) -> SoakOutcome:
        request = args[-1]
        self.asked.append(request)
        if self.error is not None:
            raise self.error
        return SoakOutcome(request.fingerprint, 2, Path("soak.json"), "holds", True,
                           ("throughput held",), 7200.0, True)  # fmt: skip


def _request(layout: StateLayout) -> None:
    settings = {"runner": "embedded", "slots": 2, "duration_s": 7200.0}
    write_soak_request(layout, "a" * 16, {}, "no soak of 2h or more held at 2", 0.0, settings)


def test_an_idle_storm_runs_a_requested_soak_once(tmp_path: Path, layout: StateLayout) -> None:
    queue = make_queue(tmp_path, 0)
    _request(layout)
    soak = FakeSoak()
    storm_deps = replace(deps(layout, FakeAllowed(1), FakeProduction()), soak=soak)
    summary = run_storm(StormOptions(queue=queue, once=True, poll_s=0.05), storm_deps)
    assert [r.settings["slots"] for r in soak.asked] == [2]
    (ran,) = summary.calibrations
    assert ran["soak"]["verdict"] == "holds" and ran["soak"]["measured_s"] == 7200.0
    text = summary.log.read_text(encoding="utf-8") if summary.log else ""
    assert "idle with a soak request (aaaaaaaaaaaaaaaa): soaking" in text
    assert "soak at N=2: holds" in text


def test_a_soak_that_could_not_run_is_logged_and_not_retried_at_once(
    tmp_path: Path, layout: StateLayout
) -> None:
    queue = make_queue(tmp_path, 0)
    _request(layout)
    soak = FakeSoak(Refused("the production runner holds qwen3:8b"))
    storm_deps = replace(deps(layout, FakeAllowed(1), FakeProduction()), soak=soak)
    summary = run_storm(StormOptions(queue=queue, once=True, poll_s=0.05), storm_deps)
    text = summary.log.read_text(encoding="utf-8") if summary.log else ""
    assert "soak not run: the production runner holds qwen3:8b; trying again in 30s" in text
    assert len(soak.asked) == 1


def test_no_soak_request_no_soak(tmp_path: Path, layout: StateLayout) -> None:
    queue = make_queue(tmp_path, 0)
    soak = FakeSoak()
    storm_deps = replace(deps(layout, FakeAllowed(1), FakeProduction()), soak=soak)
    run_storm(StormOptions(queue=queue, once=True, poll_s=0.05), storm_deps)
    assert soak.asked == []
