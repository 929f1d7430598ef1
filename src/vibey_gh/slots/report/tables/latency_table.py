"""What the latency figures say to a reader: the latency table, the largest N that met each
configured latency bound, and what the ideal N costs in latency against one slot."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from msgspec.structs import replace

from ....interfaces.bounds import Bounds
from ....interfaces.schema import as_json
from ...judging.judge import SweepJudgement, Verdict
from ...judging.latencies.latency_bounds import LATENCY_BOUND_KEYS, latency_findings
from ...judging.latencies.latency_figures import LatencyFigures, QuantileSample, Summary

LATENCY_COLUMNS = (
    "step",
    "slots",
    "TTFT p50",
    "TTFT p95 (interval)",
    "TPOT p50",
    "TPOT p95 (interval)",
    "ITL p95 / p99",
    "decode tok/s p50",
    "turn p50",
    "turn p95 (interval)",
    "run p50 / p95 (interval)",
)


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 1000:.0f} ms" if value < 1.0 else f"{value:.2f} s"


def _ends(low: float | None, high: float | None) -> str:
    """'300 ms–1.20 s', '≥ 300 ms' (too few values to bound it above), or ''."""
    if low is not None and high is not None:
        return f"{_seconds(low)}–{_seconds(high)}"
    if low is not None:
        return f"≥ {_seconds(low)}"
    return f"≤ {_seconds(high)}" if high is not None else ""


def _p95(sample: QuantileSample | None, confidence: float) -> str:
    if sample is None:
        return "—"
    ends = _ends(*sample.interval(confidence))
    return f"{_seconds(sample.value())}" + (f" ({ends})" if ends else "")


def _itl(figures: LatencyFigures) -> str:
    """p95 / p99 of every gap between tokens, '—' where the turns kept no gaps."""
    summary = figures.itl_s
    if summary is None:
        return "—"
    return f"{_seconds(summary.p95_s)} / {_seconds(summary.p99_s)}"


def _pair(p50: float | None, sample: QuantileSample | None, confidence: float) -> str:
    if p50 is None and sample is None:
        return "—"
    return f"{_seconds(p50)} / {_p95(sample, confidence)}"


def latency_step_lines(
    judgement: SweepJudgement, confidence: float, names: Sequence[str]
) -> list[str]:
    """One line a step for the terminal: p50 / p95 (interval) of TTFT, ITL and the turn."""
    lines = []
    for name, verdict in zip(names, judgement.verdicts, strict=True):
        figures = verdict.latency
        if figures is None:
            continue
        run = f" · run {_pair(figures.run_p50_s, figures.run, confidence)}"
        lines.append(
            f"  {name:<10} TTFT {_pair(figures.ttft_p50_s, figures.ttft, confidence)} · "
            f"TPOT {_pair(figures.tpot_p50_s, figures.tpot, confidence)} · "
            f"ITL p95/p99 {_itl(figures)} · "
            f"turn {_pair(figures.latency_p50_s, figures.latency, confidence)}"
            + (run if figures.whole_runs else "")
        )
    return lines


def latency_rows(judgement: SweepJudgement, confidence: float) -> list[list[str]]:
    rows = []
    for verdict in judgement.verdicts:
        figures = verdict.latency
        if figures is None:
            rows.append([str(verdict.index), str(verdict.slots)] + ["—"] * 9)
            continue
        speed = figures.decode_tokens_per_s_p50
        rows.append(
            [
                str(verdict.index),
                str(verdict.slots),
                _seconds(figures.ttft_p50_s),
                _p95(figures.ttft, confidence),
                _seconds(figures.tpot_p50_s),
                _p95(figures.tpot, confidence),
                _itl(figures),
                "—" if speed is None else f"{speed:.1f}",
                _seconds(figures.latency_p50_s),
                _p95(figures.latency, confidence),
                _pair(figures.run_p50_s, figures.run, confidence) if figures.whole_runs else "—",
            ]
        )
    return rows


def _only(bounds: Bounds, key: str) -> Bounds:
    """`bounds` with every latency bound but `key` off."""
    off: dict[str, Any] = {k: None for k in LATENCY_BOUND_KEYS if k != key}
    return replace(bounds, **off)


def largest_meeting(judgement: SweepJudgement, bounds: Bounds) -> dict[str, int | None]:
    """For each configured latency bound, the largest measured N whose step it did not
    refuse (None: not even one slot met it)."""
    one_slot = judgement.figures.baseline.best_one_slot_latency
    met: dict[str, int | None] = {}
    for key in bounds.latency_bounds:
        alone = _only(bounds, key)
        passing = [
            v.slots
            for v in judgement.verdicts
            if not latency_findings(v.latency, one_slot, alone, (v.metrics.look, v.metrics.looks))
        ]
        met[key] = max(passing, default=None)
    return met


def _judged_p95(verdict: Verdict) -> float | None:
    sample = verdict.latency.judged[1] if verdict.latency else None
    return sample.value() if sample else None


def _one_slot(judgement: SweepJudgement) -> Verdict | None:
    """The one-slot step with the lower judged p95 latency (the base of latency_factor): the
    run's for whole runs, else the turn's."""
    ones = [v for v in judgement.verdicts if v.slots == 1 and _judged_p95(v) is not None]
    return min(ones, key=lambda v: _judged_p95(v) or 0.0, default=None)


def factor_judges(judgement: SweepJudgement) -> str:
    """What latency_factor judges for this evidence: 'run latency' or 'turn latency'."""
    whole = any(v.latency.whole_runs for v in judgement.verdicts if v.latency)
    return "run latency" if whole else "turn latency"


# the figures the ideal N's latency cost compares, as JSON names them and sentences say them
COST_FIGURES = (
    ("ttft", "TTFT"),
    ("tpot", "TPOT"),
    ("itl", "ITL"),
    ("turn_latency", "turn latency"),
    ("run_latency", "run latency"),
)


def ideal_cost_figures(judgement: SweepJudgement) -> dict[str, Any] | None:
    """The ideal N's p95 latency against the one-slot step's, as numbers: `{"slots": 3,
    "statistic": "p95", "figures": {"ttft": {"at_ideal_s": 1.9, "at_one_slot_s": 0.6}, …}}`
    (seconds; a figure neither step has is left out). None at N=1 or unmeasured."""
    ideal = judgement.verdict_for(judgement.ideal)
    base = _one_slot(judgement)
    if judgement.ideal <= 1 or ideal is None or ideal.latency is None or base is None:
        return None
    here, there = ideal.latency, base.latency
    assert there is not None
    compared: dict[str, dict[str, float]] = {}
    for key, mine, theirs in zip(
        (key for key, _ in COST_FIGURES),
        (here.ttft, here.tpot, here.itl, here.latency, here.run),
        (there.ttft, there.tpot, there.itl, there.latency, there.run),
        strict=True,
    ):
        ours = mine.value() if mine is not None else None
        at_one = theirs.value() if theirs is not None else None
        if ours is not None and at_one is not None:
            compared[key] = {"at_ideal_s": ours, "at_one_slot_s": at_one}
    if not compared:
        return None
    return {"slots": judgement.ideal, "statistic": "p95", "figures": compared}


def ideal_cost(judgement: SweepJudgement) -> str | None:
    """'N=3: p95 TTFT 1.90 s against 600 ms at one slot; …', or None at N=1 or unmeasured."""
    figures = ideal_cost_figures(judgement)
    if figures is None:
        return None
    names = dict(COST_FIGURES)
    parts = [
        f"p95 {names[key]} {_seconds(pair['at_ideal_s'])} against "
        f"{_seconds(pair['at_one_slot_s'])} at one slot"
        for key, pair in figures["figures"].items()
    ]
    return f"N={figures['slots']}: " + "; ".join(parts)


def latency_lines(judgement: SweepJudgement, bounds: Bounds) -> list[str]:
    """Sentences for the terminal and the report: the ideal N's latency cost, and under each
    configured latency bound the largest N that met it."""
    lines = []
    cost = ideal_cost(judgement)
    if cost:
        lines.append(f"latency of the ideal N — {cost}")
    missing = {v.latency.missing for v in judgement.verdicts if v.latency and v.latency.missing}
    if missing:
        lines.append(f"no TTFT or ITL for some steps: {sorted(missing)[0]}")
    for key, slots in largest_meeting(judgement, bounds).items():
        limit = bounds.latency_bounds[key]
        met = f"N={slots}" if slots is not None else "no N measured (not even one slot)"
        unit = factor_judges(judgement).split()[0]  # turn, or run
        judged = f" (each {unit}'s latency over its own at one slot, p95 over the {unit}s)"
        judged = judged if key == "latency_factor" else ""
        lines.append(f"under {key} = {limit:g}{judged}: the largest N that met it is {met}")
    return lines


def latency_json(judgement: SweepJudgement, bounds: Bounds) -> dict[str, Any]:
    return {
        "ideal_cost": ideal_cost_figures(judgement),
        "bounds": dict(bounds.latency_bounds),
        "largest_n_meeting": largest_meeting(judgement, bounds),
        "latency_factor_judges": factor_judges(judgement),
    }


def latency_values(verdict: Verdict) -> dict[str, float | None]:
    """Mean, p50, p90, p95 and p99 of TTFT, TPOT and ITL as flat numbers (a CSV row's), null
    where the step has none."""
    figures = verdict.latency
    values: dict[str, float | None] = {}
    for what in ("ttft", "tpot", "itl"):
        summary = getattr(figures, f"{what}_s") if figures else None
        for key in Summary.KEYS:
            values[f"{what}_{key}"] = getattr(summary, key) if summary else None
    return values


def verdict_latency_json(verdict: Verdict) -> dict[str, Any] | None:
    """The step's latency figures without the samples they are judged on."""
    figures = verdict.latency
    if figures is None:
        return None
    shown = as_json(figures)
    samples = (
        "latency",
        "ttft",
        "tpot",
        "itl_gaps",
        "run",
        "ttft_by_turn",
        "tpot_by_turn",
        "factor_by_turn",
        "factor_per_turn",
    )
    return {k: v for k, v in shown.items() if k not in samples}
