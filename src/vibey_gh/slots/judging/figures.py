"""The figures a sweep is judged on: every number the judge compares with a bound.

They are pure functions of a sweep's raw steps (`baseline.sweep_figures`) and hold nothing
that depends on the bounds, so judging against today's bounds needs the figures alone
(`judge.judge_figures`). `slots allowed` judges on every call, so the figures of
each evidence file are kept beside it (`slots.evidence.figures_cache`), keyed by the evidence
file's identity and FIGURES_VERSION. They are never the record: the evidence is.

This module imports nothing about turns or step records, so reading stored figures does not,
and it reads and writes no file. Stored figures are derived data anyone could edit: each
field declares its type and range (`statistics.figure_fields`: a count is a whole number ≥ 0,
a rate or a standard error a finite number ≥ 0, a share between 0 and 1), so reading them
(`interfaces.schema.checked`) raises `MalformedJson` naming a bad field, and a damaged store
is rebuilt from the evidence, never judged on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import msgspec
from msgspec import Meta
from msgspec.structs import force_setattr

from .latencies.latency_figures import LatencyFigures, QuantileSample
from .statistics.figure_fields import (
    RUNS_PER_HOUR,
    TURNS_PER_HOUR,
    Amount,
    Count,
    Figure,
    Share,
)
from .statistics.runner_speed import RunnerSpeed
from .statistics.stats import Estimate
from .statistics.step_metrics_figures import StepMetrics

if TYPE_CHECKING:
    from ...interfaces.bounds import Bounds

# Bump when any figure is computed differently: stored figures of an older version are rebuilt.
FIGURES_VERSION = 12

__all__ = [
    "FIGURES_VERSION",
    "RUNS_PER_HOUR",
    "TURNS_PER_HOUR",
    "Agreement",
    "BaselineFigures",
    "StepFigures",
    "StepMetrics",
    "SweepFigures",
]


class Agreement(msgspec.Struct, frozen=True):
    """How a step's answers agree with the first one-slot run's, over the turns both served.

    structural / exact: the shares of the turns compared that matched (None with none
    compared), written for a reader of the figures and recomputed from the counts."""

    compared: Count
    structural_matches: Count
    exact_matches: Count
    changed_turns: tuple[str, ...]  # turns whose exact answer differs
    structural: float | None = None
    exact: float | None = None

    def __post_init__(self) -> None:
        if max(self.structural_matches, self.exact_matches) > self.compared:
            raise ValueError(f"more matches than the {self.compared} turns compared")
        shares = (self.structural_matches, self.exact_matches) if self.compared else (None, None)
        for name, matches in zip(("structural", "exact"), shares, strict=True):
            force_setattr(self, name, None if matches is None else matches / self.compared)


class BaselineFigures(msgspec.Struct, frozen=True):
    """What every step is measured against: the one-slot runs.

    self_agreement: how the two one-slot runs agreed with each other (1.0 with one run).
    best_one_slot_turns_per_hour: the better one-slot throughput, the bar for a gain.
    one_slot_swap_mb_per_min: the worse one-slot swap-out rate, this machine's own noise.
    best_one_slot_se / best_one_slot_batches: the better run's own throughput noise (standard
      error from that many batch means; None for a run without an interval). A gain is a ratio
      of two measurements, so its interval carries both (`stats.ratio_interval`).
    decided_by: the figure the sweep is decided on. For "runs/h" the better one-slot run is
      the one with more runs per hour, and best_one_slot_runs_per_hour / _runs_se /
      _run_batches are its runs per hour and their noise; best_one_slot_turns_per_hour is
      that same run's turns per hour.
    best_one_slot_latency: the turn latencies of the one-slot run with the lower p95, the base
      of `latency_factor` (None without a served one-slot turn).
    """

    self_agreement: Share
    best_one_slot_turns_per_hour: Amount
    one_slot_swap_mb_per_min: Amount
    best_one_slot_se: Amount | None = None
    best_one_slot_batches: Count = 0
    decided_by: Figure = TURNS_PER_HOUR
    best_one_slot_runs_per_hour: Amount | None = None
    best_one_slot_runs_se: Amount | None = None
    best_one_slot_run_batches: Count = 0

    @property
    def best_rate(self) -> float:
        """The better one-slot run's deciding figure: the bar's point."""
        if self.decided_by == RUNS_PER_HOUR:
            return self.best_one_slot_runs_per_hour or 0.0
        return self.best_one_slot_turns_per_hour

    best_one_slot_latency: QuantileSample | None = None
    # paired figures (`judging.work`): the cost model's fit, the turns it priced, the spread
    # of a turn's one-slot time about its mean, and the drift the closing one-slot run read
    # (its capacity over the pooled runs', minus 1, with the standard error of the log)
    cost_fit_r2: float | None = None
    cost_fit_turns: Count = 0
    modelled_turns: tuple[str, ...] = ()
    reference_noise: Amount | None = None
    drift: float | None = None
    drift_se: Amount | None = None
    # one slot's busy share on the corpus where the gains were read by the closed-system law
    # from response times (the think policy waits: `statistics.think_law`); None: by work
    law_busy: Share | None = None

    @property
    def bar(self) -> Estimate:
        """The better one-slot throughput with its noise: what every gain is a ratio to."""
        if self.decided_by == RUNS_PER_HOUR:
            return Estimate(
                self.best_rate, self.best_one_slot_runs_se, self.best_one_slot_run_batches
            )
        return Estimate(
            self.best_one_slot_turns_per_hour, self.best_one_slot_se, self.best_one_slot_batches
        )

    def fidelity_threshold(self, bounds: Bounds) -> float:
        return self.self_agreement - bounds.fidelity_tolerance

    def swap_limit(self, bounds: Bounds) -> float:
        return max(bounds.swap_factor * self.one_slot_swap_mb_per_min, bounds.swap_floor_mb_per_min)


class StepFigures(msgspec.Struct, frozen=True):
    """One step's figures. The findings here break a bound whatever the bounds say.

    is_reference: this is the first one-slot run, which the others are compared with.
    agreement: with the reference (None for the reference itself).
    failed_served: turns served at one slot that failed here, as "id (why)".
    log_findings: forbidden runner log events during the replay, as "log: n × what".
    reasonless: HTTP 200 answers without a stop, length or tool_calls done reason.
    runner_mismatch: why the runner's start-up log says it was not set up as asked, or None.
    latency: TTFT, ITL and turn latency (`latency_figures`); None in figures made before.
    speed: prompt processing and generation tokens/s by the runner's own timings
      (`runner_speed`); None in figures made before.
    block_seconds: the step interleaved blocks this long of one slot and all its slots
      (`interleaved`); None: it did not.
    """

    index: Count
    slots: Annotated[int, Meta(ge=1)]
    is_reference: bool
    metrics: StepMetrics
    memory_budget_bytes: Count | None
    agreement: Agreement | None
    failed_served: tuple[str, ...]
    log_findings: tuple[str, ...]
    reasonless: Count
    runner_mismatch: str | None = None
    latency: LatencyFigures | None = None
    closing: bool = False  # a one-slot run after larger steps: the drift check
    speed: RunnerSpeed | None = None
    block_seconds: Annotated[float, Meta(gt=0)] | None = None


class SweepFigures(msgspec.Struct, frozen=True):
    baseline: BaselineFigures
    steps: tuple[StepFigures, ...]

    @property
    def decided_by(self) -> str:
        return self.baseline.decided_by

    @property
    def without_intervals(self) -> bool:
        """Every step is of the one-pass method: no measurement window, no interval."""
        return bool(self.steps) and all(s.metrics.window_start is None for s in self.steps)
