"""The tool's own CPU time during a sweep, as a share of the runner's (design §9: <= 2%).

Runs one calibration in this process, through the same library call the CLI makes, on the
embedded runner, and reads getrusage around it: RUSAGE_SELF is the tool (replay workers, the
1 Hz sampler, the log scanner, checkpoints, evidence and report), RUSAGE_CHILDREN the
calibration runners (each one is waited for when its step stops, so all its CPU is counted).
The interpreter's start and imports are not part of the sweep and are left out.

    python bench/bench_harness_cpu.py [--corpus demo|micro] [--slots 1,1,2] [--max-tokens 128]

`demo` is the shipped demo corpus (window 4096), what `slots calibrate --demo` replays.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from bench_support import MICRO_WINDOW, CpuClock, StepPrinter, free_port, micro_corpus

from vibey_gh.composition import build_environment
from vibey_gh.config import LocalModels
from vibey_gh.slots.corpus.corpus import DEMO_WINDOW, build_demo_corpus
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest
from vibey_gh.state import StateLayout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=["demo", "micro"], default="demo")
    parser.add_argument("--slots", default="1,1,2")
    parser.add_argument("--max-tokens", type=int, default=128)
    args = parser.parse_args()
    slots = tuple(int(n) for n in args.slots.split(","))

    with tempfile.TemporaryDirectory(prefix="bench-harness-") as temp:
        folder = Path(temp)
        if args.corpus == "demo":
            corpus, window = build_demo_corpus(window=DEMO_WINDOW), DEMO_WINDOW
        else:
            corpus, window = micro_corpus(folder)[0], MICRO_WINDOW
        config = LocalModels(
            concurrent_runs="measured",
            runner="embedded",
            window=window,
            calibration_port=free_port(),
            production_url=f"http://127.0.0.1:{free_port()}",
        )
        layout = StateLayout(folder / "state")
        env = build_environment(config, layout)
        request = CalibrationRequest(
            config=config, corpus=corpus, window=window, max_tokens=args.max_tokens, slots=slots
        )
        print(
            f"sweep --slots {args.slots} on the {args.corpus} corpus "
            f"({corpus.turn_count} turns a step, window {window}, {args.max_tokens} tokens)",
            file=sys.stderr,
        )
        wall_start, cpu_start = time.monotonic(), CpuClock.now()
        outcome = run_calibration(request, env, StepPrinter(), bounds_source=lambda: config)
        cpu = CpuClock.now().since(cpu_start)
        wall = time.monotonic() - wall_start
        assert outcome.evidence is not None
        steps = load_evidence(outcome.evidence).steps

    served = sum(1 for s in steps for t in s.turns if t.result.served)
    share = cpu.own / cpu.children if cpu.children else float("nan")
    print(f"steps                 {[s.slots for s in steps]}  ({served} turns served)")
    print(f"wall time             {wall:8.1f} s")
    print(f"runner CPU            {cpu.children:8.2f} s  (calibration runners, all steps)")
    print(f"tool CPU              {cpu.own:8.2f} s  (this process during the sweep)")
    print(f"tool / runner         {share:8.2%}  (target <= 2%)")
    if served:
        print(f"tool CPU per served   {cpu.own / served * 1000:8.1f} ms per turn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
