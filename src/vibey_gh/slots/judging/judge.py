"""Bounds and verdicts: a sweep's figures held against today's bounds (design §5).

Nothing here measures anything and nothing here reads raw steps: `baseline.sweep_figures`
turns recorded StepRecords into figures, and the same figures with the same Bounds always give
the same verdicts. That is what lets `slots allowed` re-judge old evidence against today's
config, from figures kept beside the evidence, without parsing every recorded answer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

from ...interfaces.bounds import Bounds
from .figures import BaselineFigures, StepFigures, SweepFigures
from .gains import at_its_look, drift_sentence, gain_ratio, pairing_sentence
from .latencies.latency_bounds import LATENCY_BOUND_KEYS, latency_findings
from .statistics.knee import Knee, Rate, knee, plateau_sentence
from .statistics.stats import Estimate
from .statistics.step_metrics_figures import StepMetrics
from .step_findings import memory_findings, runner_finding, short_name, swap_finding

# what a step is judged to, where the readers of a judgement look for it too
from .verdicts import Verdict as Verdict
from .verdicts import VerdictJson as VerdictJson
from .verdicts import finite_or_none as finite_or_none
from .verdicts import one_slot_noise, too_noisy_sentence

if TYPE_CHECKING:
    from .baseline import Baseline
    from .records import StepRecord


def judge_step_figures(step: StepFigures, baseline: BaselineFigures, bounds: Bounds) -> Verdict:
    metrics = at_its_look(step.metrics, bounds.confidence)
    broken: list[str] = []
    warnings: list[str] = []
    memory = memory_findings(step, bounds)
    swap = swap_finding(metrics, baseline, bounds)
    runner = runner_finding(step)
    if step.slots == 1:
        # one is the floor: memory is reported, never refusing
        warnings.extend(memory + ([swap] if swap else []) + ([runner] if runner else []))
        label = "floor" if step.is_reference else "drift check" if step.closing else "baseline"
        inside = True
    else:
        if runner:
            broken.append(runner)
        broken.extend(memory)
        if swap:
            broken.append(swap)
        if step.failed_served:
            broken.append(
                f"{len(step.failed_served)} turn(s) served at one slot failed: "
                f"{step.failed_served[0]}"
            )
        broken.extend(step.log_findings)
        if step.reasonless:
            broken.append(f"{step.reasonless} answer(s) without stop, length or tool_calls")
        threshold = baseline.fidelity_threshold(bounds)
        if step.agreement is None or step.agreement.structural is None:
            broken.append("fidelity not measured: no turn served in both runs")
        elif step.agreement.structural < threshold:
            broken.append(f"fidelity: structural {step.agreement.structural:.3f} < {threshold:.3f}")
        look = (step.metrics.look, step.metrics.looks)
        one_slot = baseline.best_one_slot_latency
        broken.extend(latency_findings(step.latency, one_slot, bounds, look))
        inside = not broken
        label = "qualifies" if inside else "breaks " + short_name(broken[0])
    best = baseline.best_rate
    low, high = metrics.turns_interval(bounds.confidence)
    runs_low, runs_high = metrics.interval(bounds.confidence) if metrics.on_runs else (None, None)
    # a steady-state step whose window held too few units for an interval cannot be called
    unknowable = metrics.window_start is not None and not metrics.has_interval
    if unknowable:
        if metrics.on_runs:
            runs_low, runs_high = 0.0, math.inf
        else:
            low, high = 0.0, math.inf
    gain = gain_low = gain_high = None
    if best > 0:
        gain = metrics.rate / best - 1.0
        ratio = None if unknowable else gain_ratio(metrics, baseline, bounds.confidence)
        if ratio is not None:
            gain_low, gain_high = ratio[0] - 1.0, ratio[1] - 1.0
    qualifies = step.slots > 1 and inside and gain_low is not None and gain_low >= bounds.min_gain
    if step.slots > 1 and inside and not qualifies:
        undecided = unknowable or (gain_high is not None and gain_high >= bounds.min_gain)
        label = "inconclusive" if undecided else "no gain"
    return Verdict(
        index=step.index,
        slots=step.slots,
        label=label,
        inside_bounds=inside,
        qualifies=qualifies,
        broken=tuple(broken),
        warnings=tuple(warnings),
        gain=gain,
        agreement=step.agreement,
        metrics=metrics,
        gain_low=gain_low,
        gain_high=gain_high,
        turns_per_hour_low=low,
        turns_per_hour_high=high,
        confidence=bounds.confidence if metrics.has_interval else None,
        runs_per_hour_low=runs_low,
        runs_per_hour_high=runs_high,
        latency=step.latency,
    )


def judge_step(step: StepRecord, baseline: Baseline, bounds: Bounds) -> Verdict:
    """One recorded step against the bounds (its figures made on the way)."""
    from .baseline import step_figures  # lazy: the gate judges kept figures, never steps

    return judge_step_figures(step_figures(step, baseline), baseline.figures, bounds)


class SweepJudgement(msgspec.Struct, frozen=True):
    verdicts: tuple[Verdict, ...]
    ideal: int
    reason: str
    figures: SweepFigures
    knee: Knee | None = None  # how the ideal N was found; None when it is 1 for want of one

    def verdict_for(self, slots: int) -> Verdict | None:
        matching = [v for v in self.verdicts if v.slots == slots]
        return matching[-1] if matching else None


def judge_figures(figures: SweepFigures, bounds: Bounds) -> SweepJudgement:
    judgement = _judge_figures(figures, bounds)
    note = latency_decided(judgement.verdicts, judgement.ideal)
    return replace(judgement, reason=judgement.reason + note) if note else judgement


def latency_decided(verdicts: Sequence[Verdict], ideal: int) -> str:
    """'; N=3 refused by …' when a latency bound alone refused the next larger N: that bound
    decided. (An answer of one already names every step's first broken bound.)"""
    if ideal <= 1:
        return ""
    for verdict in sorted(verdicts, key=lambda v: v.slots):
        if verdict.slots > ideal and verdict.broken:
            if all(f.startswith(LATENCY_BOUND_KEYS) for f in verdict.broken):
                return f"; N={verdict.slots} refused by {verdict.broken[0]}"
            return ""
    return ""


def _amount(rate: float) -> str:
    """1,743 rather than 1743.0: thousands apart, no false decimals above a hundred."""
    return f"{rate:,.0f}" if rate >= 100 else f"{rate:.1f}"


def _gain_range(verdict: Verdict) -> str:
    """ " (+12% to +31%)": a gain is never said without its interval where it has one."""
    if verdict.gain_low is None or verdict.gain_high is None:
        return " (no interval)"
    return f" ({verdict.gain_low:+.0%} to {verdict.gain_high:+.0%})"


def _judge_figures(figures: SweepFigures, bounds: Bounds) -> SweepJudgement:
    judgement = _judge_steps(figures, bounds)
    said = drift_sentence(
        figures.baseline, any(s.block_seconds for s in figures.steps)
    ) + pairing_sentence(figures)
    return replace(judgement, reason=judgement.reason + said) if said else judgement


def _judge_steps(figures: SweepFigures, bounds: Bounds) -> SweepJudgement:
    verdicts = tuple(judge_step_figures(s, figures.baseline, bounds) for s in figures.steps)
    found = knee(rates_of(verdicts), bounds.min_gain, bounds.confidence)
    if found is not None:
        chosen = next(v for v in verdicts if v.index == found.chosen.index)
        figure = chosen.decided_by
        reason = (
            f"{chosen.slots} slots stayed inside every bound and served "
            f"{_amount(chosen.metrics.rate)} {figure}, {chosen.gain:+.0%}"
            f"{_gain_range(chosen)} over one slot"
        )
        plateau = plateau_sentence(found, bounds.min_gain, figure)
        if plateau:
            reason += f"; the knee is {chosen.slots}: {plateau}"
        return SweepJudgement(verdicts, chosen.slots, reason, figures, found)
    if not any(s.slots == 1 for s in figures.steps):
        return SweepJudgement(verdicts, 1, "no one-slot run to compare with", figures)
    multi = [v for v in verdicts if v.slots > 1]
    if not multi:
        return SweepJudgement(verdicts, 1, "one: only one slot was measured", figures)
    if any(v.qualifies for v in multi):
        reason = (
            f"one: no step that beat one slot showed a {bounds.min_gain:.0%} gain over "
            "the best step before it — "
        )
    else:
        reason = "one: no step beat one slot inside every bound — "
    reason += "; ".join(_step_summary(v, bounds) for v in multi)
    open_steps = [v for v in multi if v.inside_bounds and v.inconclusive]
    if open_steps:  # the noise decided, not the evidence: say so, and what would decide
        undecided = [v.slots for v in open_steps]
        own = all(v.metrics.gain_over_own_blocks for v in open_steps)
        reason += ". " + too_noisy_sentence(undecided, one_slot_noise(verdicts), bounds, own)
    return SweepJudgement(verdicts, 1, reason, figures)


def knee_json(judgement: SweepJudgement, min_gain: float) -> dict[str, object] | None:
    """The knee for scripts: its N, what each step past it adds over the best step before it,
    and the sentence the report prints; None when the ideal N is 1 for want of a knee."""
    found = judgement.knee
    if found is None:
        return None
    return {
        "slots": found.chosen.slots,
        "past": [
            {"slots": p.slots, "adds": p.adds, "below_min_gain": p.below_min_gain}
            for p in found.past
        ],
        "plateau": plateau_sentence(found, min_gain, judgement.figures.decided_by) or None,
    }


def rates_of(verdicts: Sequence[Verdict]) -> list[Rate]:
    """The verdicts as the knee rule reads them: the deciding figure (runs/h for whole runs,
    else turns/h) with its noise."""
    return [
        Rate(
            index=v.index,
            slots=v.slots,
            throughput=v.metrics.throughput,
            qualifies=v.qualifies,
            counts=v.inside_bounds,
            too_short=v.metrics.window_start is not None and not v.metrics.has_interval,
            paired=v.metrics.over_earlier,
            own_gain=_own_gain(v.metrics),
        )
        for v in verdicts
    ]


def _own_gain(metrics: StepMetrics) -> Estimate | None:
    """An interleaved step's gain over its own one-slot blocks, as the knee rule reads it."""
    if not metrics.gain_over_own_blocks or metrics.capacity_gain is None:
        return None
    return Estimate(metrics.capacity_gain, metrics.capacity_gain_se, metrics.capacity_clusters)


def judge_sweep(steps: Sequence[StepRecord], bounds: Bounds) -> SweepJudgement:
    """Recorded steps against the bounds: their figures, judged."""
    from .baseline import sweep_figures  # lazy: the gate judges kept figures, never steps

    return judge_figures(sweep_figures(steps), bounds)


def _step_summary(verdict: Verdict, bounds: Bounds) -> str:
    if not verdict.inside_bounds:
        return f"N={verdict.slots} {verdict.label} ({verdict.broken[0]})"
    gain = "unknown" if verdict.gain is None else f"{verdict.gain:+.0%}"
    if verdict.qualifies:
        return (
            f"N={verdict.slots} gained {gain} over one slot but not shown "
            f"{bounds.min_gain:.0%} over the best step before it"
        )
    if verdict.inconclusive:
        interval = gain_range(verdict)
        if not interval:  # a point without its interval reads as a finding: leave it out
            return f"N={verdict.slots} held too few turns for an interval"
        return (
            f"N={verdict.slots} gained {gain} ({interval}), inconclusive "
            f"about the {bounds.min_gain:.0%} needed"
        )
    return f"N={verdict.slots} gained {gain}, under the {bounds.min_gain:.0%} needed"


def gain_range(verdict: Verdict) -> str:
    """'+3% to +18%' — the gain's interval as printed; '' without one."""
    if verdict.gain_low is None or verdict.gain_high is None or verdict.confidence is None:
        return ""
    return f"{verdict.gain_low:+.0%} to {verdict.gain_high:+.0%}"
