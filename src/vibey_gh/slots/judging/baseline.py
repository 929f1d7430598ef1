"""From raw steps to figures: the one-slot baseline, each step's figures, and early verdicts.

Pure functions of recorded StepRecords. Everything bounds-dependent is left to `judge`, which
works on the figures made here (or read back from where they are kept).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import msgspec
from msgspec.structs import replace

from ...interfaces.bounds import Bounds
from ...interfaces.turns import TurnResult
from .figures import TURNS_PER_HOUR, BaselineFigures, StepFigures, SweepFigures
from .interleaved import block_seconds_of, turns_at_full
from .latencies.latency import PairedBase, by_id, latency_figures
from .latencies.latency_figures import LatencyFigures, QuantileSample
from .metrics import measurement_window, step_metrics
from .records import StepRecord, TurnRecord
from .runs import RUNS, figure_of, replayed_runs
from .statistics.paired import across_runs, capacity_ratio
from .statistics.runner_speed import runner_speed
from .statistics.step_metrics_figures import StepMetrics
from .truth.fidelity import agreement, served_by_turn, structure
from .truth.replay_findings import failed_served_turns, log_findings, reasonless_answers
from .truth.reported import runner_mismatch
from .work import Pairing, closing_steps, judged_window, pairing_of

GB = 1_000_000_000
# why_ended of a step that stopped at max_step_seconds, as evidence before `reached_cap` says it
CAP_REASONS = ("inconclusive at max_step_seconds", "measured to max_step_seconds")
# why_ended of a step stopped because measuring to its cap could not show it climbing
NO_GAIN_IN_REACH = "no gain within reach of max_step_seconds"


class Baseline(msgspec.Struct, frozen=True):
    """The one-slot runs: the first one's answers, and the figures every step is held to."""

    reference: StepRecord | None
    reference_served: Mapping[str, TurnResult]
    figures: BaselineFigures
    # the one-slot runs' latencies by turn and by run: what latency_factor pairs a step with
    paired: PairedBase | None = None
    pairing: Pairing | None = None  # what steps are paired with; None: counted turns

    def fidelity_threshold(self, bounds: Bounds) -> float:
        return self.figures.fidelity_threshold(bounds)


def reference_of(steps: Sequence[StepRecord]) -> StepRecord | None:
    """The first one-slot run: the answers every other step is compared with."""
    return next((s for s in steps if s.slots == 1), None)


def baseline_of(steps: Sequence[StepRecord]) -> Baseline:
    one_slot = [s for s in steps if s.slots == 1]
    reference = reference_of(steps)
    reference_served = served_by_turn(reference) if reference else {}
    self_agreement = 1.0
    if len(one_slot) >= 2:
        measured = agreement(reference_served, served_by_turn(one_slot[1])).structural
        self_agreement = 1.0 if measured is None else measured
    metrics = [step_metrics(s) for s in one_slot]
    swap_rates = [m.swap_out_mb_per_min for m in metrics if m.swap_out_mb_per_min is not None]
    better = max(metrics, key=lambda m: m.rate, default=None)
    pairing = pairing_of(steps)
    figures = BaselineFigures(
        self_agreement=self_agreement,
        best_one_slot_turns_per_hour=better.turns_per_hour if better else 0.0,
        # the worse of the one-slot runs: their spread is this machine's own noise
        one_slot_swap_mb_per_min=max(swap_rates, default=0.0),
        best_one_slot_se=better.turns_per_hour_se if better else None,
        best_one_slot_batches=better.batches if better else 0,
        decided_by=figure_of(steps[0].shape) if steps else TURNS_PER_HOUR,
        best_one_slot_runs_per_hour=better.runs_per_hour if better else None,
        best_one_slot_runs_se=better.runs_per_hour_se if better else None,
        best_one_slot_run_batches=better.run_batches if better else 0,
        best_one_slot_latency=_lower_p95(one_slot_latencies(steps)),
    )
    if pairing is not None:
        figures = _pooled_figures(figures, pairing, steps)
    return Baseline(
        reference=reference,
        reference_served=reference_served,
        figures=figures,
        pairing=pairing,
        paired=paired_base(one_slot),
    )


def paired_base(one_slot: Sequence[StepRecord]) -> PairedBase | None:
    """Both one-slot runs' latencies (of their measurement windows) by turn id and by run."""
    if not one_slot:
        return None
    turns: list[tuple[str, float]] = []
    runs: list[tuple[str, float]] = []
    for step in one_slot:
        window = measurement_window(step.turns, step.slots) if step.measurement else None
        turns += [(t.turn_id, t.result.latency_s) for t in _served_turns(step.turns, window)]
        runs += _run_latencies(step.turns, step.shape, window) or []
    return PairedBase(by_id(turns), by_id(runs))


def _served_turns(
    turns: Sequence[TurnRecord], window: tuple[float, float] | None
) -> list[TurnRecord]:
    """Served turns, those started inside `window` where there is one (as `latency_figures`
    counts them)."""
    served = [t for t in turns if t.result.served]
    if window is None:
        return served
    return [t for t in served if window[0] <= t.result.started <= window[1]] or served


def _pooled_figures(
    figures: BaselineFigures, pairing: Pairing, steps: Sequence[StepRecord]
) -> BaselineFigures:
    """The one-slot bar as the pooled runs' capacity, with what the pairing knows of itself:
    the cost model's fit, the turns it priced, the turns' own spread and the drift."""
    pooled = capacity_ratio(pairing.pool, [])
    capacity = pooled.value if pooled is not None else 0.0
    costs = pairing.costs
    # the bar's own noise: its capacity's, and how well the mean reference cost is known
    relative = math.sqrt((pooled.log_se or 0.0) ** 2 if pooled else 0.0)
    relative = math.hypot(relative, _mean_cost_noise(pairing))
    clusters = pooled.clusters if pooled else 0
    turns_per_hour = pairing.turns_per_hour(capacity)
    rate = pairing.rate_of(capacity)
    on_runs = figures.decided_by != TURNS_PER_HOUR
    modelled = {t.turn_id for s in steps for t in s.turns if t.turn_id not in costs.measured}
    drift = drift_se = None
    closing = closing_steps(steps)
    if closing:
        works = []
        for step in closing:
            window = measurement_window(step.turns, step.slots)
            if window is not None:
                works.append(pairing.step_work(step.turns, 1, window)[0])
        moved = capacity_ratio(works, pairing.pool) if works else None
        if moved is not None:
            drift, drift_se = moved.value - 1.0, moved.log_se
    return replace(
        figures,
        best_one_slot_turns_per_hour=turns_per_hour,
        best_one_slot_se=turns_per_hour * relative,
        best_one_slot_batches=clusters,
        best_one_slot_runs_per_hour=rate if on_runs else figures.best_one_slot_runs_per_hour,
        best_one_slot_runs_se=rate * relative if on_runs else figures.best_one_slot_runs_se,
        best_one_slot_run_batches=clusters if on_runs else figures.best_one_slot_run_batches,
        cost_fit_r2=costs.fit.r_squared if costs.fit else None,
        cost_fit_turns=costs.fit.samples if costs.fit else 0,
        modelled_turns=tuple(sorted(modelled)),
        reference_noise=costs.noise,
        drift=drift,
        drift_se=drift_se,
        law_busy=pairing.law_busy,
    )


def _mean_cost_noise(pairing: Pairing) -> float:
    """Relative standard error of the mean reference cost of a turn, from each turn's own
    spread over its one-slot samples (0 when no turn was served twice)."""
    costs = pairing.costs
    if costs.noise is None or not costs.measured:
        return 0.0
    total = sum(costs.measured.values())
    variance = sum(
        (cost * costs.noise) ** 2 / len(costs.samples[turn])
        for turn, cost in costs.measured.items()
    )
    return math.sqrt(variance) / total if total > 0 else 0.0


def paired_metrics(step: StepRecord, metrics: StepMetrics, pairing: Pairing | None) -> StepMetrics:
    """A steady-state step's figures decided on paired capacity: turns/h (and runs/h) derived
    from it with the gain's noise; the counted figures where there is nothing to pair with."""
    if pairing is None or step.measurement is None:
        return metrics
    window = judged_window(step)
    if window is None:
        return metrics
    work, modelled = pairing.step_work(step.turns, step.slots, window, step.blocks)
    capacity = work.capacity()
    gain = pairing.gain(work)
    if capacity is None or gain is None:
        return metrics
    if step.slots > 1 and not step.blocks:
        # the step is one run and the bar a pool of them: how far runs stray is in its interval
        # (one slot's own runs are what that spread is read from, and shown as it); an
        # interleaved step holds its own one-slot reference (`interleaved`)
        gain = across_runs(gain, pairing.between)
    turns_per_hour = pairing.turns_per_hour(capacity)
    rate = pairing.rate_of(capacity)
    se = gain.log_se
    paired = replace(
        metrics,
        capacity=capacity,
        capacity_gain=gain.value,
        capacity_gain_se=se,
        capacity_clusters=gain.clusters,
        gain_over_own_blocks=step.slots > 1 and bool(step.blocks),
        modelled_turns=len(modelled),
        counted_turns_per_hour=metrics.turns_per_hour,
        turns_per_hour=turns_per_hour,
        turns_per_hour_se=None if se is None else turns_per_hour * se,
        batches=gain.clusters,
    )
    if metrics.on_runs:
        paired = replace(
            paired,
            runs_per_hour=rate,
            runs_per_hour_se=None if se is None else rate * se,
            run_batches=gain.clusters,
        )
    return paired


def one_slot_latencies(steps: Sequence[StepRecord]) -> list[QuantileSample]:
    """The one-slot runs' judged latencies: run latency for whole runs, else turn latency."""
    return [
        sample
        for step in steps
        if step.slots == 1 and (sample := step_latency(step).judged[1]) is not None
    ]


def _lower_p95(samples: Sequence[QuantileSample]) -> QuantileSample | None:
    """The one-slot run with the lower p95 latency: the better one, as the throughput bar
    is the better one-slot throughput."""
    return min(samples, key=lambda s: s.value() or 0.0, default=None)


def _run_latencies(
    turns: Sequence[TurnRecord], shape: str, window: tuple[float, float] | None
) -> list[tuple[str, float]] | None:
    """Completed runs' (id, latency) for a step of whole runs (those that ended inside the
    window, the runs its runs per hour count, where it has one); None for a step of segments."""
    if figure_of(shape) != RUNS:
        return None
    completed = [r for r in replayed_runs(turns) if r.served]
    if window is not None:
        completed = [r for r in completed if window[0] < r.ended <= window[1]] or completed
    return [(r.segment_id, r.latency_s) for r in completed]


def tried_to_cap(step: StepRecord) -> bool:
    """The step measured until `max_step_seconds`, or stopped because measuring to it could
    not have shown a gain: undecided, it counts against the step as if longer was tried."""
    measured = step.measurement or {}
    return measured_to_cap(step) or measured.get("why_ended") == NO_GAIN_IN_REACH


def measured_to_cap(step: StepRecord) -> bool:
    """The step measured until `max_step_seconds` (so measuring longer was tried)."""
    measured = step.measurement or {}
    if measured.get("reached_cap") is not None:
        return measured.get("reached_cap") is True
    # evidence from before the cap was recorded: the reasons that only the cap gives
    return measured.get("why_ended") in CAP_REASONS


def turns_latency(
    turns: Sequence[TurnRecord],
    shape: str,
    window: tuple[float, float] | None,
    to_cap: bool = False,
    base: PairedBase | None = None,
) -> LatencyFigures:
    """The latency figures of turns recorded so far (a step's, or a replay's under way),
    resampled by turn and, given one slot's (`base`), paired with it."""
    runs = _run_latencies(turns, shape, window)
    return latency_figures(
        [t.result for t in turns],
        window,
        [latency for _, latency in runs] if runs is not None else None,
        to_cap,
        turn_ids=[t.turn_id for t in turns],
        run_ids=[run for run, _ in runs] if runs is not None else None,
        base=base,
    )


def step_latency(step: StepRecord, base: PairedBase | None = None) -> LatencyFigures:
    """The step's latencies over its window; an interleaved step's from its blocks of all its
    slots only."""
    window = judged_window(step)
    turns = turns_at_full(step.turns, step.blocks, step.slots)
    return turns_latency(turns, step.shape, window, measured_to_cap(step), base)


def step_figures(
    step: StepRecord, baseline: Baseline, latency_base: PairedBase | None = None
) -> StepFigures:
    """`latency_base`: what `latency_factor` pairs the step with (None: every one-slot run)."""
    is_reference = baseline.reference is not None and step is baseline.reference
    window = measurement_window(step.turns, step.slots) if step.measurement else None
    return StepFigures(
        index=step.index,
        slots=step.slots,
        is_reference=is_reference,
        metrics=paired_metrics(step, step_metrics(step), baseline.pairing),
        memory_budget_bytes=step.memory_budget_bytes,
        agreement=None
        if is_reference
        else agreement(baseline.reference_served, served_by_turn(step)),
        failed_served=failed_served_turns(step, baseline.reference_served),
        log_findings=log_findings(step),
        reasonless=reasonless_answers(step),
        runner_mismatch=runner_mismatch(step.slots, step.window, step.runner_reported),
        latency=step_latency(step, latency_base or baseline.paired),
        speed=runner_speed([t.result for t in _served_turns(step.turns, window)]),
        block_seconds=block_seconds_of(step),
    )


def sweep_figures(steps: Sequence[StepRecord]) -> SweepFigures:
    baseline = baseline_of(steps)
    closing = {id(s) for s in closing_steps(steps)}
    figures = [
        replace(step_figures(s, baseline, _measured_before(steps, place)), closing=id(s) in closing)
        for place, s in enumerate(steps)
    ]
    if baseline.pairing is not None:
        figures = _paired_with_earlier(figures, steps, baseline.pairing)
    return SweepFigures(baseline.figures, tuple(figures))


def _measured_before(steps: Sequence[StepRecord], place: int) -> PairedBase | None:
    """The one-slot runs before step `place` (None: none): what `latency_factor` pairs it with,
    as it was paired while it measured (`stopping`), so a closing run cannot undecide it."""
    return paired_base([s for s in steps[:place] if s.slots == 1])


def _paired_with_earlier(
    figures: list[StepFigures], steps: Sequence[StepRecord], pairing: Pairing
) -> list[StepFigures]:
    """Each step's capacity over every earlier step's, paired by cluster (`over_earlier`): how
    the knee and patience rules compare two steps without the reference costs' noise."""
    works = [pairing.work_of(s) for s in steps]
    out = []
    for place, step in enumerate(figures):
        work = works[place]
        pairs = []
        for earlier in range(place):
            other = works[earlier]
            if work is None or other is None:
                continue
            # not the spread between one slot's runs: read over a whole sweep it holds the
            # drift of every step, far more than two neighbouring steps moved apart
            ratio = capacity_ratio([work], [other])
            if ratio is not None and ratio.log_se is not None:
                pairs.append((steps[earlier].index, ratio.log_se))
        metrics = replace(step.metrics, over_earlier=tuple(pairs))
        out.append(replace(step, metrics=metrics))
    return out


def early_verdict(
    slots: int,
    turns_so_far: Sequence[TurnResult | None],
    turn_ids: Sequence[str],
    baseline: Baseline,
    bounds: Bounds,
    corpus_turn_ids: Sequence[str],
    peak_wired_bytes: int | None,
    memory_budget_bytes: int | None,
) -> str | None:
    """Why a step in flight can already not pass, or None. Only certain outcomes count."""
    if slots <= 1:
        return None
    if peak_wired_bytes is not None and memory_budget_bytes:
        ceiling = bounds.wired_ceiling * memory_budget_bytes
        if peak_wired_bytes > ceiling:
            return f"memory: wired {peak_wired_bytes / GB:.2f} GB crossed the ceiling"
    mismatches = 0
    for turn_id, result in zip(turn_ids, turns_so_far, strict=True):
        if result is None or turn_id not in baseline.reference_served:
            continue
        if not result.served:
            return f"served turns: {turn_id} served at one slot failed ({result.error})"
        if structure(result) != structure(baseline.reference_served[turn_id]):
            mismatches += 1
    comparable = sum(1 for t in corpus_turn_ids if t in baseline.reference_served)
    if comparable <= 0:
        return None
    best_possible = (comparable - mismatches) / comparable
    threshold = baseline.fidelity_threshold(bounds)
    if best_possible < threshold:
        return (
            f"fidelity: {mismatches} of at most {comparable} answers changed structure; "
            f"agreement can no longer reach {threshold:.3f}"
        )
    return None
