"""A step's metrics as the judge reads them: throughput with its interval, latency points,
memory, swap and GPU peaks, and which figure decides (turns or runs per hour).

`metrics.step_metrics` computes them from a recorded step; here they are only held, turned
into intervals and stored (`to_json` / `from_json`, every field range-checked).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import asdict

from ....errors import MalformedJson
from ....interfaces import json_fields
from .figure_fields import RUNS_PER_HOUR, TURNS_PER_HOUR
from .figure_fields import amount as _amount
from .figure_fields import count as _count
from .figure_fields import figure_of_record as _figure
from .figure_fields import share as _share
from .stats import MIN_BATCHES, Estimate, t_quantile


class StepMetrics(msgspec.Struct, frozen=True):
    """The numbers of the step table. None where the data to compute one is missing.

    duration_s / turns_per_hour: over the measurement window of a steady-state step (the whole
    replay for a step of the one-pass method, which has no window and no interval).
    window_start / window_end: monotonic seconds of that window; window_turns: turns served in it.
    batches / turns_per_hour_se: how many equal sub-windows the window was cut into and the
    standard error of their mean throughput (None with fewer than two): `interval` turns it into
    an interval at a confidence.
    decided_by: the figure the step is judged on — "turns/h" for a corpus of segments,
    "runs/h" for one of whole runs. runs_per_hour / runs_per_hour_se / run_batches /
    window_runs: runs completed in the same window, with the same batch means (None for a
    corpus of segments); run_p50_s / run_p95_s: run latency, first send to last answer, tool
    time included. `rate`, `throughput`, `has_interval` and `interval` speak of the deciding
    figure; `turns_interval` always of turns per hour.
    capacity: reference-seconds of one-slot work done per second (`statistics.paired`);
    capacity_gain: it over the pooled one-slot runs', with the standard error of its log
    (capacity_gain_se) from `capacity_clusters` clusters. When it is there, turns/h and runs/h
    are derived from it (capacity × 3600 ÷ the mean reference cost of a turn or a run), their
    standard errors are the gain's relative one and their "batches" are the clusters;
    counted_turns_per_hour keeps the turns that ended in the window, as counted before.
    modelled_turns: turns priced by the cost model (never served at one slot).
    """

    served: int
    total: int
    duration_s: float
    turns_per_hour: float
    output_tokens_per_s: float
    p50_s: float | None
    p95_s: float | None
    peak_wired_bytes: int | None
    min_free_share: float | None
    swap_out_mb_per_min: float | None
    peak_gpu_share: float | None
    prompt_tokens_min: int | None
    prompt_tokens_p50: int | None
    prompt_tokens_max: int | None
    window_start: float | None = None
    window_end: float | None = None
    window_turns: int | None = None
    batches: int = 0
    turns_per_hour_se: float | None = None
    # peak_wired_bytes and peak_gpu_share are charged (production's footprint left out, design
    # §5); these are the whole machine's, as sampled
    peak_raw_wired_bytes: int | None = None
    peak_raw_gpu_share: float | None = None
    decided_by: str = TURNS_PER_HOUR
    runs_per_hour: float | None = None
    runs_per_hour_se: float | None = None
    run_batches: int = 0
    window_runs: int | None = None
    run_p50_s: float | None = None
    run_p95_s: float | None = None
    # paired, work-normalized figures (`judging.work`); absent in figures of the one-pass
    # method, of a sweep without a one-slot run, and in figures made before them
    capacity: float | None = None
    capacity_gain: float | None = None
    capacity_gain_se: float | None = None
    capacity_clusters: int = 0
    modelled_turns: int = 0
    counted_turns_per_hour: float | None = None
    # the planned look the step stopped at, of how many (0: not measured with planned looks)
    look: int = 0
    looks: int = 0
    # (index, standard error of the log) of this step's capacity over each earlier step's,
    # paired by cluster: the reference costs' own noise cancels between two steps
    over_earlier: tuple[tuple[int, float], ...] = ()

    @property
    def paired(self) -> bool:
        """Decided on paired capacity (else on counted turns, as before)."""
        return self.capacity_gain is not None

    @property
    def on_runs(self) -> bool:
        return self.decided_by == RUNS_PER_HOUR

    @property
    def rate(self) -> float:
        """The deciding figure's point: runs or turns per hour."""
        return (self.runs_per_hour or 0.0) if self.on_runs else self.turns_per_hour

    @property
    def has_interval(self) -> bool:
        return self.throughput.has_interval

    @property
    def throughput(self) -> Estimate:
        """The deciding figure with its noise, as the gain intervals take it."""
        if self.on_runs:
            return Estimate(self.rate, self.runs_per_hour_se, self.run_batches)
        return Estimate(self.turns_per_hour, self.turns_per_hour_se, self.batches)

    def interval(self, confidence: float) -> tuple[float, float]:
        """Two-sided interval of the deciding figure; the point itself without an interval."""
        return _interval(self.throughput, confidence)

    def turns_interval(self, confidence: float) -> tuple[float, float]:
        return _interval(
            Estimate(self.turns_per_hour, self.turns_per_hour_se, self.batches), confidence
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["over_earlier"] = [[index, se] for index, se in self.over_earlier]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StepMetrics:
        # figures of the one-pass method have no window and no interval; figures from before
        # production's footprint was left out have no raw peaks
        return cls(
            served=_count(data, "served"),
            total=_count(data, "total"),
            duration_s=_amount(data, "duration_s"),
            turns_per_hour=_amount(data, "turns_per_hour"),
            output_tokens_per_s=_amount(data, "output_tokens_per_s"),
            p50_s=_amount(data, "p50_s", None),
            p95_s=_amount(data, "p95_s", None),
            peak_wired_bytes=_count(data, "peak_wired_bytes", None),
            min_free_share=_share(data, "min_free_share"),
            swap_out_mb_per_min=_amount(data, "swap_out_mb_per_min", None),
            peak_gpu_share=_amount(data, "peak_gpu_share", None),
            prompt_tokens_min=_count(data, "prompt_tokens_min", None),
            prompt_tokens_p50=_count(data, "prompt_tokens_p50", None),
            prompt_tokens_max=_count(data, "prompt_tokens_max", None),
            window_start=json_fields.number(data, "window_start", None),
            window_end=json_fields.number(data, "window_end", None),
            window_turns=_count(data, "window_turns", None),
            batches=_count(data, "batches", 0),
            turns_per_hour_se=_amount(data, "turns_per_hour_se", None),
            peak_raw_wired_bytes=_count(data, "peak_raw_wired_bytes", None),
            peak_raw_gpu_share=_amount(data, "peak_raw_gpu_share", None),
            # figures from before whole runs were decided on runs per hour
            decided_by=_figure(data, "decided_by"),
            runs_per_hour=_amount(data, "runs_per_hour", None),
            runs_per_hour_se=_amount(data, "runs_per_hour_se", None),
            run_batches=_count(data, "run_batches", 0),
            window_runs=_count(data, "window_runs", None),
            run_p50_s=_amount(data, "run_p50_s", None),
            run_p95_s=_amount(data, "run_p95_s", None),
            capacity=_amount(data, "capacity", None),
            capacity_gain=_amount(data, "capacity_gain", None),
            capacity_gain_se=_amount(data, "capacity_gain_se", None),
            capacity_clusters=_count(data, "capacity_clusters", 0),
            modelled_turns=_count(data, "modelled_turns", 0),
            counted_turns_per_hour=_amount(data, "counted_turns_per_hour", None),
            look=_count(data, "look", 0),
            looks=_count(data, "looks", 0),
            over_earlier=_pairs(data, "over_earlier"),
        )


def _pairs(data: dict[str, Any], key: str) -> tuple[tuple[int, float], ...]:
    """[[index, standard error], …] as stored; () when absent (older figures)."""
    items = data.get(key)
    if items is None:
        return ()
    if not isinstance(items, list | tuple):
        raise MalformedJson("expected a list of [index, standard error] pairs", (key,))
    pairs = []
    for item in items:
        if (
            not isinstance(item, list | tuple)
            or len(item) != 2
            or isinstance(item[0], bool)
            or not isinstance(item[0], int)
            or item[0] < 0
            or isinstance(item[1], bool)
            or not isinstance(item[1], int | float)
            or not 0.0 <= item[1] < float("inf")
        ):
            raise MalformedJson("expected [index ≥ 0, standard error ≥ 0] pairs", (key,))
        pairs.append((item[0], float(item[1])))
    return tuple(pairs)


def _interval(estimate: Estimate, confidence: float) -> tuple[float, float]:
    if estimate.se is None or estimate.batches < MIN_BATCHES:
        return estimate.value, estimate.value
    half = t_quantile(0.5 + confidence / 2.0, estimate.batches - 1) * estimate.se
    return max(0.0, estimate.value - half), estimate.value + half
