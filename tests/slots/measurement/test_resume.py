"""Resuming a sweep: a larger --max-slots extends it, a smaller one keeps what it covers, an
option that changes how a step is measured is named and needs --restart, and a checkpoint
written before the sweep's extent left its key is still resumed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from msgspec.structs import replace

from tests.support.progress import Recorder
from tests.support.simulated import calibrate, simulated_config
from vibey_gh.config import LocalModels
from vibey_gh.errors import BadInput
from vibey_gh.slots.evidence.store import load_evidence, method_hash
from vibey_gh.slots.measurement.resume import changed_options, checkpoint_key, measured_method
from vibey_gh.state import StateLayout

QUICK = {"min_step_seconds": 0.2, "max_step_seconds": 1.0, "tokens_per_second": 5000.0}


def quick_config() -> LocalModels:
    return simulated_config(**QUICK)


def test_the_checkpoint_key_leaves_out_how_far_the_sweep_goes() -> None:
    method = {"window": 4096, "max_slots": 4, "slots": "1,1,2,3,…", "steps": {"min_seconds": 60}}
    wider = {**method, "max_slots": 8, "slots": [1, 1, 2, 4]}
    assert checkpoint_key("f", "c", method) == checkpoint_key("f", "c", wider)
    longer = {**method, "steps": {"min_seconds": 120}}
    assert checkpoint_key("f", "c", method) != checkpoint_key("f", "c", longer)
    assert "max_slots" not in measured_method(method)


def test_changed_options_name_the_option_and_both_values() -> None:
    old = {"window": 4096, "max_tokens": 128, "steps": {"min_seconds": 20.0, "max_seconds": 60.0}}
    new = {"window": 4096, "max_tokens": 256, "steps": {"min_seconds": 60.0, "max_seconds": 60.0}}
    assert changed_options(old, new) == ["--max-tokens 128 → 256", "--min-step-seconds 20 → 60"]
    assert changed_options(old, {**old, "max_slots": 9}) == [], "the extent is not measured"
    # a latency bound added since lengthens the derived cap: the message says where it came from
    bound = {**old, "steps": {"min_seconds": 20.0, "max_seconds": 800.0}}
    assert changed_options(old, bound) == [
        "--max-step-seconds (set, or derived: a latency bound lengthens it) 60 → 800"
    ]


def test_a_larger_max_slots_extends_the_paused_sweep(tmp_path: Path, layout: StateLayout) -> None:
    config = quick_config()
    _, paused = calibrate(tmp_path, layout, config, max_runs=3, max_slots=3)
    assert not paused.complete and paused.new_steps == 3
    recorder = Recorder()
    _, extended = calibrate(tmp_path, layout, config, recorder, max_slots=4)
    assert extended.resumed_steps == 3, "no completed step is measured again"
    assert recorder.started[0][:2] == (3, 3), "the sweep goes on where it was stopped"
    assert recorder.messages[0].startswith("resuming: 3 completed step(s) from ")
    assert [s.slots for s in load_evidence(extended.evidence).steps][:4] == [1, 1, 2, 3]


def test_a_smaller_max_slots_keeps_the_steps_it_covers(tmp_path: Path, layout: StateLayout) -> None:
    config = quick_config()
    calibrate(tmp_path, layout, config, max_runs=4, max_slots=4, slots=None)
    recorder = Recorder()
    _, outcome = calibrate(tmp_path, layout, config, recorder, max_slots=2)
    assert len(recorder.started) == 1, "only the closing one-slot run is measured"
    said = [m for m in recorder.messages if m.startswith("keeping")]
    assert said == [
        "keeping 3 of 4 completed step(s); N=3 lie beyond where this sweep ends: left out of "
        "it, which closes with one slot"
    ]
    assert [s.slots for s in load_evidence(outcome.evidence).steps] == [1, 1, 2, 1]


def test_a_changed_step_length_is_named_and_nothing_is_discarded(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = quick_config()
    calibrate(tmp_path, layout, config, max_runs=2, max_slots=3)
    (checkpoint,) = layout.progress.glob("*.json")
    before = checkpoint.read_bytes()
    longer = replace(config, min_step_seconds=0.3)
    with pytest.raises(BadInput) as refused:
        calibrate(tmp_path, layout, longer, max_slots=3)
    message = str(refused.value)
    assert "holds 2 completed step(s) measured with --min-step-seconds 0.2 → 0.3" in message
    assert "--restart" in message and str(checkpoint) in message
    assert checkpoint.read_bytes() == before, "the old steps are kept until --restart"
    recorder = Recorder()
    _, restarted = calibrate(tmp_path, layout, longer, recorder, max_slots=3, restart=True)
    assert "restarting: removed 1 checkpoint(s) of this device and corpus" in recorder.messages
    assert restarted.resumed_steps == 0 and restarted.complete
    assert not checkpoint.exists()


def test_a_changed_slots_list_names_the_step(tmp_path: Path, layout: StateLayout) -> None:
    config = quick_config()
    calibrate(tmp_path, layout, config, max_runs=3, slots=(1, 1, 2, 3))
    with pytest.raises(BadInput, match=r"step 2 measured N=2 where this sweep asks for N=3"):
        calibrate(tmp_path, layout, config, slots=(1, 1, 3, 4))


def test_a_checkpoint_keyed_by_the_whole_method_is_still_resumed(
    tmp_path: Path, layout: StateLayout
) -> None:
    config = quick_config()
    calibrate(tmp_path, layout, config, max_runs=2, max_slots=2)
    (checkpoint,) = layout.progress.glob("*.json")
    data = json.loads(checkpoint.read_text(encoding="utf-8"))
    # as written before: keyed and named by the hash of the whole method, no method kept
    from vibey_gh.slots.measurement.calibration_method import method_of
    from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest

    corpus_sha = data["key"]["corpus_sha256"]
    request = CalibrationRequest(
        config=config,
        corpus=_corpus_of(tmp_path),
        window=config.window,
        max_tokens=64,
        max_slots=2,
    )
    whole = method_hash(method_of(request))
    data["key"]["method"] = whole
    del data["method"]
    old = checkpoint.with_name(f"{data['key']['fingerprint']}-{corpus_sha[:12]}-{whole}.json")
    old.write_text(json.dumps(data), encoding="utf-8")
    checkpoint.unlink()
    recorder = Recorder()
    _, resumed = calibrate(tmp_path, layout, config, recorder, max_slots=2)
    assert resumed.resumed_steps == 2 and resumed.complete
    assert not old.exists()


def _corpus_of(tmp_path: Path):  # type: ignore[no-untyped-def]
    from tests.support.corpus import tiny_corpus

    return tiny_corpus(tmp_path)[0]


def test_a_paused_sweep_keeps_the_complete_evidence_and_resumes(
    tmp_path: Path, layout: StateLayout
) -> None:
    from vibey_gh.slots.evidence.history import list_history

    config = quick_config()
    _, complete = calibrate(tmp_path, layout, config, slots=(1, 1))
    assert complete.complete and complete.evidence is not None
    recorded = complete.evidence.read_bytes()
    _, paused = calibrate(tmp_path, layout, config, slots=(1, 1), max_runs=1)
    assert not paused.complete and paused.kept is not None and paused.evidence is None
    assert complete.evidence.read_bytes() == recorded, "the complete sweep still answers"
    (checkpoint,) = layout.progress.glob("*.json")
    assert len(json.loads(checkpoint.read_text(encoding="utf-8"))["steps"]) == 1
    _, resumed = calibrate(tmp_path, layout, config, slots=(1, 1))
    assert resumed.complete and resumed.resumed_steps == 1
    assert resumed.replaced is not None and resumed.replaced.path.read_bytes() == recorded
    assert [sweep.path for sweep in list_history(layout, complete.fingerprint)] == [
        resumed.replaced.path
    ]
