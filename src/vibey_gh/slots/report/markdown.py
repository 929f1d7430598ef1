"""The full evidence report: Markdown that people read, with the PNG plots it embeds.

The short summary beside every evidence file (`summary.py`) says what was decided; this report
says why, and how far to trust it: the device, the corpus, the bounds, the step table, how deep
the replayed prompts really were, how noisy the machine was between its two one-slot runs, where
changed answers first drift from the one-slot answers, and what the sweep did not measure.

Everything is computed from the evidence file alone (re-judged against the bounds given), so a
saved evidence file renders the same report on any machine. The one figure the evidence may not
hold is the depth estimate per turn: it is read from `corpus.depth_estimates` when the evidence
carries it, or from `depth_estimates` when the caller has the corpus at hand.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...files import atomic_write_text
from ..evidence.store import Evidence
from ..judging.bounds import Bounds
from ..judging.judge import GB, SweepJudgement, gain_range
from ..judging.knee import knee_paragraph
from ..judging.metrics import percentile
from ..judging.reported import describe as describe_reported
from .context_sections import bounds_section, corpus_section, device_section, not_measured_section
from .facts import (
    DepthFacts,
    depth_facts,
    divergence_facts,
    noise_facts,
    step_names,
)
from .split_window import prefix_cache_lines, split_window_section
from .step_table import (
    columns_for,
    inconclusive_sentence,
    markdown_table,
    step_rows,
    throughput_sentence,
)

REPORT_SUFFIX = "-report.md"

# --- Markdown ---------------------------------------------------------------------------------


def _utc(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))


def _tokens(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _gb(value: float | None) -> str:
    return "unknown" if value is None else f"{value / GB:.2f} GB"


def _decision_section(evidence: Evidence, judgement: SweepJudgement) -> list[str]:
    recorded = evidence.document.decision
    lines = ["## Decision", "", f"**Ideal N = {judgement.ideal}.** {judgement.reason}."]
    if recorded is not None and recorded.ideal != judgement.ideal:
        lines += [
            "",
            f"When it was recorded this evidence supported {recorded.ideal} "
            f"({recorded.reason}); it is judged here by today's bounds and rule.",
        ]
    if recorded is not None and recorded.stop_reason:
        lines += ["", f"Why the sweep ended: {recorded.stop_reason}."]
    if not evidence.document.complete:
        lines += ["", "The sweep is not finished: the decision covers the steps measured so far."]
    return lines


def _steps_section(evidence: Evidence, judgement: SweepJudgement) -> list[str]:
    names = step_names(evidence.steps, judgement)
    table = markdown_table(step_rows(evidence.steps, judgement), columns_for(judgement))
    lines = ["## Steps", "", table, ""]
    for step, verdict, name in zip(evidence.steps, judgement.verdicts, names, strict=True):
        m = verdict.metrics
        load = "—" if step.load_seconds is None else f"{step.load_seconds:.1f} s"
        facts = [
            f"replay {m.duration_s:.0f} s",
            f"model load {load}",
            f"production polled {step.production.polls}×, busy {step.production.busy_polls}×",
        ]
        if step.discarded_attempts:
            facts.append(f"{step.discarded_attempts} unclean attempt(s) discarded")
        if step.ended_early:
            facts.append(f"ended early: {step.ended_early}")
        failed = [t for t in step.turns if not t.result.served]
        if failed:
            reasons = sorted({t.result.error or str(t.result.finish_reason) for t in failed})
            facts.append(f"{len(failed)} failed turn(s): {'; '.join(reasons)}")
        lines.append(f"- **{name}** ({verdict.label}): {', '.join(facts)}.")
        if step.runner_reported is not None:  # evidence older than the field has none
            lines.append(f"  - runner reported: {describe_reported(step.runner_reported)}")
        lines += [f"  - breaks: {item}" for item in verdict.broken]
        lines += [f"  - warning: {item}" for item in verdict.warnings]
    return lines


def _throughput_section(
    evidence: Evidence, judgement: SweepJudgement, names: Sequence[str], bounds: Bounds
) -> list[str]:
    noise = noise_facts(judgement)
    lines = ["## Throughput and its intervals", ""]
    confidence = next((v.confidence for v in judgement.verdicts if v.confidence), None)
    if confidence is None:
        lines.append(
            "These steps were measured without intervals (one pass over the corpus each, "
            "the older method): each figure is a single reading. Calibrate again for intervals."
        )
    else:
        lines.append(
            f"Each step was measured in a steady state; its throughput counts only the window "
            f"in which every worker was busy, and its interval ({confidence:.0%}, batch means "
            "over ten sub-windows) is judged from the step's own data. A gain's interval "
            "carries the noise of both the step and the better one-slot run. A step qualifies "
            f"when the low end of its gain clears {bounds.min_gain:.0%}, gains nothing when the "
            "high end does not, and is inconclusive in between."
        )
    if noise.noise is None:
        lines.append(f"Noise is unknown: {noise.reason}.")
    else:
        rates = " and ".join(f"{r:,.0f}" for r in noise.one_slot_turns_per_hour)
        lines.append(
            f"The one-slot runs served {rates} turns/h: they differ by {noise.noise:.1%}, "
            "how stable this machine was."
        )
    lines.append("")
    for step, verdict, name in zip(evidence.steps, judgement.verdicts, names, strict=True):
        line = f"- {name}: {throughput_sentence(verdict)}"
        if verdict.slots > 1 and verdict.gain is not None:
            interval = gain_range(verdict)
            line += f", {verdict.gain:+.1%}" + (f" ({interval})" if interval else "")
            line += " against the better one-slot run"
        lines.append(line + f": {verdict.label}.")
        if verdict.inconclusive:
            lines.append("  " + inconclusive_sentence(verdict, step, bounds.min_gain))
    if judgement.knee is not None:
        lines += ["", knee_paragraph(judgement.knee, bounds.min_gain, judgement.figures.decided_by)]
    return lines


def _latency_section(judgement: SweepJudgement, bounds: Bounds) -> list[str]:
    from .latency_table import LATENCY_COLUMNS, latency_lines, latency_rows

    lines = [
        "## Latency",
        "",
        "Per step, over the served turns that started in its measurement window: time to first "
        "token (TTFT, from sending the turn to the first chunk of text or tool call), "
        "inter-token latency (ITL, the mean gap between the later tokens), decode speed, and "
        "the whole turn. Each p95 carries its distribution-free interval (order statistics) at "
        f"{bounds.confidence:.0%} confidence.",
        "",
        markdown_table(latency_rows(judgement, bounds.confidence), LATENCY_COLUMNS),
    ]
    said = latency_lines(judgement, bounds)
    return lines + (["", *(f"- {line}" for line in said)] if said else [])


def _fidelity_section(evidence: Evidence, judgement: SweepJudgement, bounds: Bounds) -> list[str]:
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


def _production_lines(evidence: Evidence, judgement: SweepJudgement) -> list[str]:
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
            else ", ".join(_gb(b) for b in step.production_gpu_bytes)
        )
        rows.append(
            [
                name,
                _gb(step.production_footprint_bytes),
                gpu,
                _gb(metrics.peak_raw_wired_bytes),
                _gb(metrics.peak_wired_bytes),
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


def _memory_section(evidence: Evidence, judgement: SweepJudgement, bounds: Bounds) -> list[str]:
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
            f"Ceiling: {bounds.wired_ceiling:.0%} of {_gb(budget)} = {_gb(ceiling)} of wired "
            "memory (the cgroup limit stands in for physical memory where it is lower)."
        )
        if peaks:
            peak, name = max(peaks)
            margin = ceiling - peak
            side = "below" if margin >= 0 else "above"
            lines.append(
                f"The highest peak was {_gb(peak)} at {name}, {_gb(abs(margin))} {side} the "
                "ceiling."
            )
    elif budgets:
        lines.append("The memory budget changed between steps; each step is judged on its own.")
    else:
        lines.append("Memory was not measured: no memory budget is recorded.")
    lines += _production_lines(evidence, judgement)
    swap_limit = judgement.figures.baseline.swap_limit(bounds)
    lines += [
        "",
        f"Swap-out limit for more than one slot: {swap_limit:.1f} MB/min (the larger of "
        f"{bounds.swap_factor:g} × the one-slot rate and {bounds.swap_floor_mb_per_min:g} MB/min).",
    ]
    return lines


def _depth_section(facts: DepthFacts | None) -> list[str]:
    lines = ["## Measured depth of the replayed prompts", ""]
    if facts is None or facts.minimum is None:
        return [*lines, "Not measured: no served turn reported its prompt tokens."]
    lines.append(
        f"At {facts.source}, the {facts.served} served prompts measured "
        f"{_tokens(facts.minimum)} to {_tokens(facts.maximum)} tokens "
        f"(p50 {_tokens(facts.median)}) in a window of {facts.window:,} tokens per slot."
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


def render_report(
    evidence: Evidence,
    bounds: Bounds,
    plots: Mapping[str, str] | None = None,
    depth_estimates: Mapping[str, int] | None = None,
    plots_note: str | None = None,
    *,
    judgement: SweepJudgement,
) -> str:
    """The report as Markdown. `plots` maps a plot's name to the file name to embed;
    `plots_note` says why there are none; `judgement` is the sweep as already judged against
    `bounds`."""
    names = step_names(evidence.steps, judgement)
    on = evidence.measured_on
    shown = dict(plots or {})
    depth = depth_facts(evidence, judgement, depth_estimates)

    def image(name: str, alt: str) -> list[str]:
        return ["", f"![{alt}]({shown[name]})"] if name in shown else []

    lines = [
        f"# Slots evidence report {evidence.fingerprint}",
        "",
        f"Measured {_utc(evidence.created_at)} on {on.hardware_model or 'an unnamed machine'} "
        f"({on.processor or 'unknown processor'}, {on.os}) with {on.runner} "
        f"at {_tokens(on.window)} tokens per slot. "
        + (
            "Recorded as this device's evidence."
            if evidence.document.recorded
            else "Not recorded as this device's evidence."
        ),
        "",
        *_decision_section(evidence, judgement),
        *(["", f"> {plots_note}"] if plots_note else []),
        "",
        *_steps_section(evidence, judgement),
        *(["", *what_if] if (what_if := split_window_section(evidence, judgement)) else []),
        *(["", *cache] if (cache := prefix_cache_lines(evidence, judgement)) else []),
        "",
        *_throughput_section(evidence, judgement, names, bounds),
        *image("throughput", "throughput against slots"),
        "",
        *_latency_section(judgement, bounds),
        *image("latency", "latency against slots"),
        "",
        *_fidelity_section(evidence, judgement, bounds),
        *image("fidelity", "fidelity against slots"),
        "",
        *_memory_section(evidence, judgement, bounds),
        *image("memory", "memory across the sweep"),
        "",
        *_depth_section(depth),
        "",
        *device_section(evidence),
        "",
        *corpus_section(evidence),
        "",
        *bounds_section(evidence, bounds),
        "",
        *not_measured_section(evidence, depth),
    ]
    notes = evidence.document.notes
    if notes:
        lines += ["", "## Notes", "", *(f"- {note}" for note in notes)]
    return "\n".join(lines) + "\n"


def write_report(
    evidence: Evidence,
    bounds: Bounds,
    folder: Path,
    stem: str,
    depth_estimates: Mapping[str, int] | None = None,
    plotting: bool | None = None,
    *,
    judgement: SweepJudgement,
) -> list[Path]:
    """Write `<stem>-report.md` and its plots `<stem>-<plot>.png` into `folder`; return them.

    Each file is written atomically (private, 0600); the Markdown comes last, so it never
    points at a plot that is not there yet. Without matplotlib (`plotting` False; by default,
    whether it is installed) the report has no plots and says how to get them.
    """
    from .plots import PLOTS_MISSING, plots_available, write_plots

    if plotting is None:
        plotting = plots_available()
    written = write_plots(evidence, judgement, bounds, folder, stem) if plotting else []
    markdown = render_report(
        evidence,
        bounds,
        {_plot_name(p, stem): p.name for p in written},
        depth_estimates,
        plots_note=None if plotting else PLOTS_MISSING,
        judgement=judgement,
    )
    report = folder / f"{stem}{REPORT_SUFFIX}"
    atomic_write_text(report, markdown)
    return [report, *written]


def _plot_name(path: Path, stem: str) -> str:
    return path.stem.removeprefix(f"{stem}-")


def report_paths(json_path: Path) -> list[Path]:
    """The report files that belong to an evidence file, whether or not they exist yet."""
    from .plots import PLOT_NAMES

    stem = json_path.stem
    return [json_path.with_name(f"{stem}{REPORT_SUFFIX}")] + [
        json_path.with_name(f"{stem}-{name}.png") for name in PLOT_NAMES
    ]
