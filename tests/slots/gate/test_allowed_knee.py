"""Evidence recorded when the ideal N could sit on the plateau is re-judged by `allowed`: the
answer comes from the steps, never from the decision stored with them or the kept figures."""

from __future__ import annotations

import json
from pathlib import Path

from tests.slots.gate.test_allowed import DEVICE, NOW, RUNNER, WINDOW, config, deps_for
from tests.support.evidence import write_sealed
from tests.support.slot_builders import make_step, same_answers
from vibey_gh.interfaces.schema import as_json
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint
from vibey_gh.slots.evidence.store import EVIDENCE_SCHEMA, evidence_path
from vibey_gh.slots.gate.allowed import decide_allowed
from vibey_gh.state import StateLayout

# seconds for 600 turns: one slot 2000 s; the knee at N=4 (4× one slot), then +5% and +2.5%
PLATEAU = {n: 2000.0 / min(n, 4) / 1.05 ** (n > 4) / 1.025 ** (n > 5) for n in range(1, 7)}


def plateau_steps() -> list:
    order = [1, 1, 2, 3, 4, 5, 6]
    return [
        make_step(i, slots, same_answers(600), duration=PLATEAU[slots], steady=True)
        for i, slots in enumerate(order)
    ]


def record_plateau(root: Path) -> Path:
    """Evidence whose stored decision, as judged when it was written, is N=6."""
    fingerprint = compute_fingerprint(DEVICE, RUNNER, WINDOW)
    path = evidence_path(StateLayout(root), fingerprint.id)
    write_sealed(
        path,
        {
            "schema_version": EVIDENCE_SCHEMA,
            "kind": "vibey-gh-evidence",
            "fingerprint": as_json(fingerprint),
            "created_at": NOW - 86_400.0,
            "steps": [as_json(s) for s in plateau_steps()],
            "decision": {
                "ideal": 6,
                "reason": "6 slots stayed inside every bound",
                "stop_reason": "stopped after 2 steps without a 10% gain",
            },
            "recorded": True,
        },
    )
    return path


def test_old_evidence_on_the_plateau_is_answered_with_the_knee(tmp_path: Path) -> None:
    path = record_plateau(tmp_path)
    assert json.loads(path.read_text())["decision"]["ideal"] == 6
    first = decide_allowed(config("measured"), deps=deps_for(tmp_path))
    assert (first.allowed, first.ideal) == (4, 4)
    assert "the knee is 4: N=5 and 6 add +5.0% and +2.5% more turns/h" in first.reason
    # the second answer comes from the kept figures: the same rule decides
    again = decide_allowed(config("measured"), deps=deps_for(tmp_path))
    assert again == first


def test_a_declared_plateau_step_still_runs_when_it_qualifies(tmp_path: Path) -> None:
    record_plateau(tmp_path)
    declared = decide_allowed(config(6), deps=deps_for(tmp_path))
    assert declared.allowed == 6 and declared.ideal == 4
