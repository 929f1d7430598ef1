"""A step's metrics as the judge reads them: throughput with its interval, latency points,
memory, swap and GPU peaks, and which figure decides (turns or runs per hour).

`metrics.step_metrics` computes them from a recorded step; here they are only held, turned
into intervals and stored (as declared: `interfaces.schema`, every field range-checked).
"""

from __future__ import annotations

import msgspec

from .figure_fields import RUNS_PER_HOUR, TURNS_PER_HOUR, Amount, Count, Figure, Share
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
    gain_over_own_blocks: capacity_gain is an interleaved step's own N blocks over its own
    one-slot blocks (`judging.interleaved`), which it is held to against any one-slot step.
    """

    served: Count
    total: Count
    duration_s: Amount
    turns_per_hour: Amount
    output_tokens_per_s: Amount
    p50_s: Amount | None
    p95_s: Amount | None
    peak_wired_bytes: Count | None
    min_free_share: Share | None
    swap_out_mb_per_min: Amount | None
    peak_gpu_share: Amount | None
    prompt_tokens_min: Count | None
    prompt_tokens_p50: Count | None
    prompt_tokens_max: Count | None
    # figures of the one-pass method have no window and no interval
    window_start: float | None = None
    window_end: float | None = None
    window_turns: Count | None = None
    batches: Count = 0
    turns_per_hour_se: Amount | None = None
    # peak_wired_bytes and peak_gpu_share are charged (production's footprint left out, design
    # §5); these are the whole machine's, as sampled
    peak_raw_wired_bytes: Count | None = None
    peak_raw_gpu_share: Amount | None = None
    decided_by: Figure = TURNS_PER_HOUR
    runs_per_hour: Amount | None = None
    runs_per_hour_se: Amount | None = None
    run_batches: Count = 0
    window_runs: Count | None = None
    run_p50_s: Amount | None = None
    run_p95_s: Amount | None = None
    # paired, work-normalized figures (`judging.work`); absent in figures of the one-pass
    # method, of a sweep without a one-slot run, and in figures made before them
    capacity: Amount | None = None
    capacity_gain: Amount | None = None
    capacity_gain_se: Amount | None = None
    capacity_clusters: Count = 0
    gain_over_own_blocks: bool = False
    modelled_turns: Count = 0
    counted_turns_per_hour: Amount | None = None
    # the planned look the step stopped at, of how many (0: not measured with planned looks)
    look: Count = 0
    looks: Count = 0
    # (index, standard error of the log) of this step's capacity over each earlier step's,
    # paired by cluster: the reference costs' own noise cancels between two steps
    over_earlier: tuple[tuple[Count, Amount], ...] = ()

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


def _interval(estimate: Estimate, confidence: float) -> tuple[float, float]:
    if estimate.se is None or estimate.batches < MIN_BATCHES:
        return estimate.value, estimate.value
    half = t_quantile(0.5 + confidence / 2.0, estimate.batches - 1) * estimate.se
    return max(0.0, estimate.value - half), estimate.value + half
