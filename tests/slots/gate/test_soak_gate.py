"""`require_soak`: an N above one only where a long enough soak held at it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from tests.slots.gate.test_allowed import (
    DEVICE,
    NOW,
    RUNNER,
    WINDOW,
    config,
    deps_for,
    good_sweep,
    record,
)
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint
from vibey_gh.slots.evidence.requests import pending_requests
from vibey_gh.slots.evidence.soak_file import (
    pending_soak_requests,
    soak_path,
    soak_request_path,
    write_soak,
)
from vibey_gh.slots.gate.allowed import decide_allowed
from vibey_gh.state import StateLayout

FINGERPRINT = compute_fingerprint(DEVICE, RUNNER, WINDOW)


WINDOW_S = 1800.0


def decided_ends(measured_s: float, last_share: float) -> list[float]:
    """A unit decided every ~10 s (a little uneven, so each window has an interval), at
    `last_share` of that rate over the last hour."""
    ends, at, k = [], 0.0, 0
    while True:
        gap = 10.0 * (1.0 + 0.3 * ((k * 7) % 5 - 2) / 2)
        at += gap / (last_share if at >= measured_s - 3600.0 else 1.0)
        if at > measured_s:
            return ends
        ends.append(at)
        k += 1


def soaked(
    root: Path,
    slots: int,
    holds: bool,
    measured_s: float,
    verdict: str = "holds",
    *,
    last_share: float = 1.0,
) -> Path:
    """A soak file as a soak writes it: its spans (each decided unit's end) and the verdict it
    recorded (`holds`), which need not be what its windows say (`last_share`)."""
    path = soak_path(StateLayout(root), FINGERPRINT.id, slots)
    spans = [{"start": 0.0, "end": measured_s, "ends": decided_ends(measured_s, last_share)}]
    data: dict[str, Any] = {
        "fingerprint": {"id": FINGERPRINT.id, "fields": dict(FINGERPRINT.fields)},
        "created_at": NOW - 3600.0, "slots": slots, "duration_s": measured_s,
        "measured_s": measured_s, "window_s": WINDOW_S, "complete": True, "spans": spans,
        "judgement": {"verdict": verdict if holds else "drifted", "holds": holds},
    }  # fmt: skip
    write_soak(path, data)
    return path


def soak_required(hours: float = 2.0):  # type: ignore[no-untyped-def]
    return replace(config("measured"), require_soak=hours * 3600.0)


def test_off_by_default_the_evidence_answers(tmp_path: Path) -> None:
    record(tmp_path, good_sweep())
    answer = decide_allowed(config("measured"), deps=deps_for(tmp_path))
    assert answer.allowed == 2
    assert not soak_request_path(StateLayout(tmp_path), FINGERPRINT.id).exists()


def test_without_a_soak_the_answer_is_one_and_a_soak_is_requested(tmp_path: Path) -> None:
    record(tmp_path, good_sweep())
    answer = decide_allowed(soak_required(), deps=deps_for(tmp_path))
    assert answer.allowed == 1 and answer.reason_code == "soak_required"
    assert "no soak of 2h or more held at 2" in answer.reason
    assert answer.requested and answer.request == soak_request_path(
        StateLayout(tmp_path), FINGERPRINT.id
    )
    (asked,) = pending_soak_requests(StateLayout(tmp_path))
    assert asked.settings["slots"] == 2 and asked.settings["duration_s"] == 7200.0
    # a soak request is not a calibration request
    assert pending_requests(StateLayout(tmp_path)) == []


def test_a_long_enough_soak_that_held_lets_the_n_stand(tmp_path: Path) -> None:
    record(tmp_path, good_sweep())
    soaked(tmp_path, 2, holds=True, measured_s=3 * 3600.0)
    answer = decide_allowed(soak_required(), deps=deps_for(tmp_path))
    assert answer.allowed == 2 and answer.reason_code == "measured"
    assert "a 3h soak held at 2" in answer.reason


def test_a_soak_too_short_does_not_count(tmp_path: Path) -> None:
    record(tmp_path, good_sweep())
    soaked(tmp_path, 2, holds=True, measured_s=1800.0)
    answer = decide_allowed(soak_required(), deps=deps_for(tmp_path))
    assert answer.allowed == 1 and answer.requested


def test_a_soak_that_drifted_answers_one_and_asks_no_other(tmp_path: Path) -> None:
    record(tmp_path, good_sweep())
    soaked(tmp_path, 2, holds=False, measured_s=3 * 3600.0)
    answer = decide_allowed(soak_required(), deps=deps_for(tmp_path))
    assert answer.allowed == 1 and "the 3h soak at 2: drifted" in answer.reason
    assert not answer.requested


def test_an_edited_soak_file_counts_for_nothing(tmp_path: Path) -> None:
    record(tmp_path, good_sweep())
    path = soaked(tmp_path, 2, holds=True, measured_s=3 * 3600.0)
    path.write_text(path.read_text().replace('"measured_s": 10800.0', '"measured_s": 10801.0'))
    answer = decide_allowed(soak_required(), deps=deps_for(tmp_path))
    assert answer.allowed == 1


def test_a_soak_is_judged_again_from_its_windows_not_taken_at_its_word(tmp_path: Path) -> None:
    record(tmp_path, good_sweep())
    # its last windows fell to 13% of the first, but its verdict says it held (sealed again)
    soaked(tmp_path, 2, holds=True, measured_s=3 * 3600.0, last_share=0.13)
    answer = decide_allowed(soak_required(), deps=deps_for(tmp_path))
    assert answer.allowed == 1 and answer.reason_code == "soak_required"
    assert "the 3h soak at 2: re-judged from its windows: drifted (throughput fell" in answer.reason


def test_a_soak_without_windows_to_judge_holds_nothing(tmp_path: Path) -> None:
    record(tmp_path, good_sweep())
    path = soaked(tmp_path, 2, holds=True, measured_s=3 * 3600.0)
    data = json.loads(path.read_text())
    del data["spans"]
    write_soak(path, {k: v for k, v in data.items() if k not in ("integrity", "kind")})
    answer = decide_allowed(soak_required(), deps=deps_for(tmp_path))
    assert answer.allowed == 1
    assert "its windows cannot be read: no spans" in answer.reason
