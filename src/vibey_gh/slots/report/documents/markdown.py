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

from ....files import atomic_write_text
from ....interfaces.bounds import Bounds
from ...evidence.store import Evidence
from ...judging.gains import COUNTED_TURNS, interval_method
from ...judging.judge import SweepJudgement, gain_range
from ...judging.statistics.knee import knee_paragraph
from ...judging.truth.reported import describe as describe_reported
from ..plotting import plots as plot_module  # its plots_available is read when asked
from ..plotting.plots import PLOT_NAMES, PLOTS_MISSING, write_plots
from ..tables.latency_table import LATENCY_COLUMNS, latency_lines, latency_rows
from ..tables.split_window import prefix_cache_lines, split_window_section
from ..tables.step_table import (
    columns_for,
    inconclusive_sentence,
    markdown_table,
    shown_label,
    step_rows,
    throughput_sentence,
)
from .context_sections import bounds_section, corpus_section, device_section, not_measured_section
from .facts import (
    depth_facts,
    noise_facts,
    step_names,
)
from .measured_sections import (
    depth_section,
    fidelity_section,
    memory_section,
)

REPORT_SUFFIX = "-report.md"

# --- Markdown ---------------------------------------------------------------------------------


def _utc(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))


def _tokens(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


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
        label = shown_label(verdict, judgement)
        lines.append(f"- **{name}** ({label}): {', '.join(facts)}.")
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
    method = interval_method(judgement.figures)
    # counted turns compare a step with the better one-slot run; paired work with one slot's
    # pooled runs, or with the step's own one-slot blocks
    against = "the better one-slot run" if method == COUNTED_TURNS else "one slot"
    if confidence is None:
        lines.append(
            "These steps were measured without intervals (one pass over the corpus each, "
            "the older method): each figure is a single reading. Calibrate again for intervals."
        )
    else:
        lines.append(
            f"Each step was measured in a steady state; its throughput counts only the window "
            f"in which every worker was busy, and its interval ({confidence:.0%}; {method}) "
            "is judged from the step's own data. A gain's interval carries the noise of both "
            f"the step and {against}. A step qualifies "
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
            line += f" against {against}"
        lines.append(line + f": {shown_label(verdict, judgement)}.")
        if verdict.inconclusive:
            lines.append("  " + inconclusive_sentence(verdict, step, bounds.min_gain))
    if judgement.knee is not None:
        lines += ["", knee_paragraph(judgement.knee, bounds.min_gain, judgement.figures.decided_by)]
    return lines


def _latency_section(judgement: SweepJudgement, bounds: Bounds) -> list[str]:
    lines = [
        "## Latency",
        "",
        "Per step, over the served turns that started in its measurement window: time to first "
        "token (TTFT, from sending the turn to the first chunk of text or tool call), "
        "time per output token (TPOT, a turn's mean gap between its later tokens), "
        "inter-token latency (ITL, every gap between tokens, each its own sample), decode "
        "speed, and the whole turn. Each p95 carries its distribution-free interval (order "
        f"statistics) at {bounds.confidence:.0%} confidence.",
        "",
        markdown_table(latency_rows(judgement, bounds.confidence), LATENCY_COLUMNS),
    ]
    said = latency_lines(judgement, bounds)
    return lines + (["", *(f"- {line}" for line in said)] if said else [])


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
        *fidelity_section(evidence, judgement, bounds),
        *image("fidelity", "fidelity against slots"),
        "",
        *memory_section(evidence, judgement, bounds),
        *image("memory", "memory across the sweep"),
        "",
        *depth_section(depth),
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
    if plotting is None:
        plotting = plot_module.plots_available()
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
    stem = json_path.stem
    return [json_path.with_name(f"{stem}{REPORT_SUFFIX}")] + [
        json_path.with_name(f"{stem}-{name}.png") for name in PLOT_NAMES
    ]
