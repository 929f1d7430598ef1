"""Runner time a doomed sweep needs to reach its decision, with early verdicts and without.

The doomed sweep: N = 1, 1, 2 under a memory ceiling no step above one slot can meet
(wired_ceiling = 0.01 of this machine's memory), so the decision is "one" whatever N=2 does.
With early verdicts, the sampler sees the ceiling crossed on its first tick of N=2 and stops
that step. `slots calibrate` has no switch to turn early verdicts off, so "without" is
measured the honest way that is left: the same N=2 step replayed to the end under bounds that
never trigger (the defaults), then re-judged, as `allowed` would, under the doomed bounds.
Both runs resume the same checkpoint of the two one-slot steps, measured once.

    python bench/bench_early_verdicts.py [--corpus demo|micro] [--max-tokens 64]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from bench_support import (
    MICRO_WINDOW,
    CpuClock,
    StepPrinter,
    free_port,
    micro_corpus,
    runner_seconds,
)
from msgspec.structs import replace

from vibey_gh.composition import build_environment
from vibey_gh.config import LocalModels
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.corpus.corpus import DEMO_WINDOW, Corpus, build_demo_corpus
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.judging.judge import judge_sweep
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationOutcome, CalibrationRequest
from vibey_gh.state import StateLayout

SLOTS = (1, 1, 2)
DOOMED = Bounds(wired_ceiling=0.01)


def calibrate(
    config: LocalModels, corpus: Corpus, max_tokens: int, state: Path, max_runs: int | None
) -> tuple[CalibrationOutcome, CpuClock]:
    request = CalibrationRequest(
        config, corpus, config.window, max_tokens, slots=SLOTS, max_runs=max_runs
    )
    start = CpuClock.now()
    outcome = run_calibration(
        request, build_environment(config, StateLayout(state)), StepPrinter(), lambda: config
    )
    return outcome, CpuClock.now().since(start)


def steps_of(outcome: CalibrationOutcome) -> tuple[StepRecord, ...]:
    assert outcome.evidence is not None
    return load_evidence(outcome.evidence).steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=["demo", "micro"], default="demo")
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-early-") as temp:
        folder = Path(temp)
        if args.corpus == "demo":
            corpus, window = build_demo_corpus(window=DEMO_WINDOW), DEMO_WINDOW
        else:
            corpus, window = micro_corpus(folder)[0], MICRO_WINDOW
        config = LocalModels(
            concurrent_runs="measured",
            window=window,
            calibration_port=free_port(),
            production_url=f"http://127.0.0.1:{free_port()}",
        )
        doomed = replace(config, bounds=DOOMED)
        print(f"one-slot steps, once ({args.corpus} corpus, {corpus.turn_count} turns a step)")
        shared, shared_cpu = calibrate(config, corpus, args.max_tokens, folder / "one", 2)
        one_slot = steps_of(shared)
        for name in ("early", "full"):
            shutil.copytree(folder / "one", folder / name)

        print("N=2 with early verdicts (doomed bounds)")
        early, early_cpu = calibrate(doomed, corpus, args.max_tokens, folder / "early", None)
        print("N=2 to the end (default bounds), re-judged under the doomed bounds")
        full, full_cpu = calibrate(config, corpus, args.max_tokens, folder / "full", None)
        early_step = steps_of(early)[-1]
        full_steps = steps_of(full)
        rejudged = judge_sweep(full_steps, DOOMED)

    base_s = runner_seconds(one_slot)
    print()
    print(
        f"one-slot steps (shared)   runner up {base_s:7.1f} s, "
        f"runner CPU {shared_cpu.children:7.1f} s"
    )
    print(
        f"N=2, early verdicts       runner up {runner_seconds([early_step]):7.1f} s, "
        f"runner CPU {early_cpu.children:7.1f} s, {len(early_step.turns)} of "
        f"{early_step.corpus_turns} turns; ended early: {early_step.ended_early}"
    )
    print(
        f"N=2, to the end           runner up {runner_seconds(full_steps[-1:]):7.1f} s, "
        f"runner CPU {full_cpu.children:7.1f} s, {len(full_steps[-1].turns)} of "
        f"{full_steps[-1].corpus_turns} turns"
    )
    with_early = base_s + runner_seconds([early_step])
    without = base_s + runner_seconds(full_steps[-1:])
    print(
        f"whole sweep, runner up    {with_early:7.1f} s with early verdicts, "
        f"{without:7.1f} s without"
    )
    print(
        f"whole sweep, runner CPU   {shared_cpu.children + early_cpu.children:7.1f} s with, "
        f"{shared_cpu.children + full_cpu.children:7.1f} s without"
    )
    print(f"decision with early       ideal {early.ideal}: {early.stop_reason}")
    print(f"decision re-judged        ideal {rejudged.ideal}: N=2 {rejudged.verdicts[-1].label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
