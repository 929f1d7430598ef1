"""Bounds and verdicts, as pure functions of recorded steps and today's bounds (design §5).

Nothing here measures anything: give it the same StepRecords and Bounds and it gives the same
verdicts, which is what lets `slots allowed` re-judge old evidence against today's config.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..config import Bounds
from ..interfaces.slots_interface import SERVED_REASONS, TurnResult
from .fidelity import Agreement, agreement, served_by_turn, structure
from .metrics import StepMetrics, step_metrics
from .records import StepRecord

GB = 1_000_000_000
# Log event kinds that break a bound whenever they happen during the replay.
FORBIDDEN_LOG_EVENTS = {
    "truncation": "truncation",
    "context_shift": "context shift",
    "device_failure": "device failure",
    "reload": "model reload",
    "eviction": "eviction",
    "oom": "out of memory",
    "runner_died": "runner died",
}


@dataclass(frozen=True)
class Verdict:
    """How one step fares against the bounds.

    label: "floor" (first one-slot run), "baseline" (second), "qualifies", "no gain",
      or "breaks <first bound>".
    broken: every broken bound, as a phrase. warnings: what is reported but not refusing
      (memory at one slot). gain: throughput over the best one-slot run, minus 1.
    """

    index: int
    slots: int
    label: str
    inside_bounds: bool
    qualifies: bool
    broken: tuple[str, ...]
    warnings: tuple[str, ...]
    gain: float | None
    agreement: Agreement | None
    metrics: StepMetrics

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "slots": self.slots,
            "label": self.label,
            "inside_bounds": self.inside_bounds,
            "qualifies": self.qualifies,
            "broken": list(self.broken),
            "warnings": list(self.warnings),
            "gain": self.gain,
            "agreement": self.agreement.to_json() if self.agreement else None,
            "metrics": self.metrics.to_json(),
        }


@dataclass(frozen=True)
class Baseline:
    """What every step is judged against: the one-slot runs."""

    reference: StepRecord | None
    reference_served: Mapping[str, TurnResult]
    self_agreement: float
    best_one_slot_turns_per_hour: float
    one_slot_swap_mb_per_min: float

    def fidelity_threshold(self, bounds: Bounds) -> float:
        return self.self_agreement - bounds.fidelity_tolerance

    def swap_limit(self, bounds: Bounds) -> float:
        return max(bounds.swap_factor * self.one_slot_swap_mb_per_min, bounds.swap_floor_mb_per_min)


def baseline_of(steps: Sequence[StepRecord]) -> Baseline:
    one_slot = [s for s in steps if s.slots == 1]
    reference = one_slot[0] if one_slot else None
    reference_served = served_by_turn(reference) if reference else {}
    self_agreement = 1.0
    if len(one_slot) >= 2:
        measured = agreement(reference_served, served_by_turn(one_slot[1])).structural
        self_agreement = 1.0 if measured is None else measured
    metrics = [step_metrics(s) for s in one_slot]
    swap_rates = [m.swap_out_mb_per_min for m in metrics if m.swap_out_mb_per_min is not None]
    return Baseline(
        reference=reference,
        reference_served=reference_served,
        self_agreement=self_agreement,
        best_one_slot_turns_per_hour=max((m.turns_per_hour for m in metrics), default=0.0),
        # the worse of the one-slot runs: their spread is this machine's own noise
        one_slot_swap_mb_per_min=max(swap_rates, default=0.0),
    )


def _memory_findings(step: StepRecord, metrics: StepMetrics, bounds: Bounds) -> list[str]:
    findings = []
    budget = step.memory_budget_bytes
    if metrics.peak_wired_bytes is None or budget is None:
        findings.append("wired memory not measured")
    else:
        ceiling = bounds.wired_ceiling * budget
        if metrics.peak_wired_bytes > ceiling:
            findings.append(
                f"peak wired {metrics.peak_wired_bytes / GB:.2f} GB above the ceiling "
                f"{ceiling / GB:.2f} GB"
            )
    if metrics.peak_gpu_share is not None and metrics.peak_gpu_share > bounds.wired_ceiling:
        findings.append(
            f"GPU memory {metrics.peak_gpu_share:.0%} above the ceiling {bounds.wired_ceiling:.0%}"
        )
    return findings


def _swap_finding(metrics: StepMetrics, baseline: Baseline, bounds: Bounds) -> str | None:
    if metrics.swap_out_mb_per_min is None:
        return "swap not measured"
    limit = baseline.swap_limit(bounds)
    if metrics.swap_out_mb_per_min > limit:
        return f"swap-out {metrics.swap_out_mb_per_min:.1f} MB/min above {limit:.1f} MB/min"
    return None


def _failed_served_turns(step: StepRecord, baseline: Baseline) -> list[str]:
    return [
        f"{t.turn_id} ({t.result.error or t.result.finish_reason})"
        for t in step.turns
        if t.turn_id in baseline.reference_served and not t.result.served
    ]


def _log_findings(step: StepRecord) -> list[str]:
    counts: dict[str, int] = {}
    for event in step.log_events:
        if event.during_replay and event.kind in FORBIDDEN_LOG_EVENTS:
            counts[event.kind] = counts.get(event.kind, 0) + 1
    return [f"log: {n} × {FORBIDDEN_LOG_EVENTS[kind]}" for kind, n in sorted(counts.items())]


def _reasonless_answers(step: StepRecord) -> int:
    return sum(
        1
        for t in step.turns
        if t.result.status == 200 and t.result.finish_reason not in SERVED_REASONS
    )


def judge_step(step: StepRecord, baseline: Baseline, bounds: Bounds) -> Verdict:
    metrics = step_metrics(step)
    broken: list[str] = []
    warnings: list[str] = []
    memory = _memory_findings(step, metrics, bounds)
    swap = _swap_finding(metrics, baseline, bounds)
    agreement_found: Agreement | None = None
    is_reference = baseline.reference is not None and step is baseline.reference
    if not is_reference:
        agreement_found = agreement(baseline.reference_served, served_by_turn(step))
    if step.slots == 1:
        # one is the floor: memory is reported, never refusing
        warnings.extend(memory + ([swap] if swap else []))
        label = "floor" if is_reference else "baseline"
        inside = True
    else:
        broken.extend(memory)
        if swap:
            broken.append(swap)
        failed = _failed_served_turns(step, baseline)
        if failed:
            broken.append(f"{len(failed)} turn(s) served at one slot failed: {failed[0]}")
        broken.extend(_log_findings(step))
        reasonless = _reasonless_answers(step)
        if reasonless:
            broken.append(f"{reasonless} answer(s) without stop, length or tool_calls")
        threshold = baseline.fidelity_threshold(bounds)
        if agreement_found is None or agreement_found.structural is None:
            broken.append("fidelity not measured: no turn served in both runs")
        elif agreement_found.structural < threshold:
            broken.append(
                f"fidelity: structural {agreement_found.structural:.3f} < {threshold:.3f}"
            )
        inside = not broken
        label = "qualifies" if inside else "breaks " + _short(broken[0])
    best = baseline.best_one_slot_turns_per_hour
    gain = (metrics.turns_per_hour / best - 1.0) if best > 0 else None
    qualifies = step.slots > 1 and inside and gain is not None and gain >= bounds.min_gain
    if step.slots > 1 and inside and not qualifies:
        label = "no gain"
    return Verdict(
        index=step.index,
        slots=step.slots,
        label=label,
        inside_bounds=inside,
        qualifies=qualifies,
        broken=tuple(broken),
        warnings=tuple(warnings),
        gain=gain,
        agreement=agreement_found,
        metrics=metrics,
    )


def _short(finding: str) -> str:
    if finding.startswith("fidelity"):
        return "fidelity"
    if "wired" in finding or "GPU" in finding:
        return "memory"
    if finding.startswith("swap"):
        return "swap"
    if "served at one slot failed" in finding:
        return "served turns"
    if finding.startswith("log:"):
        return finding.split("× ", 1)[-1]
    return "done reasons"


@dataclass(frozen=True)
class SweepJudgement:
    verdicts: tuple[Verdict, ...]
    ideal: int
    reason: str
    baseline: Baseline

    def verdict_for(self, slots: int) -> Verdict | None:
        matching = [v for v in self.verdicts if v.slots == slots]
        return matching[-1] if matching else None


def judge_sweep(steps: Sequence[StepRecord], bounds: Bounds) -> SweepJudgement:
    baseline = baseline_of(steps)
    verdicts = tuple(judge_step(step, baseline, bounds) for step in steps)
    qualifying = [v for v in verdicts if v.qualifies]
    if qualifying:
        best = max(qualifying, key=lambda v: v.metrics.turns_per_hour)
        reason = (
            f"{best.slots} slots stayed inside every bound and served "
            f"{best.metrics.turns_per_hour:.1f} turns/h, {best.gain:+.0%} over one slot"
        )
        return SweepJudgement(verdicts, best.slots, reason, baseline)
    if not any(s.slots == 1 for s in steps):
        return SweepJudgement(verdicts, 1, "no one-slot run to compare with", baseline)
    multi = [v for v in verdicts if v.slots > 1]
    if not multi:
        return SweepJudgement(verdicts, 1, "one: only one slot was measured", baseline)
    parts = [_step_summary(v, bounds) for v in multi]
    reason = "one: no step beat one slot inside every bound — " + "; ".join(parts)
    return SweepJudgement(verdicts, 1, reason, baseline)


def _step_summary(verdict: Verdict, bounds: Bounds) -> str:
    if not verdict.inside_bounds:
        return f"N={verdict.slots} {verdict.label} ({verdict.broken[0]})"
    gain = "unknown" if verdict.gain is None else f"{verdict.gain:+.0%}"
    return f"N={verdict.slots} gained {gain}, under the {bounds.min_gain:.0%} needed"


def early_verdict(
    slots: int,
    turns_so_far: Sequence[TurnResult | None],
    turn_ids: Sequence[str],
    baseline: Baseline,
    bounds: Bounds,
    corpus_turn_ids: Sequence[str],
    peak_wired_bytes: int | None,
    memory_budget_bytes: int | None,
) -> str | None:
    """Why a step in flight can already not pass, or None. Only certain outcomes count."""
    if slots <= 1:
        return None
    if peak_wired_bytes is not None and memory_budget_bytes:
        ceiling = bounds.wired_ceiling * memory_budget_bytes
        if peak_wired_bytes > ceiling:
            return f"memory: wired {peak_wired_bytes / GB:.2f} GB crossed the ceiling"
    mismatches = 0
    lost = 0
    for turn_id, result in zip(turn_ids, turns_so_far, strict=True):
        if result is None or turn_id not in baseline.reference_served:
            continue
        if not result.served:
            return f"served turns: {turn_id} served at one slot failed ({result.error})"
        if structure(result) != structure(baseline.reference_served[turn_id]):
            mismatches += 1
    comparable = sum(1 for t in corpus_turn_ids if t in baseline.reference_served) - lost
    if comparable <= 0:
        return None
    best_possible = (comparable - mismatches) / comparable
    threshold = baseline.fidelity_threshold(bounds)
    if best_possible < threshold:
        return (
            f"fidelity: {mismatches} of at most {comparable} answers changed structure; "
            f"agreement can no longer reach {threshold:.3f}"
        )
    return None
