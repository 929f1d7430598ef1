"""Evidence read back from disk, judged once against today's bounds.

`slots show` and `slots compare` say what `slots allowed` would decide from a saved sweep: the
judgement is made here, once per evidence file, and handed to every renderer (summary, report,
plots, HTML, the comparison table). Renderers never judge; `tests/test_architecture.py` keeps
the judge's functions out of `slots/report` and `cli`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..evidence.store import Evidence
from ..judging.bounds import Bounds
from ..judging.judge import SweepJudgement, judge_sweep


@dataclass(frozen=True)
class JudgedEvidence:
    """An evidence file and its steps' judgement against `bounds`."""

    evidence: Evidence
    judgement: SweepJudgement
    bounds: Bounds


def judge_evidence(evidence: Evidence, bounds: Bounds) -> JudgedEvidence:
    return JudgedEvidence(evidence, judge_sweep(evidence.steps, bounds), bounds)


__all__ = ["JudgedEvidence", "judge_evidence"]
