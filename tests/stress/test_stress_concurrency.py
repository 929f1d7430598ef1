"""Two things at once: two calibrations (the second must refuse, naming the first), and
`allowed` reading the evidence in a tight loop while it is being rewritten."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from stress_support import (
    OneSlotBaseline,
    calibrate_argv,
    cli_env,
    config_toml,
    micro_config,
    micro_corpus,
    one_line_error,
)

from vibey_gh.clock import SYSTEM_CLOCK
from vibey_gh.config import LocalModels
from vibey_gh.files import atomic_write_json
from vibey_gh.interfaces.schema import as_json
from vibey_gh.interfaces.slots_interface import DeviceFacts, RunnerInfo
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint
from vibey_gh.slots.evidence.store import (
    EVIDENCE_SCHEMA,
    evidence_path,
    load_evidence,
    seal_evidence,
)
from vibey_gh.slots.gate.allowed import AllowedAnswer, AllowedDeps, decide_allowed
from vibey_gh.slots.measurement.stepping.orphans import PID_FILE
from vibey_gh.state import StateLayout

pytestmark = pytest.mark.integration  # a real calibration, or a real step as evidence

READS = 300
PADDING = "x" * 200_000  # a large file: a torn write would be all but certain to be seen
DEVICE = DeviceFacts("Stress,1", "Test CPU", 8 << 30, (), "Linux", "6.1")
IDENTITY = RunnerInfo("embedded", "xllamacpp 0.0", "/models/m.gguf", "ab" * 32)


@pytest.mark.timeout(300)
def test_a_second_calibration_refuses_naming_the_first_and_leaves_it_alone(
    tmp_path: Path, isolated_state: Path
) -> None:
    corpus, corpus_path = micro_corpus(tmp_path)
    config = micro_config()
    Path("vibey-gh.toml").write_text(config_toml(config))
    layout = StateLayout(isolated_state)
    env = cli_env(isolated_state)
    first = subprocess.Popen(
        calibrate_argv(corpus_path, "1"), env=env, stderr=subprocess.PIPE, text=True
    )
    second: subprocess.CompletedProcess[str] | None = None
    try:
        deadline = time.monotonic() + 120
        while not (layout.root / PID_FILE).exists() and time.monotonic() < deadline:
            assert first.poll() is None
            time.sleep(0.05)
        second = subprocess.run(
            calibrate_argv(corpus_path, "1", "--max-runs", "1"),
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        _, first_err = first.communicate(timeout=180)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        for child in psutil.Process().children(recursive=True):
            child.kill()
    assert first.returncode == 0, first_err
    (evidence,) = layout.evidence.glob("*.json")
    (step,) = load_evidence(evidence).steps
    assert {t.turn_id for t in step.turns} == {t.id for s in corpus.segments for t in s.turns}
    assert all(t.result.served for t in step.turns), "the first calibration was left alone"
    assert second.returncode == 1, second.stderr
    line = one_line_error(second.stderr)
    assert line.startswith(f"error: the model lock is held by calibration pid {first.pid} ")


# ---------------------------------------------------------------------------------------------
# allowed while the evidence is rewritten
# ---------------------------------------------------------------------------------------------


def _evidence(fingerprint: Any, steps: list[dict[str, Any]], tag: str) -> dict[str, Any]:
    return seal_evidence(
        {
            "schema_version": EVIDENCE_SCHEMA,
            "kind": "vibey-gh-evidence",
            "fingerprint": as_json(fingerprint),
            "created_at": time.time(),
            "steps": steps,
            "recorded": True,
            "notes": [tag, PADDING],
        }
    )


def _documents(baseline: OneSlotBaseline) -> tuple[Any, list[dict[str, Any]]]:
    """Two valid evidence documents for one fingerprint: one step, and two steps."""
    fingerprint = compute_fingerprint(DEVICE, IDENTITY, 1024)
    first = json.loads(baseline.checkpoint)["steps"][0]
    second = {**first, "index": 1, "slots": 2}
    return fingerprint, [
        _evidence(fingerprint, [first], "one step"),
        _evidence(fingerprint, [first, second], "two steps"),
    ]


def _read_while(
    layout: StateLayout, write: Any, documents: list[dict[str, Any]]
) -> list[AllowedAnswer]:
    config = LocalModels(concurrent_runs="measured", window=1024)
    deps = AllowedDeps(layout, SYSTEM_CLOCK, lambda: DEVICE, lambda _config: IDENTITY)
    done = threading.Event()

    def writer() -> None:
        turn = 0
        while not done.is_set():
            write(documents[turn % 2])
            turn += 1

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        return [decide_allowed(config, deps=deps) for _ in range(READS)]
    finally:
        done.set()
        thread.join(timeout=30)


def test_allowed_never_sees_a_half_written_evidence_file(
    one_slot_baseline: OneSlotBaseline, layout: StateLayout
) -> None:
    fingerprint, documents = _documents(one_slot_baseline)
    path = evidence_path(layout, fingerprint.id)
    atomic_write_json(path, documents[0])

    answers = _read_while(layout, lambda doc: atomic_write_json(path, doc), documents)

    unusable = [a.reason for a in answers if "unusable" in a.reason or "not valid JSON" in a.reason]
    assert unusable == []
    assert all(a.evidence == path and a.fingerprint == fingerprint.id for a in answers)
    assert not list(layout.requests.glob("*.json")), "no answer asked for a calibration"


def test_the_reader_loop_does_see_a_torn_write_when_the_writer_is_not_atomic(
    one_slot_baseline: OneSlotBaseline, layout: StateLayout
) -> None:
    """The control: the same loop catches a writer that rewrites the file in place."""
    fingerprint, documents = _documents(one_slot_baseline)
    path = evidence_path(layout, fingerprint.id)
    atomic_write_json(path, documents[0])
    half_written = threading.Event()

    def torn_write(doc: dict[str, Any]) -> None:
        text = json.dumps(doc)
        with path.open("w") as handle:
            handle.write(text[: len(text) // 2])
            handle.flush()
            half_written.set()
            time.sleep(0.002)
            handle.write(text[len(text) // 2 :])

    answers = _read_while(layout, torn_write, documents)

    assert half_written.is_set()
    assert any("not valid JSON" in a.reason for a in answers)
