"""Latency objectives the gate can trust: seeded calibrations of a sublinear simulated runner.

Two targets, each over several seeds (the simulated runner's noise seed):

* safe: `ttft_p95_seconds` set in the config while calibrating, and the same evidence re-judged
  against a tighter limit set after it (as `slots allowed` does when a bound changes): no
  allowed N may have a p95 TTFT (its point) above the limit it was judged against.
* decisive: `latency_factor = 1.5` set while calibrating a runner whose N turns share √N of one
  slot's speed (scaling 0.5): each turn takes √2 = 1.41× as long at two slots and 1.73× at
  three, so the answer should be N = 2.

The demo corpus (16 turns of different depth, repeated pass after pass), steps of
`--min-step-seconds` (4) up to the cap the config derives (no max_step_seconds given: with a
latency bound set, forty times the minimum, its looks doubling past five), N up to 3. Printed
per seed: the answer and, for the allowed N, the p95 it was judged on; then how many seeds met
each target. For the decisive target also, per step, what the factor's p95 ratio rests on: how
the step ended, how many requests of each turn it and the one-slot runs before it hold (what it
is paired with), and the same turns' own slowdowns (each turn's geometric mean latency over its
one-slot one: their geometric mean, and the lowest and highest) and how far their spread
exceeds their noise (Cochran's Q, with how often noise alone gives one as high). `--noise 0`
measures the capacity model's own per-turn slowdowns, the truth the noisy runs estimate.

    python bench/latency_bounds.py                     # 10 seeds of each
    python bench/latency_bounds.py --seeds 3 --targets decisive
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from bench_support import SilentProgress, free_port, runner_seconds

from vibey_gh.composition import build_environment
from vibey_gh.config import LocalModels, SimulatedModel
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.corpus.corpus import DEMO_WINDOW, Corpus, build_demo_corpus
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.judging.baseline import paired_base
from vibey_gh.slots.judging.judge import SweepJudgement, judge_sweep
from vibey_gh.slots.judging.latencies.latency import by_id
from vibey_gh.slots.judging.latencies.per_turn import noise_variances, turn_ratios
from vibey_gh.slots.judging.metrics import measurement_window
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.judging.statistics.sequential import look_confidence
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest
from vibey_gh.state import StateLayout


def calibrate(
    seed: int, bounds: Bounds, args: argparse.Namespace, corpus: Corpus
) -> tuple[StepRecord, ...]:
    folder = Path(tempfile.mkdtemp(prefix="vibey-latency-bounds-"))
    try:
        config = LocalModels(
            concurrent_runs="measured",
            runner="simulated",
            window=DEMO_WINDOW,
            calibration_port=free_port(),
            production_url=f"http://127.0.0.1:{free_port()}",
            min_step_seconds=args.min_step_seconds,
            simulated=SimulatedModel(knee=32, noise=args.noise, seed=seed, scaling=args.scaling),
            bounds=bounds,
        )
        request = CalibrationRequest(
            config=config,
            corpus=corpus,
            window=DEMO_WINDOW,
            max_tokens=args.max_tokens,
            max_slots=args.max_slots,
        )
        outcome = run_calibration(
            request,
            build_environment(config, StateLayout(folder / "state")),
            SilentProgress(),
            bounds_source=lambda: config,
        )
        return load_evidence(outcome.evidence).steps if outcome.evidence else ()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def allowed_ttft(judgement: SweepJudgement) -> float | None:
    """The p95 TTFT (point) of the step the answer rests on; None at one slot."""
    if judgement.ideal <= 1:
        return None
    verdicts = [v for v in judgement.verdicts if v.slots == judgement.ideal and v.qualifies]
    latency = verdicts[-1].latency if verdicts else None
    return latency.ttft.value() if latency and latency.ttft else None


def safe(seed: int, args: argparse.Namespace, corpus: Corpus) -> bool:
    limit = args.ttft_limit
    steps = calibrate(seed, Bounds(ttft_p95_seconds=limit), args, corpus)
    ok = True
    for when, bound in (("during", limit), ("after", limit * args.tighter)):
        judgement = judge_sweep(steps, Bounds(ttft_p95_seconds=bound))
        p95 = allowed_ttft(judgement)
        met = p95 is None or p95 <= bound
        ok = ok and met
        shown = "—" if p95 is None else f"{p95:.3f} s"
        print(
            f"  seed {seed} ttft_p95_seconds {bound:.3g} set {when}: N = {judgement.ideal}, "
            f"its p95 TTFT {shown} {'ok' if met else 'ABOVE THE LIMIT'}",
            flush=True,
        )
    print(f"    runner time {runner_seconds(list(steps)):.0f} s", flush=True)
    return ok


def _log_mean(values: tuple[float, ...]) -> float:
    return sum(math.log(v) for v in values) / len(values)


def slowdowns(steps: tuple[StepRecord, ...], step: StepRecord) -> str:
    """What a step's paired factor rests on: how it ended, requests per turn here and at one
    slot, and the same turns' own slowdowns (geometric mean, lowest, highest)."""
    base = paired_base([s for s in steps if s.slots == 1 and s.index < step.index])
    window = measurement_window(step.turns, step.slots)
    here = by_id(
        [
            (t.turn_id, t.result.latency_s)
            for t in step.turns
            if t.result.served and window[0] <= t.result.started <= window[1]
        ]
    )
    shared = [k for k in here if base and k in base.turns]
    if not base or not shared:
        return "no turn paired"
    ratios = [math.exp(_log_mean(here[k]) - _log_mean(base.turns[k])) for k in shared]
    mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    per_turn = sum(len(here[k]) for k in shared) / len(shared)
    per_base = sum(len(base.turns[k]) for k in shared) / len(shared)
    ended = (step.measurement or {}).get("why_ended", "?")
    spread = beyond_noise(here, base.turns)
    return (
        f"{ended}; {per_turn:.1f} requests a turn, {per_base:.1f} at one slot; the turns' own "
        f"slowdowns {mean:.2f}× ({min(ratios):.2f}–{max(ratios):.2f}×); {spread}"
    )


def beyond_noise(here: Mapping[str, Sequence[float]], base: Mapping[str, Sequence[float]]) -> str:
    """Cochran's Q of the turns' log ratios over their noise (the statistic τ² is read from):
    about its degrees of freedom where every turn slows alike, above them where the ratios
    spread more than their repeats' noise explains; with how often so high a Q comes from noise
    alone (chi-square, by simulation with a fixed seed)."""
    turns = turn_ratios(here, base)
    noises = noise_variances(turns, [1] * len(turns)) if len(turns) > 1 else None
    if noises is None or min(noises) <= 0.0:
        return "Q not read (no repeats)"
    weights = [1.0 / v for v in noises]
    fixed = sum(w * t.ratio for w, t in zip(weights, turns, strict=True)) / sum(weights)
    q = sum(w * (t.ratio - fixed) ** 2 for w, t in zip(weights, turns, strict=True))
    freedom = len(turns) - 1
    draws = random.Random(0)
    null = [sum(draws.gauss(0.0, 1.0) ** 2 for _ in range(freedom)) for _ in range(4000)]
    chance = sum(x >= q for x in null) / len(null)
    return f"Q {q:.1f} on {freedom} df (as high by noise alone: {chance:.1%})"


def decisive(seed: int, args: argparse.Namespace, corpus: Corpus) -> tuple[int, bool]:
    """The answer under latency_factor, and whether its evidence re-judged with a TTFT limit
    set only after calibrating (another case of the safe target) allowed nothing above it."""
    bounds = Bounds(latency_factor=args.factor)
    steps = calibrate(seed, bounds, args, corpus)
    judgement = judge_sweep(steps, bounds)
    after = judge_sweep(steps, Bounds(ttft_p95_seconds=args.ttft_limit))
    p95 = allowed_ttft(after)
    met = p95 is None or p95 <= args.ttft_limit
    by_index = {step.index: step for step in steps}
    for verdict in judgement.verdicts:
        paired = verdict.latency.factor_per_turn if verdict.latency else None
        if verdict.slots > 1 and paired is not None:
            look = (verdict.metrics.look, verdict.metrics.looks)
            low, high = paired.interval(look_confidence(bounds.confidence, *look))
            ends = "–".join("…" if end is None else f"{end:.2f}" for end in (low, high))
            print(
                f"    N={verdict.slots}: p95 over turns of each turn's latency over its own at "
                f"one slot {paired.point:.2f}× ({ends}× at look "
                f"{look[0]} of {look[1]}), "
                f"{verdict.label}\n      {slowdowns(steps, by_index[verdict.index])}",
                flush=True,
            )
    print(f"  seed {seed} latency_factor {args.factor:g}: N = {judgement.ideal}", flush=True)
    shown = "—" if p95 is None else f"{p95:.3f} s"
    print(
        f"  seed {seed} ttft_p95_seconds {args.ttft_limit:g} set after a calibration without "
        f"it: N = {after.ideal}, its p95 TTFT {shown} {'ok' if met else 'ABOVE THE LIMIT'}",
        flush=True,
    )
    return judgement.ideal, met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--targets", default="safe,decisive")
    parser.add_argument("--scaling", type=float, default=0.5)
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--factor", type=float, default=1.5)
    parser.add_argument("--ttft-limit", type=float, default=0.55)
    parser.add_argument("--tighter", type=float, default=0.9, help="the limit set after")
    parser.add_argument("--min-step-seconds", type=float, default=4.0)
    parser.add_argument("--max-slots", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()
    corpus = build_demo_corpus(window=DEMO_WINDOW)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    started = time.monotonic()
    targets = args.targets.split(",")
    if "safe" in targets:
        print(
            f"safe: ttft_p95_seconds {args.ttft_limit:g} while calibrating, then "
            f"{args.ttft_limit * args.tighter:.3g} after (scaling {args.scaling:g})"
        )
        held = sum(safe(seed, args, corpus) for seed in seeds)
        print(f"safe: no allowed N above its limit in {held} of {args.seeds} seeds\n")
    if "decisive" in targets:
        print(
            f"decisive: latency_factor {args.factor:g} while calibrating (scaling "
            f"{args.scaling:g}, steps {args.min_step_seconds:g} s, N up to {args.max_slots})"
        )
        results = [decisive(seed, args, corpus) for seed in seeds]
        answers = [n for n, _ in results]
        print(f"decisive: N = 2 in {answers.count(2)} of {args.seeds} seeds; answers {answers}")
        held = sum(met for _, met in results)
        print(f"safe, bound set after: no allowed N above it in {held} of {args.seeds} seeds")
    print(f"wall {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
