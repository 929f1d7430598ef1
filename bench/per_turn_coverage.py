"""How often the per-turn latency_factor's interval holds the truth, on made-up turns.

Turns shaped as the demo corpus's in the decisive latency bench: 16 turns of very different
length (0.2 s … 4 s), `--base` requests a turn at one slot and `--here` at N, each request's
latency its turn's times exp(noise · z). At N every turn is `--factor` times as slow, times
exp(spread · u) with u from −1 (shortest turn) to +1 (longest): with `--spread 0` every turn
slows alike (as the simulated runner at N = 2 under scaling 0.5), so the true p95 over turns is
the factor itself; with a spread, it is the longest turn's. Printed: at each confidence, the
share of trials whose interval holds the truth, whose low end is above it (refusing what
meets a limit at the truth: the safe side), whose high end is below it (the unsafe side), and
whose high end is under `--limit` (what a bound at the limit would allow).

The one-slot requests come from two runs, half each, as a calibration's one-slot runs before
its steps do; `--hidden H` gives each turn in each of them an offset of its own, of standard
deviation H × noise, drawn once per run: noise a turn's repeats within a run do not show (a
run's own speed for that turn), which the per-turn noise must still count.

    python bench/per_turn_coverage.py
    python bench/per_turn_coverage.py --spread 0.1 --trials 100
    python bench/per_turn_coverage.py --base 8 --here 30 --hidden 0.4 --trials 1000

`--outlier K` makes the longest turn K times as slow again at N (one turn in 16 far slower
than the rest: the p95 over 16 turns is that turn's).
"""

from __future__ import annotations

import argparse
import math
import random
import sys

from vibey_gh.slots.judging.latencies.per_turn import per_turn_ratio


def turns(
    repeats: int, rng: random.Random, factor: float, noise: float, spread: float, count: int
) -> dict[str, list[float]]:
    return {
        f"t{i}": [
            factor
            * math.exp(spread * (2.0 * i / (count - 1) - 1.0))
            * (0.2 + 3.8 * i / (count - 1))
            * math.exp(rng.gauss(0.0, noise))
            for _ in range(repeats)
        ]
        for i in range(count)
    }


def one_slot(
    repeats: int, rng: random.Random, noise: float, hidden: float, count: int
) -> dict[str, list[float]]:
    """`repeats` requests a turn from two runs (the earlier half from the first), each run
    shifting each turn by an offset of its own."""
    runs = [turns(n, rng, 1.0, noise, 0.0, count) for n in (repeats // 2, repeats - repeats // 2)]
    return {
        key: [
            v * shift
            for run in runs
            for shift in [math.exp(rng.gauss(0.0, hidden * noise))]
            for v in run[key]
        ]
        for key in runs[0]
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--turns", type=int, default=16)
    parser.add_argument("--base", type=int, default=3)
    parser.add_argument("--here", type=int, default=7)
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--factor", type=float, default=math.sqrt(2.0))
    parser.add_argument("--spread", type=float, default=0.0)
    parser.add_argument("--limit", type=float, default=1.5)
    parser.add_argument("--hidden", type=float, default=0.0)
    parser.add_argument("--outlier", type=float, default=1.0)
    args = parser.parse_args()
    truth = args.factor * math.exp(args.spread) * args.outlier
    print(
        f"{args.turns} turns, {args.base} requests a turn at one slot and {args.here} at N, "
        f"noise {args.noise:g}, hidden {args.hidden:g}, spread {args.spread:g}, outlier "
        f"{args.outlier:g}: true p95 over turns {truth:.3f}×, "
        f"{args.trials} trials"
    )
    rows = {0.9: [0, 0, 0, 0], 0.925: [0, 0, 0, 0], 0.95: [0, 0, 0, 0]}
    points = []
    for trial in range(args.trials):
        rng = random.Random(trial)
        base = one_slot(args.base, rng, args.noise, args.hidden, args.turns)
        here = turns(args.here, rng, args.factor, args.noise, args.spread, args.turns)
        slowest = f"t{args.turns - 1}"
        here[slowest] = [args.outlier * v for v in here[slowest]]
        per_turn = per_turn_ratio(here, base)
        if per_turn is None:
            continue
        points.append(per_turn.point)
        for confidence, row in rows.items():
            low, high = per_turn.interval(confidence)
            low, high = low or 0.0, high or math.inf
            row[0] += low <= truth <= high
            row[1] += low > truth
            row[2] += high < truth
            row[3] += high < args.limit
    points.sort()
    print(
        f"point: median {points[len(points) // 2]:.3f}×, "
        f"{points[len(points) // 20]:.3f}–{points[-len(points) // 20]:.3f}× (5th–95th)"
    )
    for confidence, (held, above, below, under) in rows.items():
        print(
            f"  at {confidence:.1%}: holds the truth {held / args.trials:.0%}, all above it "
            f"{above / args.trials:.0%}, all below it {below / args.trials:.0%}; high end "
            f"under {args.limit:g}× {under / args.trials:.0%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
