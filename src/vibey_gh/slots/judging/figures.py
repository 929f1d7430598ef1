"""The figures a sweep is judged on: every number the judge compares with a bound.

They are pure functions of a sweep's raw steps (`baseline.sweep_figures`) and hold nothing
that depends on the bounds, so judging against today's bounds needs the figures alone
(`judge.judge_figures`). `slots allowed` judges on every call, so the figures of
each evidence file are kept beside it (`slots.evidence.figures_cache`), keyed by the evidence
file's identity and FIGURES_VERSION. They are never the record: the evidence is.

This module imports nothing about turns or step records, so reading stored figures does not,
and it reads and writes no file. Stored figures are derived data anyone could edit: each
`from_json` checks every field's type and range (a count is a whole number ≥ 0, a rate or a
standard error a finite number ≥ 0, a share between 0 and 1) and raises `MalformedJson`
naming the field, so a damaged store is rebuilt from the evidence, never judged on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import asdict

from ...errors import MalformedJson
from ...interfaces import json_fields
from .latencies.latency_figures import LatencyFigures, QuantileSample
from .statistics.figure_fields import RUNS_PER_HOUR, TURNS_PER_HOUR
from .statistics.figure_fields import amount as _amount
from .statistics.figure_fields import count as _count
from .statistics.figure_fields import figure_of_record as _figure
from .statistics.figure_fields import share as _share
from .statistics.figure_fields import texts as _texts
from .statistics.runner_speed import RunnerSpeed
from .statistics.stats import Estimate
from .statistics.step_metrics_figures import StepMetrics

if TYPE_CHECKING:
    from .bounds import Bounds

# Bump when any figure is computed differently: stored figures of an older version are rebuilt.
FIGURES_VERSION = 9

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
    """How a step's answers agree with the first one-slot run's, over the turns both served."""

    compared: int
    structural_matches: int
    exact_matches: int
    changed_turns: tuple[str, ...]  # turns whose exact answer differs

    @property
    def structural(self) -> float | None:
        return self.structural_matches / self.compared if self.compared else None

    @property
    def exact(self) -> float | None:
        return self.exact_matches / self.compared if self.compared else None

    def to_json(self) -> dict[str, object]:
        return {
            "compared": self.compared,
            "structural": self.structural,
            "exact": self.exact,
            "structural_matches": self.structural_matches,
            "exact_matches": self.exact_matches,
            "changed_turns": list(self.changed_turns),
        }

    @classmethod
    def from_json(cls, data: object) -> Agreement:
        compared = _count(data, "compared")
        structural = _count(data, "structural_matches")
        exact = _count(data, "exact_matches")
        if max(structural, exact) > compared:
            raise MalformedJson(f"more matches than the {compared} turns compared")
        return cls(compared, structural, exact, _texts(data, "changed_turns"))


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

    self_agreement: float
    best_one_slot_turns_per_hour: float
    one_slot_swap_mb_per_min: float
    best_one_slot_se: float | None = None
    best_one_slot_batches: int = 0
    decided_by: str = TURNS_PER_HOUR
    best_one_slot_runs_per_hour: float | None = None
    best_one_slot_runs_se: float | None = None
    best_one_slot_run_batches: int = 0

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
    cost_fit_turns: int = 0
    modelled_turns: tuple[str, ...] = ()
    reference_noise: float | None = None
    drift: float | None = None
    drift_se: float | None = None

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
    """

    index: int
    slots: int
    is_reference: bool
    metrics: StepMetrics
    memory_budget_bytes: int | None
    agreement: Agreement | None
    failed_served: tuple[str, ...]
    log_findings: tuple[str, ...]
    reasonless: int
    runner_mismatch: str | None = None
    latency: LatencyFigures | None = None
    closing: bool = False  # a one-slot run after larger steps: the drift check
    speed: RunnerSpeed | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "index": self.index,
            "slots": self.slots,
            "is_reference": self.is_reference,
            "metrics": self.metrics.to_json(),
            "memory_budget_bytes": self.memory_budget_bytes,
            "agreement": self.agreement.to_json() if self.agreement else None,
            "failed_served": list(self.failed_served),
            "log_findings": list(self.log_findings),
            "reasonless": self.reasonless,
            "runner_mismatch": self.runner_mismatch,
            "latency": self.latency.to_json() if self.latency else None,
            "closing": self.closing,
            "speed": self.speed.to_json() if self.speed else None,
        }

    @classmethod
    def from_json(cls, data: object) -> StepFigures:
        json_fields.mapping(data, "agreement", json_fields.REQUIRED)  # an object or null
        agreement = (
            json_fields.nested(data, "agreement", Agreement.from_json)
            if json_fields.present(data, "agreement")
            else None
        )
        slots = _count(data, "slots")
        if slots < 1:
            raise MalformedJson("expected at least 1 slot", ("slots",))
        return cls(
            index=_count(data, "index"),
            slots=slots,
            is_reference=json_fields.boolean(data, "is_reference"),
            metrics=json_fields.nested(data, "metrics", StepMetrics.from_json),
            memory_budget_bytes=_count(data, "memory_budget_bytes", None),
            agreement=agreement,
            failed_served=_texts(data, "failed_served"),
            log_findings=_texts(data, "log_findings"),
            reasonless=_count(data, "reasonless"),
            runner_mismatch=json_fields.text(data, "runner_mismatch", None),
            latency=json_fields.nested(data, "latency", LatencyFigures.from_json)
            if json_fields.present(data, "latency")
            else None,
            closing=json_fields.boolean(data, "closing", False),
            speed=json_fields.nested(data, "speed", RunnerSpeed.from_json)
            if json_fields.present(data, "speed")
            else None,
        )


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

    def to_json(self) -> dict[str, object]:
        base = self.baseline
        latency = base.best_one_slot_latency
        return {
            "baseline": {
                **asdict(base),
                "best_one_slot_latency": latency.to_json() if latency else None,
                "modelled_turns": list(base.modelled_turns),
            },
            "steps": [step.to_json() for step in self.steps],
        }

    @classmethod
    def from_json(cls, data: object) -> SweepFigures:
        """Figures as stored; MalformedJson naming the first field of a wrong type or range."""
        baseline = json_fields.nested(data, "baseline", _baseline_from_json)
        steps = json_fields.each(data, "steps", StepFigures.from_json, json_fields.REQUIRED)
        return cls(baseline, tuple(steps))


def _baseline_from_json(data: dict[str, object]) -> BaselineFigures:
    agreement = _share(data, "self_agreement", json_fields.REQUIRED)
    assert agreement is not None
    return BaselineFigures(
        agreement,
        _amount(data, "best_one_slot_turns_per_hour"),
        _amount(data, "one_slot_swap_mb_per_min"),
        _amount(data, "best_one_slot_se", None),
        _count(data, "best_one_slot_batches", 0),
        _figure(data, "decided_by"),
        _amount(data, "best_one_slot_runs_per_hour", None),
        _amount(data, "best_one_slot_runs_se", None),
        _count(data, "best_one_slot_run_batches", 0),
        None
        if data.get("best_one_slot_latency") is None
        else json_fields.nested(data, "best_one_slot_latency", QuantileSample.from_json),
        cost_fit_r2=json_fields.number(data, "cost_fit_r2", None),
        cost_fit_turns=_count(data, "cost_fit_turns", 0),
        modelled_turns=_texts(data, "modelled_turns") if "modelled_turns" in data else (),
        reference_noise=_amount(data, "reference_noise", None),
        drift=json_fields.number(data, "drift", None),
        drift_se=_amount(data, "drift_se", None),
    )
