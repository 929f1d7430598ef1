"""Step metrics as pure functions of a StepRecord's raw data."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ..interfaces.turns import TurnResult
from .figures import StepMetrics
from .records import TIMELINE_FIELDS, StepRecord

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


def step_metrics(step: StepRecord) -> StepMetrics:
    results = [t.result for t in step.turns]
    served = [r for r in results if r.served]
    duration = replay_duration(results)
    latencies = [r.latency_s for r in served]
    out_tokens = sum(r.output_tokens or 0 for r in served)
    prompt_tokens = [r.prompt_tokens for r in served if r.prompt_tokens is not None]
    raw_wired = _column(step, _WIRED)
    wired = charged_wired(step)
    free = _column(step, _FREE)
    raw_gpu = _column(step, _GPU_SHARE)
    gpu = charged_gpu_share(step)
    p50_prompt = percentile([float(p) for p in prompt_tokens], 0.5)
    return StepMetrics(
        served=len(served),
        total=len(results),
        duration_s=duration,
        turns_per_hour=(len(served) * 3600.0 / duration) if duration > 0 else 0.0,
        output_tokens_per_s=(out_tokens / duration) if duration > 0 else 0.0,
        p50_s=percentile(latencies, 0.50),
        p95_s=percentile(latencies, 0.95),
        peak_wired_bytes=int(max(wired)) if wired else None,
        min_free_share=min(free) if free else None,
        swap_out_mb_per_min=swap_out_rate_mb_per_min(step),
        peak_gpu_share=max(gpu) if gpu else None,
        prompt_tokens_min=min(prompt_tokens) if prompt_tokens else None,
        prompt_tokens_p50=int(p50_prompt) if p50_prompt is not None else None,
        prompt_tokens_max=max(prompt_tokens) if prompt_tokens else None,
        peak_raw_wired_bytes=int(max(raw_wired)) if raw_wired else None,
        peak_raw_gpu_share=max(raw_gpu) if raw_gpu else None,
    )
