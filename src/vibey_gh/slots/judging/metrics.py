"""Step metrics as pure functions of a StepRecord's raw data.

Throughput of a steady-state step (design §5) counts only its measurement window: from the
moment every worker had started its first turn (ramp-up over) to the moment the first worker
finished its last one (drain begins). Both ends are read from the turns' own timestamps.

Its uncertainty comes from batch means: the window is cut into equal sub-windows, each one's
throughput is a sample, and their standard error gives the interval (with Student's t at the
judge's confidence). Batch means rather than a bootstrap over served turns, because the turns of
a closed loop are not independent draws: a worker's next turn starts when its last one ends,
turns of one segment share a warm prefix, and a slow stretch of the runner slows every worker at
once. A bootstrap that resamples single turns treats them as independent and understates the
spread; sub-windows several turns long carry that correlation inside them, so their spread is
the spread a repeated measurement would see. They cost one pass over the timestamps.

A step of whole runs also has runs per hour, from batch means of each worker's progress
through its runs (`run_rate`: counting the few runs a batch holds would measure the counting),
and run latencies; it is decided on runs per hour (`StepMetrics.decided_by`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from msgspec.structs import replace

from ...interfaces.turns import TurnResult
from .figures import StepMetrics
from .records import TIMELINE_FIELDS, StepRecord, TurnRecord
from .runs import RUNS, completed_run_ends, figure_of, replayed_runs
from .statistics.run_rate import run_rate
from .statistics.stats import Estimate, standard_error

MAX_BATCHES = 10
MIN_TURNS_PER_BATCH = 3
# a step is measured on (up to its cap) until its window holds this many turns: ten batches
WANTED_WINDOW_TURNS = MAX_BATCHES * MIN_TURNS_PER_BATCH

_T = TIMELINE_FIELDS.index("t")
_WIRED = TIMELINE_FIELDS.index("wired_bytes")
_FREE = TIMELINE_FIELDS.index("free_share")
_SWAP_OUT = TIMELINE_FIELDS.index("swap_out_bytes")
_GPU_SHARE = TIMELINE_FIELDS.index("gpu_used_share")
_PRODUCTION = TIMELINE_FIELDS.index("production_footprint_bytes")
_CHARGED_GPU_SHARE = TIMELINE_FIELDS.index("charged_gpu_share")
MB = 1_000_000


def percentile(values: Sequence[float], share: float) -> float | None:
    """Nearest-rank percentile (share in 0..1); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


def replay_duration(results: Iterable[TurnResult]) -> float:
    items = list(results)
    if not items:
        return 0.0
    return max(r.ended for r in items) - min(r.started for r in items)


def measurement_window(turns: Sequence[TurnRecord], workers: int) -> tuple[float, float] | None:
    """(start, end) of the window in which all `workers` were busy; None when there is none."""
    first_start: dict[int, float] = {}
    last_end: dict[int, float] = {}
    for turn in turns:
        result = turn.result
        first_start[turn.worker] = min(first_start.get(turn.worker, result.started), result.started)
        last_end[turn.worker] = max(last_end.get(turn.worker, result.ended), result.ended)
    if len(first_start) < workers or not first_start:
        return None
    start, end = max(first_start.values()), min(last_end.values())
    return (start, end) if end > start else None


def batch_throughputs(ends: Sequence[float], start: float, end: float) -> list[float]:
    """Turns/h of each equal sub-window of (start, end], counting turns by when they ended."""
    count = len(ends)
    batches = min(MAX_BATCHES, count // MIN_TURNS_PER_BATCH)
    if batches < 2 or end <= start:
        return []
    width = (end - start) / batches
    counts = [0] * batches
    for ended in ends:
        counts[min(batches - 1, max(0, math.ceil((ended - start) / width) - 1))] += 1
    return [c * 3600.0 / width for c in counts]


def batch_standard_error(batches: Sequence[float], start: float, end: float) -> float | None:
    """Standard error of the mean batch throughput, never below what counting whole turns
    alone leaves uncertain: a batch's count is off by up to one turn at its edges (variance
    1/12 turn²), so a few identical counts do not make a zero-width interval."""
    se = standard_error(batches)
    if se is None or end <= start:
        return se
    width = (end - start) / len(batches)
    rounding = (3600.0 / width) ** 2 / 12.0 / len(batches)
    return math.sqrt(max(se * se, rounding))


def _column(step: StepRecord, index: int) -> list[float]:
    values = (p[index] if len(p) > index else None for p in step.timeline)
    return [float(v) for v in values if v is not None]


def swap_out_rate_mb_per_min(step: StepRecord) -> float | None:
    """Swap-out over the step's samples: (last − first counter) per minute of sampling."""
    points = []
    for point in step.timeline:
        t = point[_T] if len(point) > _SWAP_OUT else None
        swapped = point[_SWAP_OUT] if len(point) > _SWAP_OUT else None
        if t is not None and swapped is not None:
            points.append((float(t), float(swapped)))
    if len(points) < 2:
        return None
    (t0, s0), (t1, s1) = points[0], points[-1]
    if t1 <= t0:
        return None
    return max(0.0, s1 - s0) / MB / ((t1 - t0) / 60.0)


def served_ends(turns: Sequence[TurnRecord], start: float, end: float) -> list[float]:
    """When each turn served inside (start, end] ended."""
    return [t.result.ended for t in turns if t.result.served and start < t.result.ended <= end]


def decisive_estimate(
    turns: Sequence[TurnRecord], workers: int, shape: str, start: float, now: float
) -> Estimate | None:
    """The deciding figure so far, as the verdict will read it: runs per hour of a corpus of
    whole runs (`run_rate`), turns per hour of one of segments over (start, now]; None while
    there are too few batches for a standard error."""
    if figure_of(shape) == RUNS:
        rate = run_rate(turns, workers)
        if rate is None or rate.se is None:
            return None
        return Estimate(rate.per_hour, rate.se, rate.batches)
    ends = served_ends(turns, start, now)
    batches = batch_throughputs(ends, start, now)
    se = batch_standard_error(batches, start, now)
    if se is None:
        return None
    return Estimate(len(ends) * 3600.0 / (now - start), se, len(batches))


def decisive_ends(turns: Sequence[TurnRecord], start: float, end: float, shape: str) -> list[float]:
    """When each unit the step is decided on ended inside (start, end]: completed runs for a
    corpus of whole runs, served turns for one of segments."""
    if figure_of(shape) == RUNS:
        return completed_run_ends(turns, start, end)
    return served_ends(turns, start, end)


def ramp_up_end(turns: Sequence[TurnRecord], workers: int) -> float | None:
    """When the last of `workers` started its first turn: the start of the window."""
    first_start: dict[int, float] = {}
    for turn in turns:
        started = turn.result.started
        first_start[turn.worker] = min(first_start.get(turn.worker, started), started)
    return max(first_start.values()) if len(first_start) >= workers and first_start else None


def _windowed(step: StepRecord) -> tuple[float, int, tuple[float, float] | None, list[float]]:
    """(duration, served turns counted, window, batch throughputs) for the throughput figure."""
    if step.measurement is None:  # one pass over the corpus, before steady-state steps
        served_all = sum(1 for t in step.turns if t.result.served)
        return replay_duration(t.result for t in step.turns), served_all, None, []
    window = measurement_window(step.turns, step.slots)
    if window is None:
        return 0.0, 0, None, []
    start, end = window
    ends = served_ends(step.turns, start, end)
    return end - start, len(ends), window, batch_throughputs(ends, start, end)


def _value(point: tuple[float | None, ...], index: int) -> float | None:
    return point[index] if len(point) > index else None


def charged_wired(step: StepRecord) -> list[float]:
    """Each point's wired memory with production's footprint left out (design §5, Bounds);
    the raw figure where production's footprint is unknown or not recorded (older evidence)."""
    values = []
    for point in step.timeline:
        wired, production = _value(point, _WIRED), _value(point, _PRODUCTION)
        if wired is not None:
            values.append(float(wired) if production is None else max(0.0, wired - production))
    return values


def charged_gpu_share(step: StepRecord) -> list[float]:
    """Each point's largest GPU share with production's GPU memory left out, else the raw."""
    values = []
    for point in step.timeline:
        charged, raw = _value(point, _CHARGED_GPU_SHARE), _value(point, _GPU_SHARE)
        share = charged if charged is not None else raw
        if share is not None:
            values.append(float(share))
    return values


def _run_figures(step: StepRecord, window: tuple[float, float] | None) -> dict[str, Any]:
    """Runs per hour with its batch-means noise, and run latencies, for a step of whole runs."""
    if figure_of(step.shape) != RUNS:
        return {}
    latencies = [r.latency_s for r in replayed_runs(step.turns) if r.served]
    figures: dict[str, Any] = {
        "decided_by": RUNS,
        "run_p50_s": percentile(latencies, 0.50),
        "run_p95_s": percentile(latencies, 0.95),
        "runs_per_hour": 0.0,
    }
    rate = run_rate(step.turns, step.slots) if window is not None else None
    if rate is not None:
        figures.update(
            runs_per_hour=rate.per_hour,
            window_runs=rate.completed,
            run_batches=rate.batches,
            runs_per_hour_se=rate.se,
        )
    return figures


def step_metrics(step: StepRecord) -> StepMetrics:
    results = [t.result for t in step.turns]
    served = [r for r in results if r.served]
    duration, counted, window, batches = _windowed(step)
    replayed = replay_duration(results)
    latencies = [r.latency_s for r in served]
    out_tokens = sum(r.output_tokens or 0 for r in served)
    prompt_tokens = [r.prompt_tokens for r in served if r.prompt_tokens is not None]
    raw_wired = _column(step, _WIRED)
    wired = charged_wired(step)
    free = _column(step, _FREE)
    raw_gpu = _column(step, _GPU_SHARE)
    gpu = charged_gpu_share(step)
    p50_prompt = percentile([float(p) for p in prompt_tokens], 0.5)
    metrics = StepMetrics(
        served=len(served),
        total=len(results),
        duration_s=duration,
        turns_per_hour=(counted * 3600.0 / duration) if duration > 0 else 0.0,
        output_tokens_per_s=(out_tokens / replayed) if replayed > 0 else 0.0,
        p50_s=percentile(latencies, 0.50),
        p95_s=percentile(latencies, 0.95),
        peak_wired_bytes=int(max(wired)) if wired else None,
        min_free_share=min(free) if free else None,
        swap_out_mb_per_min=swap_out_rate_mb_per_min(step),
        peak_gpu_share=max(gpu) if gpu else None,
        prompt_tokens_min=min(prompt_tokens) if prompt_tokens else None,
        prompt_tokens_p50=int(p50_prompt) if p50_prompt is not None else None,
        prompt_tokens_max=max(prompt_tokens) if prompt_tokens else None,
        window_start=window[0] if window else None,
        window_end=window[1] if window else None,
        window_turns=counted if window else None,
        batches=len(batches),
        turns_per_hour_se=batch_standard_error(batches, *window) if window else None,
        peak_raw_wired_bytes=int(max(raw_wired)) if raw_wired else None,
        peak_raw_gpu_share=max(raw_gpu) if raw_gpu else None,
        **_run_figures(step, window),
    )
    look, looks = _planned_look(step)
    return replace(metrics, look=look, looks=looks) if looks else metrics


def _planned_look(step: StepRecord) -> tuple[int, int]:
    """The planned look the step stopped at, of how many, as its record says (none in
    evidence measured before planned looks, and none of a malformed value)."""
    measured = step.measurement or {}
    look, looks = measured.get("look"), measured.get("looks")
    if isinstance(look, int) and isinstance(looks, int) and 0 < look <= looks:
        return look, looks
    return 0, 0
