"""The report's sections on what each step did to answers and to the machine: fidelity and
where changed answers drift, memory against its ceiling, what production held meanwhile, and
how deep the replayed prompts really were."""

from __future__ import annotations

from ....interfaces.bounds import Bounds
from ...evidence.store import Evidence
from ...judging.judge import SweepJudgement
from ...judging.metrics import percentile
from ...judging.step_findings import GB
from ..tables.step_table import markdown_table
from .facts import DepthFacts, divergence_facts, step_names


def gb_text(value: float | None) -> str:
    return "unknown" if value is None else f"{value / GB:.2f} GB"


def tokens_text(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def fidelity_section(evidence: Evidence, judgement: SweepJudgement, bounds: Bounds) -> list[str]:
    baseline = judgement.figures.baseline
    threshold = baseline.fidelity_threshold(bounds)
    lines = [
        "## Fidelity",
        "",
        f"One slot agreed with itself on {baseline.self_agreement:.3f} of the answers' "
        f"structure; a step must reach {threshold:.3f} (tolerance {bounds.fidelity_tolerance:g}). "
        "Where an answer changed, the offset is the first character that differs from the "
        "first one-slot answer (tool calls appended as JSON).",
        "",
    ]
    found = divergence_facts(evidence, judgement)
    if not found:
        return [*lines, "No step could be compared with the first one-slot run."]
    rows = []
    for item in found:
        offsets = [float(o) for o in item.offsets]
        if offsets:
            median = f"{item.median:.0f}"
            quartiles = f"{percentile(offsets, 0.25):.0f}–{percentile(offsets, 0.75):.0f}"
            extremes = f"{item.offsets[0]}–{item.offsets[-1]}"
        else:
            median = quartiles = extremes = "—"
        rows.append(
            [
                item.name,
                str(item.compared),
                str(item.structure_changed),
                str(item.changed),
                median,
                quartiles,
                extremes,
            ]
        )
    columns = (
        "step",
        "compared",
        "structure changed",
        "exact changed",
        "first difference: median",
        "quartiles",
        "range",
    )
    return [*lines, markdown_table(rows, columns)]


def production_lines(evidence: Evidence, judgement: SweepJudgement) -> list[str]:
    """How much of the machine's memory was production's, left out of the figures above."""
    names = step_names(evidence.steps, judgement)
    rows = []
    for step, verdict, name in zip(evidence.steps, judgement.verdicts, names, strict=True):
        if step.production_footprint is None:
            continue
        metrics = verdict.metrics
        gpu = (
            "—"
            if step.production_gpu_bytes is None
            else ", ".join(gb_text(b) for b in step.production_gpu_bytes)
        )
        rows.append(
            [
                name,
                gb_text(step.production_footprint_bytes),
                gpu,
                gb_text(metrics.peak_raw_wired_bytes),
                gb_text(metrics.peak_wired_bytes),
            ]
        )
    if not rows:
        return []
    accounts = sorted({s.production_footprint for s in evidence.steps if s.production_footprint})
    columns = ("step", "production held", "production GPU", "peak wired (raw)", "charged")
    return [
        "",
        "Memory is charged for production at N: what the production runner held while each "
        "step ran is left out (it would be replaced, not added to). Raw figures are the whole "
        "machine's.",
        "",
        markdown_table(rows, columns),
        "",
        *(f"- {account}" for account in accounts),
    ]


def memory_section(evidence: Evidence, judgement: SweepJudgement, bounds: Bounds) -> list[str]:
    lines = ["## Memory", ""]
    budgets = {s.memory_budget_bytes for s in evidence.steps if s.memory_budget_bytes}
    peaks = [
        (v.metrics.peak_wired_bytes, name)
        for v, name in zip(judgement.verdicts, step_names(evidence.steps, judgement), strict=True)
        if v.metrics.peak_wired_bytes is not None
    ]
    if len(budgets) == 1:
        budget = budgets.pop()
        ceiling = bounds.wired_ceiling * budget
        lines.append(
            f"Ceiling: {bounds.wired_ceiling:.0%} of {gb_text(budget)} = {gb_text(ceiling)} "
            "of wired memory (the cgroup limit stands in for physical memory where it is lower)."
        )
        if peaks:
            peak, name = max(peaks)
            margin = ceiling - peak
            side = "below" if margin >= 0 else "above"
            lines.append(
                f"The highest peak was {gb_text(peak)} at {name}, "
                f"{gb_text(abs(margin))} {side} the ceiling."
            )
    elif budgets:
        lines.append("The memory budget changed between steps; each step is judged on its own.")
    else:
        lines.append("Memory was not measured: no memory budget is recorded.")
    lines += production_lines(evidence, judgement)
    swap_limit = judgement.figures.baseline.swap_limit(bounds)
    lines += [
        "",
        f"Swap-out limit for more than one slot: {swap_limit:.1f} MB/min (the larger of "
        f"{bounds.swap_factor:g} × the one-slot rate and {bounds.swap_floor_mb_per_min:g} MB/min).",
    ]
    return lines


def depth_section(facts: DepthFacts | None) -> list[str]:
    lines = ["## Measured depth of the replayed prompts", ""]
    if facts is None or facts.minimum is None:
        return [*lines, "Not measured: no served turn reported its prompt tokens."]
    lines.append(
        f"At {facts.source}, the {facts.served} served prompts measured "
        f"{tokens_text(facts.minimum)} to {tokens_text(facts.maximum)} tokens "
        f"(p50 {tokens_text(facts.median)}) in a window of {facts.window:,} tokens per slot."
    )
    if facts.ratio is None:
        lines.append(
            f"The ratio to the characters ÷ 3 estimate is unavailable: {facts.ratio_reason}."
        )
    else:
        verdict = "conservative, as intended" if facts.ratio <= 1 else "an underestimate"
        lines.append(
            f"They carried {facts.ratio:.2f} of the characters ÷ 3 estimate over "
            f"{facts.matched} matched turns: the estimate was {verdict}."
        )
    return lines
