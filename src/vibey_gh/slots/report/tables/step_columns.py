"""The step table's columns, each written once: the view of one step a column reads
(`StepView`), what a column is (`StepColumn`), the functions that write its cells, and the
columns in order (`STEP_COLUMNS`; `step_table` builds the table from them)."""

from collections.abc import Callable

import msgspec

from ....interfaces.schema import as_json
from ...judging.judge import SweepJudgement, Verdict, finite_or_none, gain_range
from ...judging.records import StepRecord
from ...judging.statistics.runner_speed import RunnerSpeed
from ...judging.truth.prefix_cache import cache_shares
from .model_column import model_cell
from .prompt_cache import cache_brief, cache_cell
from .speed_cells import GENERATION, PROMPT, speed_brief, speed_cell, speed_values


class StepView(msgspec.Struct, frozen=True):
    """One step as the table sees it: its record, its verdict, its row name, and whether it
    is the ideal N the judgement chose; speed: its pp and tg (None in figures made before)."""

    step: StepRecord
    verdict: Verdict
    name: str
    ideal: bool
    label: str = ""  # the verdict as shown (`shown_label`); "" for the verdict's own
    speed: RunnerSpeed | None = None
    # the closed-system model's gain over one slot at this N, minus 1 (`model_column`)
    model_gain: float | None = None
    model_identified: bool = False

    @property
    def shown(self) -> str:
        return self.label or self.verdict.label

    @property
    def on_runs(self) -> bool:
        return self.verdict.metrics.on_runs


class StepColumn(msgspec.Struct, frozen=True):
    """header: the Markdown report's. short: the terminal's. full / brief: the cell in each.
    values: the cell's numbers by key (JSON, CSV). priority: a narrow terminal drops the
    highest first. numeric: right-aligned."""

    header: str
    short: str
    full: Callable[[StepView], str]
    brief: Callable[[StepView], str]
    values: Callable[[StepView], dict[str, object]]
    priority: int
    numeric: bool = True


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


def throughput_brief(verdict: Verdict) -> str:
    """'14.6k ±5%' in a terminal (the deciding figure: runs/h for whole runs); a point
    without an interval has no '±'."""
    point = verdict.metrics.rate
    high = verdict.rate_high
    if verdict.confidence is None or point <= 0 or high == float("inf"):
        return _short(point)
    half = (high - verdict.rate_low) / 2 / point
    return f"{_short(point)} ±{half:.0%}"


PAST_THE_KNEE = "past the knee"


def shown_label(verdict: Verdict, judgement: SweepJudgement) -> str:
    """The verdict's label as people read it: a step past the knee qualifies against one
    slot, but its gain over the knee is not worth paying for, so it is not called "qualifies"."""
    knee = judgement.knee
    past = knee is not None and any(p.index == verdict.index for p in knee.past)
    return PAST_THE_KNEE if past and verdict.label == "qualifies" else verdict.label


def verdict_cell(verdict: Verdict, label: str | None = None) -> str:
    """The label, with the gain and its interval above one slot."""
    label = label or verdict.label
    interval = gain_range(verdict)
    if verdict.slots > 1 and verdict.gain is not None and interval:
        label += f", gain {verdict.gain:+.0%} ({interval})"
    return label


def verdict_brief(view: StepView) -> str:
    """The label and the gain's interval (never its point alone); the ideal N marked."""
    verdict = view.verdict
    text = view.shown
    interval = gain_range(verdict)
    if verdict.slots > 1 and interval:
        text += f" {interval}"
    return text + (" ◀ ideal" if view.ideal else "")


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
            f"for an interval ({when}), so its gain cannot be told from noise and it "
            "does not qualify."
        )
    return (
        f"N={verdict.slots} is inconclusive: its gain {gain} ({interval}{confidence}) "
        f"straddles the {min_gain:.0%} needed {when}, so it does not qualify."
    )


def _fidelity(view: StepView, fmt: str, between: str) -> str:
    agreement = view.verdict.agreement
    if agreement is None or agreement.structural is None or agreement.exact is None:
        return "—"
    return f"{agreement.structural:{fmt}}{between}{agreement.exact:{fmt}}"


def _verdict_full(view: StepView) -> str:
    verdict, step = view.verdict, view.step
    label = verdict_cell(verdict, view.shown)
    if verdict.warnings and step.slots == 1:
        label += "; memory warned" if any("wired" in w for w in verdict.warnings) else ""
    if step.ended_early:
        label += f" (ended early: {step.ended_early})"
    return label


def _verdict_values(view: StepView) -> dict[str, object]:
    verdict = view.verdict
    return {
        "verdict": verdict.label,
        "qualifies": verdict.qualifies,
        "ideal": view.ideal,
        "gain": verdict.gain,
        "gain_low": verdict.gain_low,
        "gain_high": verdict.gain_high,
        "confidence": verdict.confidence,
        "ended_early": view.step.ended_early,
    }


def _throughput_values(view: StepView) -> dict[str, object]:
    verdict = view.verdict
    has_interval = verdict.confidence is not None
    return {
        "decided_by": "runs/h" if verdict.metrics.on_runs else "turns/h",
        "runs_per_hour": verdict.metrics.runs_per_hour,
        "turns_per_hour": verdict.metrics.turns_per_hour,
        "turns_per_hour_low": verdict.turns_per_hour_low if has_interval else None,
        "turns_per_hour_high": finite_or_none(verdict.turns_per_hour_high)
        if has_interval
        else None,
    }


def _served_full(view: StepView) -> str:
    corpus = view.step.corpus_turns or view.verdict.metrics.total
    return f"{view.verdict.metrics.served} (corpus {corpus})"


def _gb(value: int | None, fmt: str) -> str:
    return "—" if value is None else f"{value / 1e9:{fmt}} GB"


def _step_values(view: StepView) -> dict[str, object]:
    """Which step, and how long it took: `duration_s` from its start to its end (the model's
    load included), `measured_s` its measurement window (the whole replay for one pass)."""
    step = view.step
    return {
        "step": step.index,
        "name": view.name,
        "slots": step.slots,
        "duration_s": max(0.0, step.ended_at - step.started_at),
        "measured_s": view.verdict.metrics.duration_s,
    }


def _speed_column(which: str, priority: int) -> StepColumn:
    """llama-bench's pp or tg column, tokens/s as mean ± sd (`speed_cells`)."""
    return StepColumn(
        f"{which} t/s",
        f"{which} t/s",
        lambda v: speed_cell(v.speed, which),
        lambda v: speed_brief(v.speed, which),
        lambda v: speed_values(v.speed, which),
        priority,
    )


STEP_COLUMNS: tuple[StepColumn, ...] = (
    StepColumn(
        "step",
        "step",
        lambda v: v.name,
        lambda v: v.name,
        _step_values,
        0,
        numeric=False,
    ),
    StepColumn(
        "slots × window",
        "slots × window",
        lambda v: f"{v.step.slots} × {v.step.window:,}",
        lambda v: f"{v.step.slots} × {v.step.window:,}",
        lambda v: {"window": v.step.window},
        11,
        numeric=False,
    ),
    StepColumn(
        "turns served",
        "served",
        _served_full,
        lambda v: str(v.verdict.metrics.served),
        lambda v: {
            "served_turns": v.verdict.metrics.served,
            "corpus_turns": v.step.corpus_turns or v.verdict.metrics.total,
        },
        6,
    ),
    StepColumn(
        "turns/h",
        "turns/h",
        lambda v: throughput_cell(v.verdict),
        lambda v: throughput_brief(v.verdict),
        _throughput_values,
        2,
    ),
    StepColumn(
        "out tok/s",
        "tok/s",
        lambda v: f"{v.verdict.metrics.output_tokens_per_s:.2f}",
        lambda v: f"{v.verdict.metrics.output_tokens_per_s:.1f}",
        lambda v: {"output_tokens_per_s": v.verdict.metrics.output_tokens_per_s},
        9,
    ),
    StepColumn(
        "p50 s",
        "p50 s",
        lambda v: _latency_cell(v.verdict.metrics.p50_s, v.verdict.metrics.run_p50_s, v.on_runs),
        lambda v: _latency_cell(v.verdict.metrics.p50_s, v.verdict.metrics.run_p50_s, v.on_runs),
        lambda v: {"p50_s": v.verdict.metrics.p50_s, "run_p50_s": v.verdict.metrics.run_p50_s},
        7,
    ),
    StepColumn(
        "p95 s",
        "p95 s",
        lambda v: _latency_cell(v.verdict.metrics.p95_s, v.verdict.metrics.run_p95_s, v.on_runs),
        lambda v: _latency_cell(v.verdict.metrics.p95_s, v.verdict.metrics.run_p95_s, v.on_runs),
        lambda v: {"p95_s": v.verdict.metrics.p95_s, "run_p95_s": v.verdict.metrics.run_p95_s},
        8,
    ),
    StepColumn(
        "peak wired",
        "wired",
        lambda v: _gb(v.verdict.metrics.peak_wired_bytes, ".2f"),
        lambda v: _gb(v.verdict.metrics.peak_wired_bytes, ".1f"),
        lambda v: {"peak_wired_bytes": v.verdict.metrics.peak_wired_bytes},
        5,
    ),
    StepColumn(
        "free min",
        "free",
        lambda v: _num(v.verdict.metrics.min_free_share, ".0%"),
        lambda v: _num(v.verdict.metrics.min_free_share, ".0%"),
        lambda v: {"min_free_share": v.verdict.metrics.min_free_share},
        10,
    ),
    StepColumn(
        "swap-out",
        "swap MB/min",
        lambda v: (
            _num(v.verdict.metrics.swap_out_mb_per_min, ".1f")
            + (" MB/min" if v.verdict.metrics.swap_out_mb_per_min is not None else "")
        ),
        lambda v: _num(v.verdict.metrics.swap_out_mb_per_min, ".1f"),
        lambda v: {"swap_out_mb_per_min": v.verdict.metrics.swap_out_mb_per_min},
        12,
    ),
    StepColumn(
        "fidelity (structural / exact)",
        "fidelity",
        lambda v: _fidelity(v, ".3f", " / "),
        lambda v: _fidelity(v, ".2f", "/"),
        lambda v: {
            "structural_agreement": v.verdict.agreement.structural if v.verdict.agreement else None,
            "exact_agreement": v.verdict.agreement.exact if v.verdict.agreement else None,
        },
        4,
    ),
    StepColumn(
        "prompt cache",
        "cached",
        lambda v: cache_cell(cache_shares(v.step)),
        lambda v: cache_brief(cache_shares(v.step)),
        lambda v: as_json(cache_shares(v.step)),
        13,
    ),
    _speed_column(PROMPT, 15),
    _speed_column(GENERATION, 16),
    StepColumn(
        "model gain",
        "model",
        lambda v: model_cell(v.model_gain, v.model_identified),
        lambda v: model_cell(v.model_gain, v.model_identified),
        lambda v: {"model_gain": v.model_gain, "model_identified": v.model_identified},
        14,
    ),
    StepColumn("verdict", "verdict", _verdict_full, verdict_brief, _verdict_values, 1, False),
)
