"""Does a soak tell a runner that throttles from one that holds? Seeded soaks of each.

Each run is a whole `slots soak` on the simulated runner (state dir of its own, nothing
resumed), seed k for run k: K of a steady runner and K of one whose capacity drops to
--throttle-factor after --throttle-after busy seconds. Printed: each soak's verdict, the last
window's throughput over the first's with its interval, the trend per hour; then how many
steady soaks held and how many throttled ones were found to drift.

    python bench/soak_throttle.py --runs 5            # 2 min soaks at N=4: about 21 minutes
    python bench/soak_throttle.py --runs 5 --throttle-factor 0.8 --duration 240

Short turns (16 tokens at 1000 tokens/s) give each 10 s window a few hundred turns, so a
window's interval is a few percent wide; on a machine shared with other work the windows also
measure that work.

The target: a steady soak holds in at least 4 of 5 runs, a throttled one drifts in at least
4 of 5.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench_support import free_port

from vibey_gh.composition import build_environment
from vibey_gh.config import LocalModels, SimulatedModel
from vibey_gh.interfaces.durations import format_duration
from vibey_gh.slots.corpus.corpus import build_demo_corpus
from vibey_gh.slots.judging.readings.drift import DRIFTED, HOLDS
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest
from vibey_gh.slots.soak.record import SoakOutcome
from vibey_gh.slots.soak.request import SoakRequest
from vibey_gh.slots.soak.soak import run_soak
from vibey_gh.state import StateLayout

DEMO_WINDOW = 4096


class Quiet:
    def message(self, text: str) -> None:
        return


def one_soak(args: argparse.Namespace, seed: int, throttled: bool) -> tuple[SoakOutcome, float]:
    model = SimulatedModel(
        knee=args.knee,
        noise=args.noise,
        seed=seed,
        tokens_per_second=args.tokens_per_second,
        throttle_after_s=args.throttle_after if throttled else None,
        throttle_factor=args.throttle_factor,
    )
    config = LocalModels(
        runner="simulated", calibration_port=free_port(), window=DEMO_WINDOW, simulated=model
    )
    state = Path(tempfile.mkdtemp(prefix="soak-bench-"))
    try:
        env = build_environment(config, StateLayout(state))
        corpus = build_demo_corpus(window=DEMO_WINDOW)
        calibration = CalibrationRequest(config, corpus, DEMO_WINDOW, args.max_tokens)
        request = SoakRequest(calibration, args.duration, args.slots, force=True)
        started = time.monotonic()
        outcome = run_soak(request, env, Quiet(), bounds_source=lambda: config)
        return outcome, time.monotonic() - started
    finally:
        shutil.rmtree(state, ignore_errors=True)


def describe(outcome: SoakOutcome) -> str:
    ratio = outcome.judgement.get("last_over_first") or {}
    trend = outcome.judgement.get("trend_per_hour") or {}
    said = (
        f"last/first {ratio.get('value', 0):.2f} ({ratio.get('low', 0):.2f}–"
        f"{ratio.get('high', 0):.2f})"
        if ratio
        else "no ratio"
    )
    if trend.get("low") is not None:
        said += f", trend {trend['slope']:+.1f}/h ({trend['low']:+.1f}…{trend['high']:+.1f})"
    return f"{outcome.verdict:<13} {said}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--duration", type=float, default=120.0, help="seconds per soak")
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--knee", type=int, default=4)
    parser.add_argument("--noise", type=float, default=0.05)
    parser.add_argument("--tokens-per-second", type=float, default=1000.0)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--throttle-after", type=float, default=None,
                        help="busy seconds (default: a third of the duration)")  # fmt: skip
    parser.add_argument("--throttle-factor", type=float, default=0.6)
    args = parser.parse_args()
    if args.throttle_after is None:
        args.throttle_after = args.duration / 3
    print(
        f"soaks of {format_duration(args.duration)} at N={args.slots}, simulated knee "
        f"{args.knee}, noise {args.noise:g}, {args.tokens_per_second:g} tokens/s, max_tokens "
        f"{args.max_tokens}; throttled: ×{args.throttle_factor:g} after "
        f"{args.throttle_after:g} busy s",
        flush=True,
    )
    tally = {False: 0, True: 0}
    for throttled in (False, True):
        kind = "throttled" if throttled else "steady"
        for seed in range(args.runs):
            outcome, took = one_soak(args, seed, throttled)
            wanted = DRIFTED if throttled else HOLDS
            tally[throttled] += outcome.verdict == wanted
            print(f"{kind:<9} seed {seed}: {describe(outcome)}  [{took:.0f} s]", flush=True)
    print(f"steady soaks that held:       {tally[False]} of {args.runs} (target ≥ 4 of 5)")
    print(f"throttled soaks found drifted: {tally[True]} of {args.runs} (target ≥ 4 of 5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
