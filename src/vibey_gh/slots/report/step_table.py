"""The step table (the seed's columns), as rows of strings for Markdown and the terminal.

A sweep of whole runs is decided on runs per hour: its table says so in the throughput
column's header ("runs/h (turns/h)"), shows runs per hour with their interval and the turns
per hour beside them, and gives the latency columns as "turn / run" (a run's latency being
its first send to its last answer, tool time included).
"""

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


RUN_COLUMNS = tuple(
    {"turns/h": "runs/h (turns/h)", "p50 s": "p50 s turn / run", "p95 s": "p95 s turn / run"}.get(
        column, column
    )
    for column in COLUMNS
)


def columns_for(judgement: SweepJudgement) -> tuple[str, ...]:
    """The table's columns: the run columns where the sweep is decided on runs per hour."""
    return RUN_COLUMNS if judgement.figures.decided_by == "runs/h" else COLUMNS


def _num(value: float | None, fmt: str) -> str:
    return "—" if value is None else format(value, fmt)


def _short(value: float) -> str:
    """36315 -> '36.3k'; small rates keep their decimals."""
    return f"{value / 1000:.1f}k" if value >= 1000 else f"{value:.1f}"


def throughput_cell(verdict: Verdict) -> str:
    """'36,315 (31.2k–40.9k)': the deciding figure's point and its interval, where it has one;
    for runs, the turns per hour after it ('412 (380–441); 2,310 turns/h')."""
    text = _rate_cell(verdict)
    if verdict.metrics.on_runs:
        text += f"; {verdict.metrics.turns_per_hour:,.0f} turns/h"
    return text


def throughput_sentence(verdict: Verdict) -> str:
    """The cell as words: '36,315 (31.2k–40.9k) turns/h', or for runs
    '412 (380–441) runs/h (2,310 turns/h)'."""
    if not verdict.metrics.on_runs:
        return f"{_rate_cell(verdict)} turns/h"
    return f"{_rate_cell(verdict)} runs/h ({verdict.metrics.turns_per_hour:,.0f} turns/h)"


def _rate_cell(verdict: Verdict) -> str:
    point = verdict.metrics.rate
    units = "runs" if verdict.metrics.on_runs else "turns"
    if verdict.confidence is None:  # measured without an interval
        text = f"{point:.1f}" + (
            f" (too few {units} for an interval)" if verdict.inconclusive else ""
        )
    else:
        text = f"{point:,.0f}" if point >= 1000 else f"{point:.1f}"
        text += f" ({_short(verdict.rate_low)}–{_short(verdict.rate_high)})"
    return text


def _latency_cell(turn: float | None, run: float | None, on_runs: bool) -> str:
    return f"{_num(turn, '.1f')} / {_num(run, '.1f')}" if on_runs else _num(turn, ".1f")


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
                _latency_cell(m.p50_s, m.run_p50_s, m.on_runs),
                _latency_cell(m.p95_s, m.run_p95_s, m.on_runs),
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
    """`columns`: COLUMNS, or `columns_for(judgement)` for a table of steps."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out = [line(columns), "|" + "|".join("---" for _ in columns) + "|"]
    out.extend(line(r) for r in rows)
    return "\n".join(out)
