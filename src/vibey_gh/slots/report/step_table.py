"""The step table (the seed's columns), as rows of strings for Markdown and the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from ..judging.judge import SweepJudgement, Verdict, gain_range
from ..judging.records import StepRecord

COLUMNS = (
    "step",
    "slots × window",
    "served",
    "turns/h",
    "out tok/s",
    "p50 s",
    "p95 s",
    "peak wired",
    "free min",
    "swap-out",
    "fidelity (structural / exact)",
    "verdict",
)


def _num(value: float | None, fmt: str) -> str:
    return "—" if value is None else format(value, fmt)


def _short(value: float) -> str:
    """36315 -> '36.3k'; small rates keep their decimals."""
    return f"{value / 1000:.1f}k" if value >= 1000 else f"{value:.1f}"


def throughput_cell(verdict: Verdict) -> str:
    """'36,315 turns/h (31.2k–40.9k)': the point and its interval, where it has one."""
    point = verdict.metrics.turns_per_hour
    if verdict.confidence is None:  # measured without an interval
        return f"{point:.1f}" + (" (too few turns for an interval)" if verdict.inconclusive else "")
    text = f"{point:,.0f}" if point >= 1000 else f"{point:.1f}"
    return text + f" ({_short(verdict.turns_per_hour_low)}–{_short(verdict.turns_per_hour_high)})"


def verdict_cell(verdict: Verdict) -> str:
    """The label, with the gain and its interval above one slot."""
    label = verdict.label
    interval = gain_range(verdict)
    if verdict.slots > 1 and verdict.gain is not None and interval:
        label += f", gain {verdict.gain:+.0%} ({interval})"
    return label


def inconclusive_sentence(verdict: Verdict, step: StepRecord, min_gain: float) -> str:
    """One sentence: why this step could not be called either way."""
    interval = gain_range(verdict)
    confidence = f" at {verdict.confidence:.0%}" if verdict.confidence else ""
    measured = step.measurement or {}
    start, end = measured.get("start"), measured.get("end")
    seconds = f"{end - start:.0f} s" if isinstance(start, float) and isinstance(end, float) else ""
    if measured.get("why_ended") == "inconclusive at max_step_seconds":
        when = f"even after {seconds} of measurement, the cap (max_step_seconds)"
    else:
        when = f"under today's bounds, after {seconds} of measurement" if seconds else "today"
    gain = "unknown" if verdict.gain is None else f"{verdict.gain:+.0%}"
    if not interval:
        return (
            f"N={verdict.slots} is inconclusive: its measurement window held too few turns "
            f"for an interval ({when}), so its gain {gain} cannot be told from noise and it "
            "does not qualify."
        )
    return (
        f"N={verdict.slots} is inconclusive: its gain {gain} ({interval}{confidence}) "
        f"straddles the {min_gain:.0%} needed {when}, so it does not qualify."
    )


def step_rows(steps: Sequence[StepRecord], judgement: SweepJudgement) -> list[list[str]]:
    rows = []
    one_slot_seen = 0
    for step, verdict in zip(steps, judgement.verdicts, strict=True):
        m = verdict.metrics
        if step.slots == 1:
            one_slot_seen += 1
            name = "N=1" if one_slot_seen == 1 else "N=1 again"
        else:
            name = f"N={step.slots}"
        agreement = verdict.agreement
        if agreement is None or agreement.structural is None or agreement.exact is None:
            fidelity = "—"
        else:
            fidelity = f"{agreement.structural:.3f} / {agreement.exact:.3f}"
        label = verdict_cell(verdict)
        if verdict.warnings and step.slots == 1:
            label += "; memory warned" if any("wired" in w for w in verdict.warnings) else ""
        if step.ended_early:
            label += f" (ended early: {step.ended_early})"
        rows.append(
            [
                name,
                f"{step.slots} × {step.window:,}",
                f"{m.served}/{step.corpus_turns or m.total}",
                throughput_cell(verdict),
                f"{m.output_tokens_per_s:.2f}",
                _num(m.p50_s, ".1f"),
                _num(m.p95_s, ".1f"),
                "—" if m.peak_wired_bytes is None else f"{m.peak_wired_bytes / 1e9:.2f} GB",
                "—" if m.min_free_share is None else f"{m.min_free_share:.0%}",
                _num(m.swap_out_mb_per_min, ".1f")
                + (" MB/min" if m.swap_out_mb_per_min is not None else ""),
                fidelity,
                label,
            ]
        )
    return rows


def markdown_table(rows: Sequence[Sequence[str]], columns: Sequence[str] = COLUMNS) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out = [line(columns), "|" + "|".join("---" for _ in columns) + "|"]
    out.extend(line(r) for r in rows)
    return "\n".join(out)
