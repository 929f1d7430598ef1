"""Nothing `slots allowed` reads besides the sealed evidence changes its answer: the figures
cache (edited, fuzzed, copied beside renamed or hard-linked evidence) is rebuilt, and a sweep
written to --out only (`recorded: false`) counts nowhere it is copied to."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace
from test_allowed import (
    DAY,
    DEVICE,
    NOW,
    RUNNER,
    WINDOW,
    config,
    deps_for,
    good_sweep,
    record,
)

from tests.support.evidence import write_sealed
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.evidence.figures_cache import figures_path
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint
from vibey_gh.slots.evidence.store import evidence_path, out_name
from vibey_gh.slots.gate.allowed import AllowedAnswer, decide_allowed
from vibey_gh.state import StateLayout

FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
TODAY = compute_fingerprint(DEVICE, RUNNER, WINDOW)
OTHER_RUNNER = replace(RUNNER, version="0.34.5")
OTHER = compute_fingerprint(DEVICE, OTHER_RUNNER, WINDOW)
BAD_VALUES = [None, "5", "", -1, -1.5, 1e308, 10**30, True, [], {}, [1], {"a": 1}, 0, 0.5]


def ask(root: Path, bounds: Bounds | None = None, runner: Any = RUNNER) -> AllowedAnswer:
    return decide_allowed(config("measured", bounds), deps=deps_for(root, runner))


def the_answer(answer: AllowedAnswer) -> tuple[Any, ...]:
    return answer.allowed, answer.ideal, answer.reason_code, answer.reason


def leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside `value` (objects and lists included)."""
    found: list[tuple[Any, ...]] = [path] if path else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += leaves(item, (*path, index))
    return found


def put(data: Any, path: tuple[Any, ...], value: Any) -> None:
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value


# --- the figures cache --------------------------------------------------------------------------


@FUZZ
@given(data=st.data())
def test_any_cache_field_made_bad_leaves_the_answer_as_the_evidence_gives_it(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    root = tmp_path_factory.mktemp("state")
    record(root, good_sweep())
    honest = ask(root)
    assert honest.allowed == 2
    stored = figures_path(StateLayout(root), TODAY.id)
    cache = json.loads(stored.read_text())
    path = data.draw(st.sampled_from(leaves(cache)), label="field")
    bad = data.draw(st.sampled_from(BAD_VALUES), label="value")
    put(cache, path, bad)
    stored.write_text(json.dumps(cache))
    assert the_answer(ask(root)) == the_answer(honest)
    # and the cache is whole again, made from the evidence
    assert the_answer(ask(root)) == the_answer(honest)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        (("figures", "steps", 2, "metrics", "peak_wired_bytes"), 1000),
        (("figures", "steps", 2, "metrics", "turns_per_hour_se"), -5.0),
        (("figures", "steps", 2, "metrics", "turns_per_hour"), None),
        (("figures", "baseline", "best_one_slot_turns_per_hour"), "1"),
    ],
)
def test_a_cache_edited_by_hand_is_rebuilt(
    tmp_path: Path, field: tuple[Any, ...], value: Any
) -> None:
    record(tmp_path, good_sweep())
    tight = replace(Bounds(), wired_ceiling=0.7)  # N=2's 18 GB of 24 breaks it
    honest = ask(tmp_path, tight)
    assert honest.allowed == 1 and "N=2 breaks memory" in honest.reason
    stored = figures_path(StateLayout(tmp_path), TODAY.id)
    cache = json.loads(stored.read_text())
    put(cache, field, value)
    stored.write_text(json.dumps(cache))
    assert the_answer(ask(tmp_path, tight)) == the_answer(honest)


@pytest.mark.parametrize("how", ["rename", "hard link", "copy"])
def test_evidence_under_another_fingerprint_s_name_with_its_cache_is_not_counted(
    tmp_path: Path, how: str
) -> None:
    layout = StateLayout(tmp_path)
    source = record(tmp_path, good_sweep())
    assert ask(tmp_path).allowed == 2  # its figures are cached under its own fingerprint
    target = evidence_path(layout, OTHER.id)
    {"rename": os.rename, "hard link": os.link, "copy": shutil.copyfile}[how](source, target)
    shutil.copyfile(figures_path(layout, TODAY.id), figures_path(layout, OTHER.id))
    answer = ask(tmp_path, runner=OTHER_RUNNER)
    assert (answer.allowed, answer.reason_code) == (1, "unusable_evidence"), answer.reason
    assert f"file named {OTHER.id} holds the evidence of fingerprint {TODAY.id}" in answer.reason


def test_stale_evidence_stays_stale_whatever_its_cache_says(tmp_path: Path) -> None:
    record(tmp_path, good_sweep(), age_days=41)
    assert ask(tmp_path).reason_code == "stale"
    stored = figures_path(StateLayout(tmp_path), TODAY.id)
    cache = json.loads(stored.read_text())
    cache["created_at"] = NOW
    stored.write_text(json.dumps(cache))
    again = ask(tmp_path)
    assert (again.allowed, again.reason_code) == (1, "stale")
    assert f"{(NOW - (NOW - 41 * DAY)) / DAY:.0f} days old" in again.reason


# --- sweeps written to --out only ---------------------------------------------------------------


def not_recorded(root: Path, note: str) -> dict[str, Any]:
    """The evidence of `good_sweep` as a refused sweep writes it to --out: recorded false."""
    path = record(root, good_sweep())
    data = json.loads(path.read_text())
    data.pop("integrity")
    data["recorded"] = False
    data["notes"] = [note]
    path.unlink()
    return data


def test_a_refused_sweep_goes_to_out_under_a_name_that_is_no_fingerprint() -> None:
    assert out_name(TODAY.id, recorded=True) == f"slots-{TODAY.id}.json"
    assert out_name(TODAY.id, recorded=False) == f"slots-{TODAY.id}-not-recorded.json"


@FUZZ
@given(
    note=st.sampled_from(
        [
            "calibration runner 0.34.5 is not production's 0.34.4: not recorded as this "
            "device's evidence",
            "no clean step was measured: not recorded as this device's evidence",
            "",
        ]
    ),
    how=st.sampled_from(["copy", "hard link", "rename"]),
    with_cache=st.booleans(),
)
def test_a_sweep_written_to_out_only_counts_nowhere_it_is_copied(
    tmp_path_factory: pytest.TempPathFactory, note: str, how: str, with_cache: bool
) -> None:
    root = tmp_path_factory.mktemp("state")
    layout = StateLayout(root)
    if with_cache:  # figures of a recorded twin of it, left beside it
        record(root, good_sweep())
        assert ask(root).allowed == 2
    out = tmp_path_factory.mktemp("out") / out_name(TODAY.id, recorded=False)
    write_sealed(out, not_recorded(root, note))
    target = evidence_path(layout, TODAY.id)
    {"rename": os.rename, "hard link": os.link, "copy": shutil.copyfile}[how](out, target)
    answer = ask(root)
    assert (answer.allowed, answer.reason_code) == (1, "unusable_evidence"), answer.reason
    assert "not recorded as this device's evidence" in answer.reason
    assert answer.requested


def test_a_refused_sweep_edited_to_say_recorded_is_refused_as_edited(tmp_path: Path) -> None:
    data = not_recorded(tmp_path, "no clean step was measured: not recorded")
    path = evidence_path(StateLayout(tmp_path), TODAY.id)
    write_sealed(path, data)
    sealed = json.loads(path.read_text())
    sealed["recorded"] = True  # without a new digest
    path.write_text(json.dumps(sealed, indent=2, sort_keys=True))
    answer = ask(tmp_path)
    assert (answer.allowed, answer.reason_code) == (1, "unusable_evidence")
    assert "integrity digest does not match" in answer.reason
