"""Evidence read back from disk, judged once against today's bounds; and the gate's answer from
an evidence file's figures (`figures_of`, `answer_from_figures`).

`slots show` and `slots compare` say what `slots allowed` would decide from a saved sweep: the
judgement is made here, once per evidence file, and handed to every renderer (summary, report,
plots, HTML, the comparison table). Renderers never judge; `tests/test_architecture.py` keeps
the judge's functions out of `slots/report` and `cli`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...config import LocalModels
from ...errors import EvidenceError
from ...interfaces.bounds import Bounds
from ...state import StateLayout
from ..evidence.figures_cache import read_evidence_bytes, read_figures, save_figures
from ..evidence.store import Evidence, load_evidence_bytes, not_recorded_problem, recorded_digest
from ..judging.figures import SweepFigures
from ..judging.judge import SweepJudgement, judge_figures, judge_sweep
from .answer import AllowedAnswer

if TYPE_CHECKING:
    from ..evidence.fingerprint import Fingerprint


@dataclass(frozen=True)
class JudgedEvidence:
    """An evidence file and its steps' judgement against `bounds`."""

    evidence: Evidence
    judgement: SweepJudgement
    bounds: Bounds


def judge_evidence(evidence: Evidence, bounds: Bounds) -> JudgedEvidence:
    return JudgedEvidence(evidence, judge_sweep(evidence.steps, bounds), bounds)


def figures_of(layout: StateLayout, fingerprint: str, path: Path) -> tuple[float, SweepFigures]:
    """When the evidence was recorded, and its figures: kept ones, or made from the evidence.

    The evidence file is read once; kept figures count only for exactly these bytes, and
    evidence that was not recorded as this device's (written to --out only) counts nowhere."""
    held = read_evidence_bytes(path)
    kept = read_figures(layout, fingerprint, held)
    if kept is not None:
        return kept
    # lazy: the figures are made again from the steps only when the cache misses; the
    # baseline's statistics cost every other answer tens of ms
    from ..judging.baseline import sweep_figures

    evidence = load_evidence_bytes(held.raw, path)
    problem = not_recorded_problem(evidence)
    if problem is not None:
        raise EvidenceError(problem)
    figures = sweep_figures(evidence.steps)
    save_figures(layout, fingerprint, {"sha256": held.sha256}, recorded_digest(evidence), figures)
    return evidence.created_at, figures


def answer_from_figures(
    config: LocalModels, fingerprint: Fingerprint, figures: SweepFigures, path: Path
) -> AllowedAnswer:
    declaration = config.concurrent_runs
    judgement = judge_figures(figures, config.bounds)
    ideal = judgement.ideal
    if declaration == "measured":
        reason = f"measured: {judgement.reason}"
        return AllowedAnswer(
            ideal, reason, fingerprint.id, path, False, declaration, ideal, reason_code="measured"
        )
    assert isinstance(declaration, int)
    verdict = judgement.verdict_for(declaration)
    if verdict is not None and verdict.qualifies:
        reason = f"declared {declaration}, and the evidence supports it ({verdict.label})"
        return AllowedAnswer(declaration, reason, fingerprint.id, path, False, declaration, ideal)
    if verdict is None:
        why = f"{declaration} slots were not measured on this device"
    elif not verdict.inside_bounds:
        why = f"{declaration} slots broke a bound: {verdict.broken[0]}"
    else:
        gain = "unknown" if verdict.gain is None else f"{verdict.gain:+.0%}"
        why = f"{declaration} slots gained {gain} over one slot, less than min_gain"
    return AllowedAnswer(
        1,
        f"declared {declaration}, refused: {why}",
        fingerprint.id,
        path,
        False,
        declaration,
        ideal,
        reason_code="refused",
    )


__all__ = ["JudgedEvidence", "answer_from_figures", "figures_of", "judge_evidence"]
