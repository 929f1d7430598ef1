"""`slots show`: the evidence for this device, re-judged against today's bounds.

Today's fingerprint is computed the way `slots allowed` computes it. When it cannot be (the
production runner does not answer), that is said, and every evidence file present is still
listed. Evidence for other fingerprints is listed with what differs from today.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

from ...config import LocalModels, load_config
from ...errors import BadInput, EvidenceError, VibeyError
from ...interfaces.bounds import Bounds
from ...interfaces.schema import as_json
from ..evidence.fingerprint import Fingerprint, compute_fingerprint, describe_differences
from ..evidence.history import PastSweep, fingerprints_with_history, list_history
from ..evidence.store import (
    Evidence,
    evidence_path,
    future_date_problem,
    iter_evidence_paths,
    load_evidence,
)
from ..gate.allowed import AllowedDeps
from ..gate.judged import judge_evidence
from ..judging.gains import interval_method
from ..judging.judge import SweepJudgement, finite_or_none, knee_json
from ..judging.records import RunnerReported
from ..judging.verdicts import decidability
from .documents.markdown import report_paths, write_report
from .plotting import plots as plot_module  # its plots_available is read when asked
from .soak_view import ShownSoak, SoakProblem, SoakView, soak_views, write_soak_report
from .tables.latency_table import (
    latency_json,
    latency_lines,
    latency_rows,
    latency_values,
    verdict_latency_json,
)
from .tables.model_column import model_json
from .tables.step_table import step_rows, step_values

# `slots show --json`: 2 gave each step's figures as numbers (`steps`) beside the display
# strings (`rows`, `columns`); 3 holds typed data only (the table is `--format markdown`'s); 4
# gives the ideal N's latency cost (`latency.ideal_cost`) as numbers, not a sentence
SHOW_SCHEMA = 4

FINGERPRINT_PATTERN = re.compile(r"[0-9a-f]{16}")


def check_fingerprint(text: str) -> str:
    value = text.strip().lower()
    if not FINGERPRINT_PATTERN.fullmatch(value):
        raise BadInput(
            f"--fingerprint takes 16 hex digits (as `slots allowed` prints), not {text!r}"
        )
    return value


class OtherEvidence(msgspec.Struct, frozen=True):
    """Evidence for another fingerprint. differences: vs today (None when today is unknown);
    problem: why the file could not be read."""

    fingerprint: str
    path: Path
    created_at: float | None
    differences: tuple[str, ...] | None
    problem: str | None = None


class ShownEvidence(msgspec.Struct, frozen=True):
    """One evidence file, judged against today's bounds, and the files that go with it."""

    path: Path
    evidence: Evidence
    judgement: SweepJudgement
    age_days: float
    stale: bool
    differences: tuple[str, ...] | None
    files: tuple[Path, ...]
    missing_files: tuple[Path, ...]
    min_gain: float = 0.10  # today's, which the verdicts were judged with
    verdict_code: str | None = None  # what the answer rests on (`judging.verdicts`)
    bounds: Bounds = Bounds()  # today's

    @property
    def with_intervals(self) -> bool:
        """False for evidence of the one-pass method: its throughputs carry no interval."""
        return all(step.measurement is not None for step in self.evidence.steps)

    @property
    def confidence(self) -> float | None:
        return next((v.confidence for v in self.judgement.verdicts if v.confidence), None)

    @property
    def interval_method(self) -> str:
        return interval_method(self.judgement.figures)

    @property
    def rows(self) -> list[list[str]]:
        return step_rows(self.evidence.steps, self.judgement)

    @property
    def steps(self) -> list[dict[str, object]]:
        """Each step's numbers, its TTFT, TPOT and ITL (mean, p50, p90, p95, p99) with them."""
        rows = step_values(self.evidence.steps, self.judgement)
        return [
            {**row, **latency_values(verdict)}
            for row, verdict in zip(rows, self.judgement.verdicts, strict=True)
        ]

    def latency_rows(self) -> list[list[str]]:
        return latency_rows(self.judgement, self.bounds.confidence)

    @property
    def latency_lines(self) -> list[str]:
        return latency_lines(self.judgement, self.bounds)

    def output(self) -> EvidenceShown:
        """The evidence as `slots show --json` gives it, its figures computed from the
        judgement (an infinite bound as null)."""
        judgement = self.judgement
        verdicts = tuple(
            ShownVerdict(
                v.slots, v.label, v.qualifies, v.gain, v.gain_low, v.gain_high,
                v.metrics.turns_per_hour, v.turns_per_hour_low,
                finite_or_none(v.turns_per_hour_high), v.metrics.runs_per_hour,
                v.runs_per_hour_low,
                None if v.runs_per_hour_high is None else finite_or_none(v.runs_per_hour_high),
                v.metrics.run_p50_s, v.metrics.run_p95_s, v.decided_by, v.broken, v.warnings,
                step.runner_reported, verdict_latency_json(v),
            )
            for v, step in zip(judgement.verdicts, self.evidence.steps, strict=True)
        )  # fmt: skip
        return EvidenceShown(
            self.evidence.fingerprint, self.path, self.evidence.created_at,
            round(self.age_days, 3), self.stale, judgement.ideal, judgement.reason,
            self.verdict_code, knee_json(judgement, self.min_gain),
            model_json(judgement, self.min_gain), self.differences, self.confidence,
            self.with_intervals, judgement.figures.decided_by, self.steps, verdicts,
            latency_json(judgement, self.bounds), self.files, self.missing_files,
        )  # fmt: skip


class ShownVerdict(msgspec.Struct, frozen=True):
    slots: int
    label: str
    qualifies: bool
    gain: float | None
    gain_low: float | None
    gain_high: float | None
    turns_per_hour: float
    turns_per_hour_low: float
    turns_per_hour_high: float | None
    runs_per_hour: float | None
    runs_per_hour_low: float | None
    runs_per_hour_high: float | None
    run_p50_s: float | None
    run_p95_s: float | None
    decided_by: str
    broken: tuple[str, ...]
    warnings: tuple[str, ...]
    runner_reported: RunnerReported | None
    latency: dict[str, Any] | None


class EvidenceShown(msgspec.Struct, frozen=True):
    """The evidence in `slots show --json` (written by `as_json`)."""

    fingerprint: str
    path: Path
    created_at: float
    age_days: float
    stale: bool
    ideal: int
    reason: str
    verdict_code: str | None
    knee: dict[str, object] | None
    model: dict[str, object] | None
    differences_from_today: tuple[str, ...] | None
    confidence: float | None
    measured_with_intervals: bool
    decided_by: str
    steps: list[dict[str, object]]
    verdicts: tuple[ShownVerdict, ...]
    latency: dict[str, Any]
    files: tuple[Path, ...]
    missing_files: tuple[Path, ...]


class ShowAnswer(msgspec.Struct, frozen=True):
    """today: today's fingerprint, or None with `today_problem`. asked: the fingerprint shown
    (given, else today's). shown: its evidence, None when there is none. others: the rest."""

    today: Fingerprint | None
    today_problem: str | None
    asked: str | None
    shown: ShownEvidence | None
    others: tuple[OtherEvidence, ...]
    # the soaks of the fingerprint shown, by N (`slots soak`)
    soaks: tuple[SoakView, ...] = ()

    def output(self) -> ShowOutput:
        """The evidence shown, other fingerprints' and the soaks', as `--json` answers them."""
        return ShowOutput(
            self.today, self.today_problem, self.asked,
            self.shown.output() if self.shown else None,
            self.others, tuple(s.shown() for s in self.soaks),
        )  # fmt: skip


class ShowOutput(msgspec.Struct, frozen=True):
    """`slots show --json` (`show_json`)."""

    today: Fingerprint | None
    today_problem: str | None
    fingerprint: str | None  # the one shown
    evidence: EvidenceShown | None
    others: tuple[OtherEvidence, ...]
    soaks: tuple[ShownSoak | SoakProblem, ...]


def show_json(answer: ShowAnswer) -> dict[str, object]:
    """What `slots show --json` prints, after its schema version."""
    return as_json(answer.output(), SHOW_SCHEMA)


def _today(config: LocalModels, deps: AllowedDeps) -> tuple[Fingerprint | None, str | None]:
    try:
        identity = deps.identify(config)
        return compute_fingerprint(deps.device(), identity, config.window), None
    except VibeyError as exc:
        return None, f"today's fingerprint cannot be computed: {exc}"


def _files_of(path: Path) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """(files present, report files missing): the evidence, its summary, the full report.
    Plots an install without matplotlib cannot draw are not missing: `--report` would not
    write them either (the report says how to get them)."""
    report = report_paths(path)
    present = tuple(p for p in [path, path.with_suffix(".md"), *report] if p.exists())
    wanted = report if plot_module.plots_available() else report[:1]
    return present, tuple(p for p in wanted if not p.exists())


def _shown(
    path: Path, config: LocalModels, deps: AllowedDeps, today: Fingerprint | None, write: bool
) -> ShownEvidence:
    try:
        evidence = load_evidence(path)
    except EvidenceError as exc:
        raise EvidenceError(f"unusable evidence: {exc}") from None
    future = future_date_problem(evidence.created_at, deps.clock.now())
    if future is not None:
        raise EvidenceError(f"unusable {future}: {path}")
    # judged once against today's bounds: the answer, the report and its plots say the same
    judgement = judge_evidence(evidence, config.bounds).judgement
    if write:
        write_report(evidence, config.bounds, path.parent, path.stem, judgement=judgement)
    age = evidence.age_days(deps.clock.now())
    differences = None
    if today is not None:
        differences = tuple(describe_differences(evidence.fingerprint_fields, today.fields))
    files, missing = _files_of(path)
    return ShownEvidence(
        path=path,
        evidence=evidence,
        judgement=judgement,
        age_days=age,
        stale=age > config.stale_after_days,
        differences=differences,
        files=files,
        missing_files=missing,
        min_gain=config.bounds.min_gain,
        verdict_code=decidability(judgement, config.bounds).code,
        bounds=config.bounds,
    )


def _others(
    layout_paths: list[Path], skip: Path | None, today: Fingerprint | None
) -> list[OtherEvidence]:
    found = []
    for path in layout_paths:
        if skip is not None and path == skip:
            continue
        try:
            other = load_evidence(path)
        except EvidenceError as exc:
            found.append(OtherEvidence(path.stem, path, None, None, str(exc)))
            continue
        differences = None
        if today is not None:
            differences = tuple(describe_differences(other.fingerprint_fields, today.fields))
        found.append(OtherEvidence(other.fingerprint, path, other.created_at, differences))
    return found


def gather_show(
    fingerprint: str | None = None,
    *,
    write: bool = False,
    config: LocalModels | None = None,
    deps: AllowedDeps,
) -> ShowAnswer:
    """The evidence for `fingerprint` (default: today's) and every other evidence present.

    EvidenceError when a fingerprint was given and has no evidence, or its file is unreadable.
    `write` (re)writes the full report and plots beside the shown evidence first.
    """
    asked = check_fingerprint(fingerprint) if fingerprint is not None else None
    config = config or load_config()
    today, problem = _today(config, deps)
    asked = asked or (today.id if today else None)
    shown: ShownEvidence | None = None
    path = evidence_path(deps.layout, asked) if asked else None
    soaks = tuple(soak_views(deps.layout, asked)) if asked else ()
    if path is not None and path.exists():
        shown = _shown(path, config, deps, today, write)
    elif fingerprint is not None and not soaks:
        raise EvidenceError(
            f"no evidence for fingerprint {asked}; run `vibey-gh slots calibrate` to measure"
        )
    others = _others(list(iter_evidence_paths(deps.layout)), path, today)
    if write:
        for soak in soaks:
            if soak.record is not None:
                write_soak_report(soak, plot_module.plots_available())
    return ShowAnswer(today, problem, asked, shown, tuple(others), soaks)


def gather_history(
    fingerprint: str | None = None, *, config: LocalModels | None = None, deps: AllowedDeps
) -> dict[str, list[PastSweep]]:
    """The replaced sweeps kept for `fingerprint` (default: today's), newest first; every
    fingerprint's when today's cannot be computed and none was given."""
    asked = check_fingerprint(fingerprint) if fingerprint is not None else None
    if asked is None:
        today, _problem = _today(config or load_config(), deps)
        asked = today.id if today else None
    names = [asked] if asked is not None else fingerprints_with_history(deps.layout)
    return {name: list_history(deps.layout, name) for name in names}
