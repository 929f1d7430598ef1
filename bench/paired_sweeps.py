"""Whole sweeps of the simulated runner's capacity model in virtual time, decided by the
product's own rules: how often the gain intervals hold the true gain, how wide the one-slot
figure is after 60 s, how much runner time a decision takes, and how often the knee is found.

The simulated runner serves turns in real time, so forty sweeps would take hours; here its
capacity model (`runners.simulated.model`: a turn's work from its prompt and output tokens,
shared among the turns in flight as min(N, knee)^scaling, a per-turn noise factor
exp(noise × z)) runs as a discrete-event simulation on a virtual clock, and everything else is
the product's: the demo corpus, the replay order (segments taken in turn; the stopping rule
asked whenever a worker takes the next one after a whole pass), `SteadyStateRule`,
`sweep_steps`, the bars from `calibrate`, and `judge_sweep`. The truth is known: step N gains
min(N, knee)^scaling over one slot.

Settings the simulated runner gains later are read when `SimulatedModel` has them:
`cache_speedup` (a prompt prefix the slot holds from the run's previous turn is read that many
times faster) and `drift_per_step` (the runner's speed changes by that factor each step).
`--cache-speedup` and `--drift` set them here either way.

Run against today's rules too, for the runner-time comparison (same seeds, same model):

    PYTHONPATH=src python bench/paired_sweeps.py --seeds 40 --knee 2
    PYTHONPATH=/path/to/old/src python bench/paired_sweeps.py --seeds 10 --knee 2
    PYTHONPATH=src python bench/paired_sweeps.py --seeds 10 --knee 4 --drift 0.03
    PYTHONPATH=src python bench/paired_sweeps.py --seeds 200 --knee 2 --scaling 0.0704 \\
        --max-slots 2   # a true +5% step (half of min_gain): how often it qualifies
    PYTHONPATH=src python bench/paired_sweeps.py --seeds 40 --knee 2 --prefill-share 4
    PYTHONPATH=src python bench/paired_sweeps.py --seeds 40 --knee 2 --wander 0.06 \\
        --wander-seconds 30   # the machine's speed wandering 6% over half-minutes

`--wander` lets the machine's speed wander as exp(w), w an Ornstein–Uhlenbeck process of that
standard deviation and `--wander-seconds` correlation time in runner time, continuing from one
step into the next (`virtual_runner.Wander`): as the real machine's one-slot speed wanders
5–10% from one 20 s stretch to the next, so each step, measured on its own, carries its own
level into every gain.

`--interleave SECONDS` serves every step above one slot as the product's interleaved steps
(`interleave_seconds`): one runner with N slots, blocks of that many seconds one turn at a time
and N at a time in the order 1, N, N, 1, by the product's own gate (`stepping.block_gate`, on the
virtual clock: `virtual_gate`), its stopping rule judging the blocks closed so far and the
judge reading the gain from neighbouring blocks' pairs (`judging.interleaved`). As the product,
a sweep whose think policy waits does not interleave.

    PYTHONPATH=src python bench/paired_sweeps.py --seeds 40 --knee 2 --wander 0.06 \\
        --wander-seconds 30 --interleave 1.4   # blocks about 4 mean one-slot turns long

`--prefill-share` serves the turns in flight unequally (a long uncached prompt takes more of
the runner while it is read, as on a CPU), so turns served together take unequal times for
their work, as on the real demo: the gain intervals must hold the true gain all the same.
"""

from __future__ import annotations

import argparse
import inspect
import random
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from msgspec.structs import replace
from virtual_gate import VirtualGate, gate_for
from virtual_runner import CorpusTurn, Model, VirtualClock, Wander, corpus_turns, simulate_step

from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.runners.simulated.settings import SimulatedModel
from vibey_gh.slots.corpus.corpus import Corpus, build_demo_corpus
from vibey_gh.slots.judging.baseline import baseline_of
from vibey_gh.slots.judging.judge import SweepJudgement, judge_sweep
from vibey_gh.slots.judging.metrics import step_metrics
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.judging.statistics.stats import Estimate, t_quantile
from vibey_gh.slots.judging.sweep import sweep_steps
from vibey_gh.slots.measurement.stepping.stopping import SteadyStateRule


@dataclass
class Context:
    """What the stopping rule reads of a step's context (`stopping.StepContext`)."""

    clock: VirtualClock
    corpus: Corpus
    bounds_now: Callable[[], Bounds]
    min_step_seconds: float
    max_step_seconds: float
    even_looks_seconds: float | None = None  # no latency bound here: evenly spaced to the cap
    interleave_seconds: float | None = None  # `--interleave`: its blocks' length


def bars(steps: Sequence[StepRecord], slots: int, bounds: Bounds) -> tuple[object, object]:
    """The bars `calibrate` gives a step (and what to pair with): today's `bars_for`, else as
    the rules before it."""
    try:
        from vibey_gh.slots.measurement.calibrate import bars_for  # type: ignore[attr-defined]
    except ImportError:
        baseline = baseline_of(steps)
        if slots <= 1 or baseline.figures.best_rate <= 0:
            return (), ()
        best = max((step_metrics(s) for s in steps), key=lambda m: m.rate)
        return (baseline.figures.bar, Estimate(best.rate)), ()
    found: tuple[object, object] = bars_for(steps, slots, bounds)
    return found


def rule_for(
    ctx: Context,
    slots: int,
    steps: Sequence[StepRecord],
    bounds: Bounds,
    gate: VirtualGate | None = None,
    interleaves: bool = False,
) -> SteadyStateRule:
    baseline = baseline_of(steps)
    compare_with, pair_with = bars(steps, slots, bounds)
    args: list[object] = [ctx, slots, compare_with, None]
    parameters = inspect.signature(SteadyStateRule.__init__).parameters
    if "pairing" in parameters:
        args += [getattr(baseline, "pairing", None), pair_with]
    if "next_gain" in parameters:
        from vibey_gh.slots.measurement.calibrate import next_gain_for  # type: ignore[attr-defined]

        args.append(next_gain_for(steps, slots, bounds))
    if gate is not None:
        # an interleaved step is judged on its blocks closed so far, as `stepping.step` asks
        return SteadyStateRule(*args, blocks=lambda: gate.blocks)  # type: ignore[arg-type]
    if interleaves and slots <= 1 and "no_bar" in parameters:
        # a one-slot run of a sweep that interleaves is no bar, as `stepping.step` asks
        return SteadyStateRule(*args, no_bar=True)  # type: ignore[arg-type]
    return SteadyStateRule(*args)  # type: ignore[arg-type]


def law_mark(segments: list[list[CorpusTurn]]) -> dict[str, object]:
    """What the product writes into a step's measurement when its think policy waits (its
    gains read by the closed-system law); nothing under the rules before it."""
    try:
        from vibey_gh.slots.judging.work import GAINS_KEY, THINK_LAW  # type: ignore[attr-defined]
    except ImportError:
        return {}
    waits = any(t.think > 0 for s in segments for t in s)
    return {GAINS_KEY: THINK_LAW} if waits else {}


def run_sweep(
    seed: int,
    model: Model,
    corpus: Corpus,
    segments: list[list[CorpusTurn]],
    args: argparse.Namespace,
) -> tuple[SweepJudgement, float, list[StepRecord]]:
    bounds = Bounds()
    clock = VirtualClock()
    ctx = Context(
        clock,
        corpus,
        lambda: bounds,
        args.min_step_seconds,
        args.max_step_seconds,
        interleave_seconds=getattr(args, "interleave", None),
    )
    rng = random.Random(seed)
    wander = Wander(model, seed)  # the machine's, over the whole sweep
    generator = sweep_steps(lambda: bounds, None, args.max_slots)
    steps: list[StepRecord] = []
    runner_s = 0.0
    try:
        slots = next(generator)
        while True:
            law = law_mark(segments)
            gate = gate_for(slots, getattr(args, "interleave", None), clock.monotonic, bool(law))
            interleaves = bool(getattr(args, "interleave", None)) and not law
            rule = rule_for(ctx, slots, steps, bounds, gate, interleaves)
            step = simulate_step(
                len(steps), slots, segments, model, rng, clock, rule, corpus.shape, bool(law),
                wander, gate,
            )  # fmt: skip
            look = {"look": rule.look, "looks": rule.looks} if hasattr(rule, "looks") else {}
            measured = {"why_ended": rule.why, "reached_cap": rule.reached_cap, **look}
            measured.update(law)
            if gate is not None:
                measured["block_seconds"] = gate.block_seconds
            step = replace(step, measurement=measured)
            runner_s += step.ended_at - step.started_at
            steps.append(step)
            slots = generator.send(step)
    except StopIteration:
        pass
    return judge_sweep(steps, bounds), runner_s, steps


def one_slot_half_width(judgement: SweepJudgement) -> float | None:
    """The pooled one-slot figure's relative half-width at 90%."""
    base = judgement.figures.baseline
    bar = base.bar
    if not bar.has_interval or bar.se is None or bar.value <= 0:
        return None
    return t_quantile(0.95, bar.batches - 1) * bar.se / bar.value


def cap_mark(step: StepRecord) -> str:
    """'*' after a step measured to its cap, '+' after one the rule stopped at a look past its
    first: where the runner time goes."""
    measured = step.measurement or {}
    if measured.get("reached_cap"):
        return "*"
    return "+" if int(str(measured.get("look", 0) or 0)) > 1 else ""


def spread(values: Sequence[float]) -> str:
    if not values:
        return "n/a"
    ordered = sorted(values)
    quartiles = statistics.quantiles(ordered, n=4) if len(ordered) > 1 else [ordered[0]] * 3
    return (
        f"median {statistics.median(ordered):.3g} (quartiles {quartiles[0]:.3g}–{quartiles[2]:.3g},"
        f" range {ordered[0]:.3g}–{ordered[-1]:.3g})"
    )


def add_wander_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wander",
        type=float,
        default=0.0,
        help="the machine's speed wanders as exp(w): w's standard deviation (e.g. 0.06)",
    )
    parser.add_argument(
        "--wander-seconds",
        type=float,
        default=30.0,
        help="w's correlation time in seconds of runner time, across steps",
    )


def check_wander(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.wander < 0 or args.wander_seconds <= 0:
        parser.error("--wander must be 0 or more and --wander-seconds more than 0")


def add_interleave_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--interleave",
        type=float,
        default=None,
        metavar="SECONDS",
        help="steps above one slot serve blocks this long, one turn at a time and all their "
        "slots at a time in turn (the product's interleave_seconds); default: they do not",
    )


def check_interleave(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.interleave is not None and args.interleave <= 0:
        parser.error("--interleave must be more than 0 seconds")


def interleave_said(args: argparse.Namespace) -> str:
    """The blocks in the heading, only where the steps interleave."""
    return f"interleaved in blocks of {args.interleave:g} s, " if args.interleave else ""


def step_said(step: StepRecord) -> str:
    """A step in a seed's line: its slots, runner time, how it ended, and its blocks where
    it interleaved."""
    blocks = f"[{len(step.blocks)} blocks]" if step.blocks else ""
    return f"{step.slots}:{step.ended_at - step.started_at:.0f}s{cap_mark(step)}{blocks}"


def wander_said(model: Model) -> str:
    """The wander in the heading, only where there is one (the figures without it unchanged)."""
    if not model.wander:
        return ""
    return f"wander {model.wander:g} over {model.wander_seconds:g} s, "


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    defaults = SimulatedModel()
    parser.add_argument("--knee", type=int, default=defaults.knee)
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--tokens-per-second", type=float, default=300.0)
    parser.add_argument("--scaling", type=float, default=defaults.scaling)
    parser.add_argument(
        "--cache-speedup", type=float, default=float(getattr(defaults, "cache_speedup", 2.0))
    )
    parser.add_argument(
        "--drift", type=float, default=float(getattr(defaults, "drift_per_step", 0.0))
    )
    parser.add_argument(
        "--prefill-share",
        type=float,
        default=0.0,
        help="a turn's share of the runner grows by this per 1000 uncached prompt tokens",
    )
    add_wander_arguments(parser)
    add_interleave_argument(parser)
    parser.add_argument("--min-step-seconds", type=float, default=60.0)
    parser.add_argument("--max-step-seconds", type=float, default=300.0)
    parser.add_argument("--max-slots", type=int, default=8)
    args = parser.parse_args()
    check_wander(parser, args)
    check_interleave(parser, args)
    model = Model(
        args.knee,
        args.noise,
        args.tokens_per_second,
        args.scaling,
        args.cache_speedup,
        args.drift,
        args.prefill_share,
        args.wander,
        args.wander_seconds,
    )
    corpus = build_demo_corpus()
    segments = corpus_turns(corpus)
    print(
        f"knee {model.knee}, noise {model.noise:g}, {model.tokens_per_second:g} tokens/s, "
        f"scaling {model.scaling:g}, cache_speedup {model.cache_speedup:g}, drift "
        f"{model.drift:+g}/step, prefill share {model.prefill_share:g}, {wander_said(model)}"
        f"{interleave_said(args)}steps {args.min_step_seconds:g}–{args.max_step_seconds:g} s, "
        f"{args.seeds} seeds"
    )
    covered = total = at_knee = above = qualified_two = noisy = n2_covered = 0
    runner, widths, n2_widths, n2_gains = [], [], [], []
    n2_labels: Counter[str] = Counter()
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        judgement, runner_s, steps = run_sweep(seed, model, corpus, segments, args)
        runner.append(runner_s)
        width = one_slot_half_width(judgement)
        if width is not None:
            widths.append(width)
        for verdict in judgement.verdicts:
            if verdict.slots > 1 and verdict.gain_low is not None and verdict.gain_high is not None:
                truth = model.true_gain(verdict.slots) - 1.0
                total += 1
                covered += verdict.gain_low <= truth <= verdict.gain_high
            if verdict.slots == 2 and verdict.qualifies:
                qualified_two += 1
        two = judgement.verdict_for(2)
        if two is not None:
            n2_labels[two.label] += 1
            if two.gain is not None:
                n2_gains.append(100 * two.gain)
            if two.gain_low is not None and two.gain_high is not None:
                n2_widths.append(100 * (two.gain_high - two.gain_low) / 2)
                n2_covered += two.gain_low <= model.true_gain(2) - 1.0 <= two.gain_high
        too_noisy = judgement.ideal == 1 and "too noisy" in judgement.reason
        noisy += too_noisy
        at_knee += judgement.ideal == model.knee
        above += judgement.ideal > model.knee
        asked = " ".join(step_said(s) for s in steps)
        said = ", too noisy to decide" if too_noisy else ""
        print(
            f"  seed {seed}: ideal {judgement.ideal}{said}; steps {asked}; runner {runner_s:.0f} s"
        )
    print(f"ideal N = the knee in {at_knee} of {args.seeds} seeds; above it in {above}")
    if total:
        print(f"gain intervals holding the true gain: {covered} of {total} ({covered / total:.0%})")
    print(f"N=2 qualified in {qualified_two} of {args.seeds} seeds")
    labels = ", ".join(f"{label} {count}" for label, count in sorted(n2_labels.items()))
    print(
        f"N=2's verdicts: {labels}; its interval holding the true gain: {n2_covered} of "
        f"{len(n2_widths)}; its 90% half-width: {spread(n2_widths)} points"
    )
    truth = 100 * (model.true_gain(2) - 1.0)
    print(f"N=2's gain, % (true {truth:+.0f}%): {spread(n2_gains)}")
    print(f"answered 1, too noisy to decide, in {noisy} of {args.seeds} seeds")
    print(f"runner time to a decision (s): {spread(runner)}; total {sum(runner):.0f} s")
    print(f"one-slot figure's 90% half-width: {spread([100 * w for w in widths])} %")


if __name__ == "__main__":
    main()
