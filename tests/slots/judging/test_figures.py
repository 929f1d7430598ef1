"""Sweep figures: their JSON form, and the figures stored beside an evidence file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from tests.support.evidence import write_evidence_file
from tests.support.slot_builders import (
    answer,
    bounds_strategy,
    make_step,
    same_answers,
)
from vibey_gh.errors import MalformedJson
from vibey_gh.files import atomic_write_json
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.interfaces.schema import as_json, checked
from vibey_gh.interfaces.slots_interface import DeviceFacts, RunnerInfo
from vibey_gh.slots.evidence.figures_cache import (
    FIGURES_KIND,
    evidence_identity,
    figures_path,
    read_cache_key,
    read_figures,
    save_figures,
)
from vibey_gh.slots.evidence.fingerprint import Fingerprint, compute_fingerprint
from vibey_gh.slots.evidence.store import evidence_path, load_evidence, recorded_digest
from vibey_gh.slots.judging import figures as figures_module
from vibey_gh.slots.judging.baseline import sweep_figures
from vibey_gh.slots.judging.figures import SweepFigures
from vibey_gh.slots.judging.judge import judge_figures, judge_sweep
from vibey_gh.state import StateLayout

CREATED_AT = 1_900_000_000.0
DEVICE = DeviceFacts("Mac17,2", "Apple M5", 24 << 30, (), "macOS", "26.6.2")
RUNNER = RunnerInfo("ollama", "0.34.4", "gpt-oss:20b", "sha256:17052f91a42e")
FINGERPRINT = compute_fingerprint(DEVICE, RUNNER, 65536)


def one_slot_pair() -> list:
    return [make_step(0, 1, same_answers()), make_step(1, 1, same_answers())]


def changed_answers(*indices: int) -> list:
    answers = same_answers()
    for i in indices:
        answers[i] = answer("plain now")
    return answers


def good_sweep() -> list:
    """N=2 doubles throughput inside every bound; N=3 breaks fidelity."""
    return [
        *one_slot_pair(),
        make_step(2, 2, same_answers(), duration=50, wired_gb=18.0),
        make_step(3, 3, changed_answers(0, 2, 4), duration=40),
    ]


def troubled_sweep() -> list:
    failing = same_answers()
    failing[3] = answer(status=500, reason=None, error="http 500: boom")
    odd = changed_answers(0)
    odd[7] = answer("cut", reason=None)
    return [
        make_step(0, 1, same_answers(), swap_mb=20.0),
        make_step(1, 1, changed_answers(2), duration=90, wired_gb=21.0),
        make_step(2, 2, failing, duration=50, log_kinds=["reload"]),
        make_step(3, 3, odd, duration=45, swap_mb=30.0),
        make_step(4, 4, same_answers(), duration=30, wired_gb=17.0, log_kinds=["context_shift"]),
    ]


SWEEPS = {
    "good": good_sweep,
    "troubled": troubled_sweep,
    "one slot only": one_slot_pair,
    "no one-slot run": lambda: [make_step(0, 2, same_answers(), duration=50)],
    "empty": list,
}
BOUNDS = {
    "default": Bounds(),
    "wired 0.7": replace(Bounds(), wired_ceiling=0.7),
    "min gain 1.5": replace(Bounds(), min_gain=1.5),
    "no fidelity tolerance": replace(Bounds(), fidelity_tolerance=0.0),
    "wide fidelity tolerance": replace(Bounds(), fidelity_tolerance=0.35),
}


def through_json(figures: SweepFigures) -> SweepFigures:
    return checked(json.loads(json.dumps(as_json(figures))), SweepFigures)


def verdict_summary(judgement) -> list[tuple]:  # type: ignore[no-untyped-def]
    return [(v.slots, v.label, v.qualifies, v.broken, v.warnings) for v in judgement.verdicts]


@pytest.mark.parametrize("sweep", SWEEPS.values(), ids=list(SWEEPS))
def test_figures_survive_json(sweep: Callable[[], list]) -> None:
    figures = sweep_figures(sweep())
    assert through_json(figures) == figures


@pytest.mark.parametrize("bounds", BOUNDS.values(), ids=list(BOUNDS))
@pytest.mark.parametrize("sweep", SWEEPS.values(), ids=list(SWEEPS))
def test_judging_figures_from_json_gives_the_verdicts_of_the_steps(
    sweep: Callable[[], list], bounds: Bounds
) -> None:
    steps = sweep()
    from_steps = judge_sweep(steps, bounds)
    from_json = judge_figures(through_json(sweep_figures(steps)), bounds)
    assert verdict_summary(from_json) == verdict_summary(from_steps)
    assert (from_json.ideal, from_json.reason) == (from_steps.ideal, from_steps.reason)
    assert from_json == from_steps


def test_the_bounds_table_gives_different_answers_on_the_good_sweep() -> None:
    # guards the table above: the bounds it varies really change verdicts
    figures = through_json(sweep_figures(good_sweep()))
    ideals = {name: judge_figures(figures, bounds).ideal for name, bounds in BOUNDS.items()}
    assert ideals == {
        "default": 2,
        "wired 0.7": 1,
        "min gain 1.5": 1,
        "no fidelity tolerance": 2,
        "wide fidelity tolerance": 3,
    }


step_spec = st.fixed_dictionaries(
    {
        "slots": st.integers(1, 6),
        "duration": st.floats(10, 200),
        "wired_gb": st.floats(1, 23),
        "swap_mb": st.floats(0, 500),
        "changed": st.lists(st.integers(0, 9), max_size=5),
        "failed": st.booleans(),
        "reasonless": st.booleans(),
        "log": st.lists(st.sampled_from(["context_shift", "reload", "oom", "other"]), max_size=3),
    }
)


def step_from(index: int, spec: dict[str, Any]):  # type: ignore[no-untyped-def]
    answers = changed_answers(*spec["changed"])
    if spec["failed"]:
        answers[1] = answer(status=500, reason=None, error="http 500")
    if spec["reasonless"]:
        answers[3] = answer("cut", reason=None)
    return make_step(
        index,
        spec["slots"],
        answers,
        duration=spec["duration"],
        wired_gb=spec["wired_gb"],
        swap_mb=spec["swap_mb"],
        log_kinds=spec["log"],
    )


@settings(max_examples=60, deadline=None)
@given(specs=st.lists(step_spec, max_size=5), bounds=bounds_strategy)
def test_any_sweep_judged_from_json_figures_matches_its_steps(specs, bounds) -> None:
    steps = [step_from(i, spec) for i, spec in enumerate(specs)]
    figures = sweep_figures(steps)
    assert through_json(figures) == figures
    assert judge_figures(through_json(figures), bounds) == judge_sweep(steps, bounds)


# --- stored beside the evidence -----------------------------------------------------------------


def write_evidence(layout: StateLayout, fingerprint: Fingerprint = FINGERPRINT) -> Path:
    path = evidence_path(layout, fingerprint.id)
    write_evidence_file(path, fingerprint, good_sweep(), CREATED_AT)
    return path


def stored_from_evidence(layout: StateLayout, path: Path) -> SweepFigures:
    """What allowed does on a miss: identity first, then read, make and keep the figures."""
    identity = evidence_identity(path)
    evidence = load_evidence(path)
    figures = sweep_figures(evidence.steps)
    save_figures(layout, FINGERPRINT.id, identity, recorded_digest(evidence), figures)
    return figures


def test_stored_figures_live_under_the_cache_by_fingerprint(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path)
    assert figures_path(layout, "abc") == tmp_path / "cache" / "figures" / "abc.json"


def test_stored_figures_are_read_back_for_the_same_evidence(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path)
    path = write_evidence(layout)
    assert read_figures(layout, FINGERPRINT.id, path) is None
    assert not figures_path(layout, FINGERPRINT.id).exists()

    figures = stored_from_evidence(layout, path)
    assert figures == sweep_figures(good_sweep())
    assert read_figures(layout, FINGERPRINT.id, path) == (CREATED_AT, figures)
    stored = json.loads(figures_path(layout, FINGERPRINT.id).read_text())
    assert stored["kind"] == FIGURES_KIND
    assert stored["evidence"] == {
        "sha256": evidence_identity(path)["sha256"],
        "integrity": recorded_digest(load_evidence(path)),
    }
    # another fingerprint has nothing stored
    assert read_figures(layout, "0" * len(FINGERPRINT.id), path) is None


def test_stored_figures_are_keyed_to_the_evidence_bytes_not_the_file(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path)
    path = write_evidence(layout)
    stored_from_evidence(layout, path)
    before = (path.read_bytes(), path.stat().st_ino)
    write_evidence(layout)  # the same bytes again, in a new file
    assert path.read_bytes() == before[0]
    assert path.stat().st_ino != before[1]
    assert read_figures(layout, FINGERPRINT.id, path) is not None
    write_evidence_file(path, FINGERPRINT, good_sweep(), CREATED_AT + 1)  # other bytes
    assert read_figures(layout, FINGERPRINT.id, path) is None


def test_figures_saved_under_an_identity_taken_before_a_rewrite_are_not_trusted(
    tmp_path: Path,
) -> None:
    layout = StateLayout(tmp_path)
    path = write_evidence(layout)
    identity = evidence_identity(path)
    evidence = load_evidence(path)
    # a calibration finishes between the read and the save
    write_evidence_file(path, FINGERPRINT, good_sweep(), CREATED_AT + 60)
    save_figures(
        layout, FINGERPRINT.id, identity, recorded_digest(evidence), sweep_figures(evidence.steps)
    )
    assert figures_path(layout, FINGERPRINT.id).exists()
    assert read_figures(layout, FINGERPRINT.id, path) is None


def test_stored_figures_of_vanished_evidence_are_not_read(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path)
    path = write_evidence(layout)
    stored_from_evidence(layout, path)
    path.unlink()
    assert read_figures(layout, FINGERPRINT.id, path) is None


def _drop_step_metric(data: dict[str, Any]) -> None:
    del data["figures"]["steps"][0]["metrics"]["served"]


DAMAGES: dict[str, Callable[[dict[str, Any]], Any]] = {
    "wrong kind": lambda data: data.update(kind="vibey-gh-evidence"),
    "wrong schema": lambda data: data.update(schema_version=99),
    "other tool version": lambda data: data.update(tool_version="0.0.0-other"),
    "other evidence bytes": lambda data: data["evidence"].update(sha256="0" * 64),
    "other integrity digest": lambda data: data["evidence"].update(integrity="1" * 64),
    "other fingerprint": lambda data: data.update(fingerprint="0" * 16),
    "no seal": lambda data: data.pop("seal"),
    "edited figure": lambda data: data["figures"]["steps"][1]["metrics"].update(
        peak_wired_bytes=1000
    ),
    "created_at added": lambda data: data.update(created_at=4_000_000_000.0),
    "schema as text": lambda data: data.update(schema_version="2"),
    "evidence key not an object": lambda data: data.update(evidence="x"),
    "integrity digest a number": lambda data: data["evidence"].update(integrity=5),
    "no figures": lambda data: data.pop("figures"),
    "missing step metric": _drop_step_metric,
    "missing baseline figure": lambda data: data["figures"]["baseline"].pop("self_agreement"),
    "steps not a list": lambda data: data["figures"].update(steps=5),
    "agreement not an object": lambda data: data["figures"]["steps"][1].update(agreement=3),
}


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=list(DAMAGES))
def test_damaged_stored_figures_are_not_read(
    tmp_path: Path, damage: Callable[[dict[str, Any]], Any]
) -> None:
    layout = StateLayout(tmp_path)
    path = write_evidence(layout)
    stored_from_evidence(layout, path)
    assert read_figures(layout, FINGERPRINT.id, path) is not None
    stored = figures_path(layout, FINGERPRINT.id)
    data = json.loads(stored.read_text())
    damage(data)
    atomic_write_json(stored, data)
    assert read_figures(layout, FINGERPRINT.id, path) is None


def test_the_cache_key_has_one_reader_that_names_a_bad_field(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path)
    path = write_evidence(layout)
    stored_from_evidence(layout, path)
    data = json.loads(figures_path(layout, FINGERPRINT.id).read_text())
    key = read_cache_key(data)
    assert key["fingerprint"] == FINGERPRINT.id and key["kind"] == FIGURES_KIND
    assert key["evidence"]["sha256"] == evidence_identity(path)["sha256"]
    data["evidence"]["integrity"] = 5
    with pytest.raises(MalformedJson, match=r"^figures cache\.evidence\.integrity: expected a"):
        read_cache_key(data)


@pytest.mark.parametrize(
    "text",
    ["{not json", "[1, 2]", "", b"\xff\xfe"],
    ids=["not json", "not an object", "empty", "not utf-8"],
)
def test_unreadable_stored_figures_are_not_read(tmp_path: Path, text: str | bytes) -> None:
    layout = StateLayout(tmp_path)
    path = write_evidence(layout)
    stored_from_evidence(layout, path)
    stored = figures_path(layout, FINGERPRINT.id)
    if isinstance(text, bytes):
        stored.write_bytes(text)
    else:
        stored.write_text(text)
    assert read_figures(layout, FINGERPRINT.id, path) is None


def test_stored_figures_of_another_figures_version_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = StateLayout(tmp_path)
    path = write_evidence(layout)
    figures = stored_from_evidence(layout, path)
    monkeypatch.setattr(figures_module, "FIGURES_VERSION", figures_module.FIGURES_VERSION + 1)
    assert read_figures(layout, FINGERPRINT.id, path) is None
    # stored again under the new version, they are read again
    stored_from_evidence(layout, path)
    assert read_figures(layout, FINGERPRINT.id, path) == (CREATED_AT, figures)


@pytest.mark.parametrize("blocker", ["figures folder is a file", "figures file is a folder"])
def test_saving_figures_where_they_cannot_be_written_fails_quietly(
    tmp_path: Path, blocker: str
) -> None:
    layout = StateLayout(tmp_path)
    path = write_evidence(layout)
    before = (path.read_bytes(), evidence_identity(path))
    if blocker == "figures folder is a file":
        (layout.cache / "figures").write_text("in the way")
    else:
        figures_path(layout, FINGERPRINT.id).mkdir(parents=True)

    figures = stored_from_evidence(layout, path)  # must not raise
    assert figures == sweep_figures(good_sweep())
    assert read_figures(layout, FINGERPRINT.id, path) is None
    assert (path.read_bytes(), evidence_identity(path)) == before
    # what was in the way is untouched, and no half-written file is left beside it
    if blocker == "figures folder is a file":
        assert (layout.cache / "figures").read_text() == "in the way"
        assert [p.name for p in layout.cache.iterdir()] == ["figures"]
    else:
        assert [p.name for p in (layout.cache / "figures").iterdir()] == [f"{FINGERPRINT.id}.json"]
        assert list(figures_path(layout, FINGERPRINT.id).iterdir()) == []
