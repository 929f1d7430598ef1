"""`slots allowed` decisions: a table of cases and properties over generated sweeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from tests.support.clocks import ManualClock
from tests.support.evidence import write_evidence_file
from tests.support.slot_builders import (
    answer,
    bounds_strategy,
    make_step,
    same_answers,
)
from vibey_gh.config import LocalModels
from vibey_gh.errors import RunnerError
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.slots_interface import DeviceFacts, RunnerInfo
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint
from vibey_gh.slots.evidence.requests import request_path
from vibey_gh.slots.evidence.store import evidence_path
from vibey_gh.slots.gate.allowed import REASON_CODES, AllowedDeps, decide_allowed
from vibey_gh.state import StateLayout

NOW = 2_000_000_000.0
DAY = 86_400.0
DEVICE = DeviceFacts("Mac17,2", "Apple M5", 24 << 30, (), "macOS", "26.6.2")
RUNNER = RunnerInfo("ollama", "0.34.4", "gpt-oss:20b", "sha256:17052f91a42e")
WINDOW = 65536


def deps_for(root: Path, runner: RunnerInfo = RUNNER) -> AllowedDeps:
    return AllowedDeps(
        StateLayout(root), ManualClock(epoch=NOW), lambda: DEVICE, lambda _config: runner
    )


def config(declaration: int | str, bounds: Bounds | None = None) -> LocalModels:
    return LocalModels(
        concurrent_runs=declaration, runner="ollama", window=WINDOW, bounds=bounds or Bounds()
    )  # type: ignore[arg-type]


def good_sweep(steady: bool = True) -> list:
    """N=2 doubles throughput inside every bound; N=3 breaks fidelity."""
    # 30 turns a step: enough for ten batches, so a steady-state step has its interval
    changed = same_answers(30)
    for i in range(0, 18, 2):
        changed[i] = answer("plain now")
    return [
        make_step(0, 1, same_answers(30), duration=100, steady=steady),
        make_step(1, 1, same_answers(30), duration=100, steady=steady),
        make_step(2, 2, same_answers(30), duration=50, wired_gb=18.0, steady=steady),
        make_step(3, 3, changed, duration=40, steady=steady),
    ]


def record(root: Path, steps: list, age_days: float = 1.0, runner: RunnerInfo = RUNNER) -> Path:
    fp = compute_fingerprint(DEVICE, runner, WINDOW)
    path = evidence_path(StateLayout(root), fp.id)
    write_evidence_file(path, fp, steps, NOW - age_days * DAY)
    return path


CASES = [
    # (declaration, evidence, bounds, expected allowed, reason fragment, requested, reason code)
    (1, "none", None, 1, "declared 1", False, "declared"),
    (
        "measured",
        "none",
        None,
        1,
        "unmeasured: no evidence for this fingerprint (no evidence on this device yet)",
        True,
        "unmeasured",
    ),
    (
        "measured",
        "other-runner",
        None,
        1,
        "nearest evidence differs: runner 0.34.2 → 0.34.4",
        True,
        "unmeasured",
    ),
    ("measured", "stale", None, 1, "stale: evidence is 41 days old", True, "stale"),
    (
        "measured",
        "fresh",
        None,
        2,
        "measured: 2 slots stayed inside every bound",
        False,
        "measured",
    ),
    (2, "fresh", None, 2, "declared 2, and the evidence supports it", False, "declared"),
    (3, "fresh", None, 1, "declared 3, refused: 3 slots broke a bound: fidelity", False, "refused"),
    (4, "fresh", None, 1, "declared 4, refused: 4 slots were not measured", False, "refused"),
    (
        "measured",
        "fresh",
        replace(Bounds(), wired_ceiling=0.7),
        1,
        "N=2 breaks memory (peak wired",
        False,
        "measured",
    ),
    (
        "measured",
        "fresh",
        replace(Bounds(), min_gain=1.5),
        1,
        "N=2 gained +100%, under the 150% needed; N=3 breaks fidelity",
        False,
        "measured",
    ),
    (
        2,
        "fresh",
        replace(Bounds(), wired_ceiling=0.7),
        1,
        "2 slots broke a bound: peak wired",
        False,
        "refused",
    ),
]


@pytest.mark.parametrize(
    ("declaration", "evidence", "bounds", "expected", "fragment", "requested", "code"), CASES
)
def test_decision_table(
    tmp_path: Path, declaration, evidence, bounds, expected, fragment, requested, code
) -> None:
    if evidence == "fresh":
        record(tmp_path, good_sweep())
    elif evidence == "stale":
        record(tmp_path, good_sweep(), age_days=41)
    elif evidence == "other-runner":
        record(tmp_path, good_sweep(), runner=replace(RUNNER, version="0.34.2"))
    answer_ = decide_allowed(config(declaration, bounds), deps=deps_for(tmp_path))
    assert answer_.allowed == expected
    assert fragment in answer_.reason
    assert answer_.requested is requested
    assert answer_.reason_code == code and code in REASON_CODES
    assert answer_.to_json()["reason_code"] == code
    fp = compute_fingerprint(DEVICE, RUNNER, WINDOW).id
    assert request_path(StateLayout(tmp_path), fp).exists() is requested
    if declaration != 1:
        assert answer_.fingerprint == fp


def test_request_names_the_fingerprint_and_settings(tmp_path: Path) -> None:
    decide_allowed(config("measured"), deps=deps_for(tmp_path))
    fp = compute_fingerprint(DEVICE, RUNNER, WINDOW)
    data = json.loads(request_path(StateLayout(tmp_path), fp.id).read_text())
    assert data["fingerprint"]["id"] == fp.id
    assert data["settings"] == {"runner": "ollama", "model": "default", "window": WINDOW}


def test_corrupt_evidence_answers_one_with_the_error(tmp_path: Path) -> None:
    path = record(tmp_path, good_sweep())
    path.write_text("{not json")
    result = decide_allowed(config("measured"), deps=deps_for(tmp_path))
    assert result.allowed == 1
    assert "not valid JSON" in result.reason
    assert result.reason_code == "unusable_evidence"
    assert path.read_text() == "{not json"  # a reader never rewrites what it cannot read


def test_production_not_answering_answers_one(tmp_path: Path) -> None:
    def unreachable(_config: LocalModels) -> RunnerInfo:
        raise RunnerError("no answer from http://127.0.0.1:11434")

    deps = replace(deps_for(tmp_path), identify=unreachable)
    result = decide_allowed(config("measured"), deps=deps)
    assert (result.allowed, result.requested) == (1, False)
    assert "no answer from" in result.reason
    assert result.reason_code == "production_unreachable"


def test_the_nearest_evidence_is_named_past_unreadable_files(tmp_path: Path) -> None:
    other = record(tmp_path, good_sweep(), runner=replace(RUNNER, version="0.34.2"))
    (other.parent / "0000-broken.json").write_text("{not json")
    (other.parent / "0001-foreign.json").write_text('{"schema_version": 1, "kind": "other"}')
    result = decide_allowed(config("measured"), deps=deps_for(tmp_path))
    assert result.allowed == 1
    assert "; nearest evidence differs: runner 0.34.2 → 0.34.4 — calibration" in result.reason


def test_window_override_changes_the_fingerprint(tmp_path: Path) -> None:
    record(tmp_path, good_sweep())
    assert decide_allowed(config("measured"), deps=deps_for(tmp_path)).allowed == 2
    other = decide_allowed(config("measured"), window=32768, deps=deps_for(tmp_path))
    assert other.allowed == 1
    assert "window 65536 → 32768" in other.reason


# --- properties ---------------------------------------------------------------------------------

step_strategy = st.fixed_dictionaries(
    {
        "slots": st.integers(2, 6),
        "duration": st.floats(10, 200),
        "wired_gb": st.floats(1, 23),
        "swap_mb": st.floats(0, 500),
        "changed": st.integers(0, 5),
        "failed": st.booleans(),
        "log": st.sampled_from([(), ("context_shift",), ("reload",)]),
    }
)


def build_steps(specs: list[dict]) -> list:
    steps = [
        make_step(0, 1, same_answers(), duration=100),
        make_step(1, 1, same_answers(), duration=100),
    ]
    for i, spec in enumerate(specs):
        answers = same_answers()
        for j in range(spec["changed"]):
            answers[2 * j] = answer("changed")
        if spec["failed"]:
            answers[1] = answer(status=500, reason=None, error="http 500")
        steps.append(
            make_step(
                i + 2,
                spec["slots"],
                answers,
                duration=spec["duration"],
                wired_gb=spec["wired_gb"],
                swap_mb=spec["swap_mb"],
                log_kinds=spec["log"],
            )
        )
    return steps


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    specs=st.lists(step_strategy, max_size=4),
    bounds=bounds_strategy,
    declaration=st.sampled_from(["measured", 2, 3, 4]),
)
def test_allowed_never_answers_a_step_that_breaks_a_bound(
    tmp_path_factory, specs, bounds, declaration
) -> None:
    from vibey_gh.slots.judging.judge import judge_sweep

    root = tmp_path_factory.mktemp("prop")
    steps = build_steps(specs)
    record(root, steps)
    result = decide_allowed(config(declaration, bounds), deps=deps_for(root))
    if result.allowed > 1:
        verdicts = [v for v in judge_sweep(steps, bounds).verdicts if v.slots == result.allowed]
        assert any(v.qualifies and v.inside_bounds and not v.broken for v in verdicts)
        assert verdicts[-1].metrics.turns_per_hour >= (1 + bounds.min_gain) * 36.0 - 1e-9


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    declaration=st.sampled_from(["measured", 2, 5]),
    situation=st.sampled_from(["none", "stale", "other"]),
    age=st.floats(30.01, 400),
)
def test_without_usable_evidence_the_answer_is_one_and_a_request_is_written(
    tmp_path_factory, declaration, situation, age
) -> None:
    root = tmp_path_factory.mktemp("prop")
    if situation == "stale":
        record(root, good_sweep(), age_days=age)
    elif situation == "other":
        record(root, good_sweep(), runner=replace(RUNNER, model_digest="sha256:other"))
    result = decide_allowed(config(declaration), deps=deps_for(root))
    assert result.allowed == 1
    assert result.requested
    assert request_path(StateLayout(root), compute_fingerprint(DEVICE, RUNNER, WINDOW).id).exists()


def test_a_standing_request_is_not_rewritten_on_every_ask(tmp_path: Path) -> None:
    decide_allowed(config("measured"), deps=deps_for(tmp_path))
    path = request_path(StateLayout(tmp_path), compute_fingerprint(DEVICE, RUNNER, WINDOW).id)
    inode = path.stat().st_ino
    again = decide_allowed(config("measured"), deps=deps_for(tmp_path))
    assert again.requested and path.stat().st_ino == inode
    record(tmp_path, good_sweep(), age_days=41)  # the reason changes: the request follows
    decide_allowed(config("measured"), deps=deps_for(tmp_path))
    assert "stale" in json.loads(path.read_text())["reason"]


# --- stored figures -----------------------------------------------------------------------------


def stored_figures_file(root: Path) -> Path:
    from vibey_gh.slots.evidence.figures_cache import figures_path

    return figures_path(StateLayout(root), compute_fingerprint(DEVICE, RUNNER, WINDOW).id)


def test_allowed_keeps_the_figures_and_answers_from_them_until_the_evidence_changes(
    tmp_path: Path,
) -> None:
    from vibey_gh.files import atomic_write_json
    from vibey_gh.interfaces.schema import checked
    from vibey_gh.slots.judging.baseline import sweep_figures
    from vibey_gh.slots.judging.figures import SweepFigures

    evidence = record(tmp_path, good_sweep())
    stored = stored_figures_file(tmp_path)
    assert not stored.exists()
    first = decide_allowed(config("measured"), deps=deps_for(tmp_path))
    assert first.allowed == 2
    assert stored.exists()
    data = json.loads(stored.read_text())
    assert checked(data["figures"], SweepFigures) == sweep_figures(good_sweep())
    assert decide_allowed(config("measured"), deps=deps_for(tmp_path)) == first

    # stored figures that lie (N=3 agreeing fully with one slot would beat N=2) are not
    # believed: they are made again from the evidence
    three = data["figures"]["steps"][3]
    assert three["slots"] == 3
    three["agreement"]["structural_matches"] = three["agreement"]["compared"]
    three["metrics"]["turns_per_hour"] = 5000.0  # beyond N=2's interval
    atomic_write_json(stored, data)
    assert decide_allowed(config("measured"), deps=deps_for(tmp_path)) == first
    again = json.loads(stored.read_text())
    assert checked(again["figures"], SweepFigures) == sweep_figures(good_sweep())

    # the same evidence written again holds the same bytes: the kept figures still count
    kept = stored.stat().st_ino
    record(tmp_path, good_sweep())
    assert evidence.exists()
    assert decide_allowed(config("measured"), deps=deps_for(tmp_path)) == first
    assert stored.stat().st_ino == kept


def test_bounds_tightened_after_the_figures_were_kept_still_apply(tmp_path: Path) -> None:
    record(tmp_path, good_sweep())
    assert decide_allowed(config("measured"), deps=deps_for(tmp_path)).allowed == 2
    stored = stored_figures_file(tmp_path)
    kept = (stored.stat().st_ino, stored.read_bytes())
    tight = decide_allowed(
        config("measured", replace(Bounds(), wired_ceiling=0.7)), deps=deps_for(tmp_path)
    )
    assert tight.allowed == 1
    assert "N=2 breaks memory (peak wired" in tight.reason
    assert (stored.stat().st_ino, stored.read_bytes()) == kept  # judged from the kept figures


def test_the_age_of_the_evidence_is_read_from_the_evidence_not_its_figures(tmp_path: Path) -> None:
    from vibey_gh.files import atomic_write_json

    record(tmp_path, good_sweep(), age_days=41)
    first = decide_allowed(config("measured"), deps=deps_for(tmp_path))
    assert first.allowed == 1
    assert "stale: evidence is 41 days old" in first.reason
    stored = stored_figures_file(tmp_path)
    data = json.loads(stored.read_text())
    assert "created_at" not in data  # the age is read from the evidence on every call
    data["created_at"] = NOW - DAY  # kept figures that say the evidence is fresh are not read
    atomic_write_json(stored, data)
    again = decide_allowed(config("measured"), deps=deps_for(tmp_path))
    assert again.allowed == 1 and "stale: evidence is 41 days old" in again.reason


def test_figures_that_cannot_be_kept_do_not_change_the_answer(tmp_path: Path) -> None:
    evidence = record(tmp_path, good_sweep())
    content = evidence.read_bytes()
    stored = stored_figures_file(tmp_path)
    stored.parent.write_text("in the way")
    for _ in range(2):
        result = decide_allowed(config("measured"), deps=deps_for(tmp_path))
        assert (result.allowed, result.requested) == (2, False)
    assert evidence.read_bytes() == content
    assert stored.parent.read_text() == "in the way"


# --- what production serves now (drift) ---------------------------------------------------------


def test_an_answer_above_what_production_serves_says_so_and_names_apply(tmp_path: Path) -> None:
    record(tmp_path, good_sweep())
    serving_one = replace(RUNNER, serving_slots=1)
    answer = decide_allowed(config("measured"), deps=deps_for(tmp_path, serving_one))
    assert answer.allowed == 2 and answer.production_slots == 1
    assert answer.reason.endswith(
        "but production serves only 1 slot(s) now: `vibey-gh slots apply` gives it 2"
    )
    assert answer.to_json()["production_slots"] == 1
    serving_two = replace(RUNNER, serving_slots=2)
    enough = decide_allowed(config("measured"), deps=deps_for(tmp_path, serving_two))
    assert enough.production_slots == 2 and "production serves" not in enough.reason
    unknown = decide_allowed(config("measured"), deps=deps_for(tmp_path))
    assert unknown.production_slots is None and unknown.to_json()["production_slots"] is None
    assert unknown.reason.endswith(
        "production's parallelism is unknown: make sure it serves 2 slots "
        "(`vibey-gh slots apply` shows how)"
    ), "an answer above one says when production's parallelism cannot be checked"


def test_a_changed_production_setting_is_unmeasured_and_named(tmp_path: Path) -> None:
    record(tmp_path, good_sweep())
    tuned = replace(RUNNER, settings={"OLLAMA_KV_CACHE_TYPE": "q8_0"})
    answer = decide_allowed(config("measured"), deps=deps_for(tmp_path, tuned))
    assert answer.allowed == 1 and answer.requested
    assert "unmeasured" in answer.reason
    assert "runner setting OLLAMA_KV_CACHE_TYPE unset → q8_0" in answer.reason


def test_evidence_measured_without_intervals_still_answers_and_asks_for_a_calibration(
    tmp_path: Path,
) -> None:
    record(tmp_path, good_sweep(steady=False))
    answer_ = decide_allowed(config("measured"), deps=deps_for(tmp_path))
    assert answer_.allowed == 2, "the old evidence still answers"
    assert "measured without intervals" in answer_.reason
    assert answer_.requested and answer_.request is not None and answer_.request.exists()
    fresh = tmp_path / "fresh"
    record(fresh, good_sweep())
    again = decide_allowed(config("measured"), deps=deps_for(fresh))
    assert again.allowed == 2 and not again.requested
    assert "without intervals" not in again.reason


def test_a_what_if_answers_as_the_gate_would_and_files_no_request(tmp_path: Path) -> None:
    """What `slots calibrate` says `allowed` would answer must leave nothing behind: the
    answer is the gate's, its reason says a request would be filed, and none is."""
    layout = StateLayout(tmp_path)
    what_if = replace(deps_for(tmp_path), files_requests=False)
    answer = decide_allowed(config("measured"), deps=what_if)
    assert answer.allowed == 1 and answer.reason_code == "unmeasured"
    assert answer.reason.endswith("— `slots allowed` would request a calibration")
    assert not answer.requested and answer.fingerprint is not None
    assert not request_path(layout, answer.fingerprint).exists()
    filed = decide_allowed(config("measured"), deps=deps_for(tmp_path))
    assert filed.requested and request_path(layout, filed.fingerprint or "").exists()
