"""Do the printed time estimates hold? Each step's estimate and the sweep's time left, against
the times the sweep really took, on the simulated runner.

A whole `slots calibrate --demo` sweep (N = 1, 1, 2, 3, 4, the demo corpus), with the progress
lines the CLI prints; for every step the estimate printed when it started is compared with its
real duration, and the time left printed at its start with the time the sweep really had left.
The target: after step 1 (once a step has been measured), every step's estimate within ±25%
of its real time. The ranges are what the step's rule allows, so they must simply hold: each
step's real time inside the range printed beside its estimate, and the sweep's real time left
inside its printed range, with no tolerance. The time left is the steps' own; writing the
evidence and its report after the last one is printed apart.

    python bench/estimates.py                                   # the demo's own step lengths
    python bench/estimates.py --min-step-seconds 2 --tokens-per-second 60   # a pass holds
    python bench/estimates.py --min-step-seconds 2 --tokens-per-second 60 --knee 1  # saturated
    python bench/estimates.py --min-step-seconds 4 --max-step-seconds 20 --latency-factor 1.5
    python bench/estimates.py --interleave-seconds 1    # steps above one slot in blocks

The first is window-bound (each step measures its 20 s; one pass takes a few seconds), the
others pass-bound (a pass over the corpus takes longer than the window), as the embedded demo
on two CPU cores is: at knee 4 a pass at 2 slots takes half as long as at one, at knee 1 as
long (a saturated runner). With `--latency-factor` the one-slot runs before the steps are
measured on until they are the reference the factor is judged against (`REFERENCE_REPEATS`).
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
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.corpus.corpus import DEMO_WINDOW, build_demo_corpus
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest
from vibey_gh.slots.measurement.progress_lines import LineProgress
from vibey_gh.state import StateLayout

TOLERANCE = 0.25


class Watched(LineProgress):
    """The CLI's plain progress, keeping what each step's start estimated and what it took."""

    def __init__(self) -> None:
        super().__init__(lambda text: print("   " + text, flush=True), every_s=3600.0)
        self.started_at: list[float] = []
        self.estimated: list[tuple[float, float, float] | None] = []
        self.left: list[tuple[float, float] | None] = []
        self.took: list[float] = []

    def step_started(self, index: int, slots: int, attempt: int, turns: int) -> None:
        super().step_started(index, slots, attempt, turns)
        estimate = self.step_estimate(slots)
        self.started_at.append(self._step_started)
        self.estimated.append(
            None if estimate is None else (estimate.likely, estimate.low, estimate.high)
        )
        self.left.append(self.time_left())

    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        self.took.append(self._clock() - self._step_started)
        super().step_finished(step, verdict_label)


def run(args: argparse.Namespace) -> Watched:
    folder = Path(tempfile.mkdtemp(prefix="vibey-estimates-"))
    try:
        config = LocalModels(
            concurrent_runs="measured",
            runner="simulated",
            window=DEMO_WINDOW,
            calibration_port=free_port(),
            production_url=f"http://127.0.0.1:{free_port()}",
            min_step_seconds=args.min_step_seconds,
            max_step_seconds=args.max_step_seconds or None,  # 0: the config's derived cap
            simulated=SimulatedModel(
                knee=args.knee, seed=args.seed, tokens_per_second=args.tokens_per_second
            ),
            bounds=Bounds(latency_factor=args.latency_factor),
            interleave_seconds=args.interleave_seconds,
        )
        request = CalibrationRequest(
            config=config,
            corpus=build_demo_corpus(window=DEMO_WINDOW),
            window=DEMO_WINDOW,
            max_tokens=args.max_tokens,
            max_slots=args.max_slots,
        )
        progress = Watched()
        run_calibration(
            request,
            build_environment(config, StateLayout(folder / "state")),
            progress,
            bounds_source=lambda: config,
        )
        return progress
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-step-seconds", type=float, default=20.0)
    parser.add_argument(
        "--max-step-seconds", type=float, default=60.0, help="0: unset, the cap the config derives"
    )
    parser.add_argument("--tokens-per-second", type=float, default=400.0)
    parser.add_argument("--knee", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--max-slots", type=int, default=4)
    parser.add_argument("--latency-factor", type=float, default=None)
    parser.add_argument(
        "--interleave-seconds",
        type=float,
        default=None,
        help="steps above one slot serve blocks this long (the product's interleave_seconds)",
    )
    args = parser.parse_args()
    print(
        f"simulated runner (knee {args.knee}, {args.tokens_per_second:g} tokens/s), demo "
        f"corpus, steps {args.min_step_seconds:g}–"
        f"{f'{args.max_step_seconds:g} s' if args.max_step_seconds else 'the derived cap'}"
        + (f", latency_factor {args.latency_factor:g}" if args.latency_factor else "")
        + (f", blocks of {args.interleave_seconds:g} s" if args.interleave_seconds else ""),
        flush=True,
    )
    watched = run(args)
    # the time left is the steps': the evidence and the report written after them are not
    ended = watched.started_at[-1] + watched.took[-1]
    closing = time.monotonic() - ended
    print("")
    print(
        "step  estimated (range)      took    error  in range | time left printed   real    inside"
    )
    errors: list[float] = []
    in_range: list[bool] = []
    lefts: list[bool] = []
    for index, took in enumerate(watched.took):
        estimate = watched.estimated[index]
        real_left = ended - watched.started_at[index]
        left = watched.left[index]
        shown = (
            "—" if estimate is None else f"{estimate[0]:6.1f} ({estimate[1]:.0f}–{estimate[2]:.0f})"
        )
        error = None if estimate is None else estimate[0] / took - 1.0
        ranged = None if estimate is None else (estimate[1] <= took <= estimate[2])
        if ranged is not None and index >= 1:
            in_range.append(ranged)
        inside = None
        if left is not None:
            low, high = left
            inside = low <= real_left <= high
        if index >= 1 and error is not None:
            errors.append(error)
        if index >= 1 and inside is not None:
            lefts.append(inside)
        left_text = "—" if left is None else f"{left[0]:6.0f}–{left[1]:<6.0f}"
        print(
            f"{index:>4}  {shown:<20} {took:6.1f}  "
            f"{'—' if error is None else f'{error:+6.0%}':>6}  "
            f"{'—' if ranged is None else ('yes' if ranged else 'no'):>8} | {left_text:<17} "
            f"{real_left:6.0f}  {'—' if inside is None else ('yes' if inside else 'NO')}"
        )
    worst = max(errors, key=abs, default=0.0)
    met = abs(worst) <= TOLERANCE
    print(f"after the last step, the evidence and its report took {closing:.0f} s more")
    print(
        f"after step 1, inside the printed range: each step's real time in {sum(in_range)} of "
        f"{len(in_range)}, the sweep's real time left in {sum(lefts)} of {len(lefts)}"
    )
    print(
        f"after step 1: worst step estimate {worst:+.0%} off (target ±{TOLERANCE:.0%}): "
        f"{'met' if met else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
