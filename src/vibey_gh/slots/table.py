"""The step table (the seed's columns), as rows of strings for Markdown and the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from .judge import SweepJudgement
from .records import StepRecord

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
        label = verdict.label
        if verdict.warnings and step.slots == 1:
            label += "; memory warned" if any("wired" in w for w in verdict.warnings) else ""
        if step.ended_early:
            label += f" (ended early: {step.ended_early})"
        rows.append(
            [
                name,
                f"{step.slots} × {step.window:,}",
                f"{m.served}/{step.corpus_turns or m.total}",
                f"{m.turns_per_hour:.1f}",
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
