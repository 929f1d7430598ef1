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

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import MalformedJson
from ...interfaces import json_fields
from .latency_figures import LatencyFigures, QuantileSample
from .stats import MIN_BATCHES, Estimate, t_quantile

if TYPE_CHECKING:
    from .bounds import Bounds

# Bump when any figure is computed differently: stored figures of an older version are rebuilt.
FIGURES_VERSION = 4
RUNS_PER_HOUR = "runs/h"
TURNS_PER_HOUR = "turns/h"


@dataclass(frozen=True)
class StepMetrics:
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

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, data: object) -> StepMetrics:
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
        )


def _interval(estimate: Estimate, confidence: float) -> tuple[float, float]:
    if estimate.se is None or estimate.batches < MIN_BATCHES:
        return estimate.value, estimate.value
    half = t_quantile(0.5 + confidence / 2.0, estimate.batches - 1) * estimate.se
    return max(0.0, estimate.value - half), estimate.value + half


@dataclass(frozen=True)
class Agreement:
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


@dataclass(frozen=True)
class BaselineFigures:
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


@dataclass(frozen=True)
class StepFigures:
    """One step's figures. The findings here break a bound whatever the bounds say.

    is_reference: this is the first one-slot run, which the others are compared with.
    agreement: with the reference (None for the reference itself).
    failed_served: turns served at one slot that failed here, as "id (why)".
    log_findings: forbidden runner log events during the replay, as "log: n × what".
    reasonless: HTTP 200 answers without a stop, length or tool_calls done reason.
    runner_mismatch: why the runner's start-up log says it was not set up as asked, or None.
    latency: TTFT, ITL and turn latency (`latency_figures`); None in figures made before.
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
        )


@dataclass(frozen=True)
class SweepFigures:
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
                **base.__dict__,
                "best_one_slot_latency": latency.to_json() if latency else None,
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
    )


def _figure(data: object, key: str) -> str:
    """Which figure decided: turns/h where absent (figures from before runs per hour)."""
    value: str = json_fields.text(data, key, TURNS_PER_HOUR)
    if value not in (TURNS_PER_HOUR, RUNS_PER_HOUR):
        raise MalformedJson(f"expected {TURNS_PER_HOUR} or {RUNS_PER_HOUR}, got {value!r}", (key,))
    return value


def _count(data: object, key: str, default: Any = json_fields.REQUIRED) -> Any:
    """A whole number ≥ 0 (None where `default` is None and the field is null or absent)."""
    value = json_fields.integer(data, key, default)
    if value is not None and value < 0:
        raise MalformedJson(f"expected a count ≥ 0, got {value}", (key,))
    return value


def _amount(data: object, key: str, default: Any = json_fields.REQUIRED) -> Any:
    """A finite number ≥ 0: a rate, a duration, a standard error."""
    value = json_fields.number(data, key, default)
    if value is not None and not 0.0 <= value < float("inf"):
        raise MalformedJson(f"expected a finite number ≥ 0, got {value!r}", (key,))
    return value


def _share(
    data: object, key: str, default: float | json_fields.Required | None = None
) -> float | None:
    value = json_fields.number(data, key, default)
    if value is not None and not 0.0 <= value <= 1.0:
        raise MalformedJson(f"expected a share between 0 and 1, got {value!r}", (key,))
    return value


def _texts(data: object, key: str) -> tuple[str, ...]:
    return tuple(json_fields.strings(data, key, json_fields.REQUIRED))
