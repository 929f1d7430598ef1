"""A step's gain over one slot, as the judge reads it: paired where the sweep can be paired
(with how far one slot's runs strayed from each other in its interval), else widened by the
drift one slot read across the sweep; and widened by the planned look the step stopped at
(docs/decision.md, "Paired capacity", "Drift", "Planned looks")."""

from __future__ import annotations

from msgspec.structs import replace

from .figures import BaselineFigures, StepMetrics, SweepFigures
from .statistics.sequential import widening
from .statistics.stats import log_interval, ratio_interval


def at_its_look(metrics: StepMetrics, confidence: float) -> StepMetrics:
    """The step's noise as its planned look spent it (`statistics.sequential`): standard errors
    widened so an interval at `confidence` is the interval at the look's share of the error."""
    factor = widening(confidence, metrics.look, metrics.looks)
    if factor == 1.0:
        return metrics

    def wider(se: float | None) -> float | None:
        return None if se is None else se * factor

    return replace(
        metrics,
        turns_per_hour_se=wider(metrics.turns_per_hour_se),
        runs_per_hour_se=wider(metrics.runs_per_hour_se),
        capacity_gain_se=wider(metrics.capacity_gain_se),
        over_earlier=tuple((index, se * factor) for index, se in metrics.over_earlier),
    )


def gain_ratio(
    metrics: StepMetrics, baseline: BaselineFigures, confidence: float
) -> tuple[float, float] | None:
    """The interval of a step's throughput over one slot's.

    Paired (`metrics.paired`): the step's capacity over the pooled one-slot runs', its noise
    from the step's blocks, the reference costs and how far one slot's runs — the pooled and
    the closing ones — strayed from each other (`statistics.paired.across_runs`): the closing
    run's drift is one of those runs, so a gain the drift could explain is inside the interval
    already. Else, as evidence without a one-slot steady-state run is judged: over the better
    one-slot run's throughput, both intervals widening it, and a drift of one slot's capacity
    between the start and the end of the sweep widens it by that drift at both ends
    (`drift_widened`).
    """
    if metrics.paired and metrics.capacity_gain is not None:
        gain, se = metrics.capacity_gain, metrics.capacity_gain_se
        return log_interval(gain, se, metrics.capacity_clusters, confidence)
    ratio = ratio_interval(metrics.throughput, baseline.bar, confidence)
    return drift_widened(ratio, baseline.drift)


def drift_widened(
    ratio: tuple[float, float] | None, drift: float | None
) -> tuple[float, float] | None:
    """A gain interval widened by the drift one slot's capacity read between the start and the
    end of the sweep: the low end divided by 1 + |drift|, the high end multiplied by it. The
    steps between were measured at some capacity in between, which the pooled start alone
    cannot tell."""
    if ratio is None or drift is None:
        return ratio
    moved = 1.0 + abs(drift)
    return ratio[0] / moved, ratio[1] * moved


def drift_sentence(baseline: BaselineFigures, interleaved: bool = False) -> str:
    """'; one slot read −4.1% at the end of the sweep against its start, a spread between its
    runs that every gain interval holds' — '' without a closing one-slot run (a drift is only
    measured on a paired sweep, whose intervals hold the one-slot runs' spread); where the
    steps interleaved, each read against its own one-slot blocks instead."""
    if baseline.drift is None:
        return ""
    if interleaved:
        return (
            f"; one slot read {baseline.drift:+.1%} at the end of the sweep against its start, "
            "which no gain carries: each step was read against its own one-slot blocks"
        )
    return (
        f"; one slot read {baseline.drift:+.1%} at the end of the sweep against its start, "
        "a spread between its runs that every gain interval holds"
    )


# how evidence that cannot be paired (no steady one-slot run) has its intervals read
COUNTED_TURNS = "batch means of counted turns"


def interval_method(figures: SweepFigures) -> str:
    """How a sweep's intervals were read: paired with one slot where it could be (capacity
    of one-slot work, resampled by blocks of time), else batch means of counted turns."""
    steady = [s for s in figures.steps if s.metrics.window_start is not None]
    if steady and any(s.metrics.paired for s in steady) and figures.baseline.law_busy is not None:
        return "the closed-system law on response times paired with one slot's, resampled by turn"
    blocks = [s.block_seconds for s in figures.steps if s.block_seconds is not None]
    if blocks and any(s.metrics.paired for s in steady):
        return (
            f"interleaved with one slot in blocks of {max(blocks):g} s, resampled by pairs of "
            "blocks"
        )
    if steady and any(s.metrics.paired for s in steady):
        return "paired with one slot, resampled by blocks of time"
    return COUNTED_TURNS


def pairing_sentence(figures: SweepFigures) -> str:
    """What the sweep was paired on, where a reader must know: evidence judged on counted turns
    (it cannot be paired), and the turns the cost model priced, with how well it fits."""
    steady = [s for s in figures.steps if s.metrics.window_start is not None]
    if steady and not any(s.metrics.paired for s in steady):
        return (
            "; judged on counted turns, as before paired capacity: this evidence has no "
            "steady one-slot run to pair its steps with"
        )
    base = figures.baseline
    law = (
        ""
        if base.law_busy is None
        else (
            "; gains read by the closed-system law, N × (R₁ + Z) / (R_N + Z): each turn's "
            "response time against its one-slot time, the think time replayed taken as known "
            f"(one slot busy {base.law_busy:.0%} of the time)"
        )
    )
    if not base.modelled_turns:
        return law
    names = ", ".join(base.modelled_turns[:3]) + (" …" if len(base.modelled_turns) > 3 else "")
    fit = (
        f"R² {base.cost_fit_r2:.2f} on {base.cost_fit_turns} one-slot turns"
        if base.cost_fit_r2 is not None
        else "no fit: priced at the mean one-slot turn"
    )
    return law + (
        f"; {len(base.modelled_turns)} turn(s) never served at one slot were priced by the "
        f"cost model ({fit}): {names}"
    )
