"""Whole sweeps over corpora of whole runs with think time, in virtual time, decided by the
product's own rules (`paired_sweeps.py`'s discrete-event simulation of the simulated runner's
capacity model, each worker waiting a turn's think time before sending it).

Two corpora:

- `short`: `think_time.py`'s twelve runs of two short turns, every turn waiting a fixed think
  time of `--think` times the one-slot mean turn latency (the simulated model's mean work per
  turn, as that benchmark measures it first). The think-time law: the answer is about
  knee × (S + T) / S — with T ≈ one turn latency, knee 1 → 2 or 3, knee 2 → 4 to 6, knee 4 → 7
  to 9 (`think_time.py` drives the real simulated runner in real time for the same law).
- `traces`: a runs corpus drawn from the public agent traces (`--traces`, the kv-cache-tester
  format) as `slots corpus --from-traces` draws it (fit scale, `--window`), replayed with
  each turn's recorded think time cut at `--think-cap` (60 s, the default); the steps take
  the default caps (60–300 s). Before the first step the product's own check is asked
  whether every run fits a step.

    PYTHONPATH=src python bench/runs_sweeps.py --corpus short --knee 4 --seeds 10
    PYTHONPATH=src python bench/runs_sweeps.py --corpus traces --knee 2 --seeds 10
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from collections import Counter
from pathlib import Path

from paired_sweeps import (
    add_interleave_argument,
    add_wander_arguments,
    check_interleave,
    check_wander,
    interleave_said,
    run_sweep,
    spread,
    step_said,
    wander_said,
)
from think_time import TARGETS, short_runs
from virtual_runner import Model, corpus_turns, work_of

from vibey_gh.config import LocalModels
from vibey_gh.errors import BadInput
from vibey_gh.interfaces.think import ThinkAsked, ThinkPolicy
from vibey_gh.slots.corpus.corpus import Corpus, build_corpus
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.slots.measurement.calibration_method import check_turns_fit_a_step
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest

TRACES = Path("/work/shared/data/agent-traces")


def trace_corpus(folder: Path, window: int, max_tokens: int) -> Corpus:
    files = sorted(folder.glob("*.json"))
    pool = build_pool(
        PoolSources(from_traces=files, fit="scale"), window=window, answer_cap=max_tokens
    )
    return build_corpus(pool, window=window, shape="runs", answer_cap=max_tokens)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=("short", "traces"), default="short")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--knee", type=int, default=2)
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--tokens-per-second", type=float, default=None)
    parser.add_argument("--max-tokens", type=int, default=None)
    parser.add_argument("--cache-speedup", type=float, default=2.0)
    parser.add_argument("--drift", type=float, default=0.0)
    add_wander_arguments(parser)
    add_interleave_argument(parser)  # as the product, not where the think policy waits
    parser.add_argument("--think", type=float, default=1.0, help="short: × the turn latency")
    parser.add_argument("--think-cap", type=float, default=60.0)
    parser.add_argument("--traces", type=Path, default=TRACES)
    parser.add_argument("--window", type=int, default=4096)
    parser.add_argument("--min-step-seconds", type=float, default=None)
    parser.add_argument("--max-step-seconds", type=float, default=None)
    parser.add_argument("--max-slots", type=int, default=None)
    args = parser.parse_args()
    check_wander(parser, args)
    check_interleave(parser, args)
    short = args.corpus == "short"
    # the short runs as think_time.py serves them (steps 6–40 s); traces at the defaults
    tokens = args.tokens_per_second or (120.0 if short else 300.0)
    args.max_tokens = args.max_tokens or (12 if short else 256)
    args.min_step_seconds = args.min_step_seconds or (6.0 if short else 60.0)
    args.max_step_seconds = args.max_step_seconds or (40.0 if short else 300.0)
    args.max_slots = args.max_slots or (10 if short else 16)
    model = Model(
        args.knee, args.noise, tokens, 1.0, args.cache_speedup, args.drift,
        wander=args.wander, wander_seconds=args.wander_seconds,
    )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="vibey-runs-") as folder:
        corpus = short_runs(Path(folder)) if short else trace_corpus(
            args.traces, args.window, args.max_tokens
        )  # fmt: skip
    plain = corpus_turns(corpus, max_tokens=args.max_tokens)
    works = [work_of(t, model, 0.0) for s in plain for t in s]
    service = statistics.fmean(works)
    if short:
        policy = ThinkPolicy("fixed", args.think * service, args.think_cap)
    else:
        policy = ThinkAsked().with_cap(args.think_cap).for_corpus(t.think_s for t in corpus.turns())
    segments = corpus_turns(corpus, policy.seconds_before, args.max_tokens)
    waits = [sum(t.think for t in s) for s in segments]
    print(
        f"{args.corpus}: {len(segments)} runs, {sum(map(len, segments))} turns; mean work per "
        f"turn S = {service:.3g} s (alone, no noise); waits per run {spread(waits)} s; "
        f"think {policy.mode} (cap {policy.cap_s:g} s); knee {args.knee}, noise {args.noise:g}, "
        f"{tokens:g} tokens/s, cache_speedup {args.cache_speedup:g}, drift {args.drift:+g}; "
        f"{wander_said(model)}{interleave_said(args)}"
        f"steps {args.min_step_seconds:g}–{args.max_step_seconds:g} s, N up to {args.max_slots}",
        flush=True,
    )
    config = LocalModels(
        runner="simulated",
        min_step_seconds=args.min_step_seconds,
        max_step_seconds=args.max_step_seconds,
        think=ThinkAsked(cap_s=args.think_cap),
    )
    request = CalibrationRequest(
        config=config, corpus=corpus, window=args.window, max_tokens=args.max_tokens
    )
    try:
        check_turns_fit_a_step(request, policy)
    except BadInput as refused:
        print(f"refused before the first step: {refused}")
        return
    scenario = "1" if short and args.think == 1.0 else "none" if short and not args.think else ""
    low, high = TARGETS.get((scenario, args.knee), (1, 99))
    answers: list[int] = []
    runner, decided = [], 0
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        judgement, runner_s, steps = run_sweep(seed, model, corpus, segments, args)
        answers.append(judgement.ideal)
        runner.append(runner_s)
        noisy = judgement.ideal == 1 and "too noisy" in judgement.reason
        decided += not noisy
        asked = " ".join(step_said(s) for s in steps)
        said = ", too noisy to decide" if noisy else ""
        print(
            f"  seed {seed}: ideal {judgement.ideal}{said}; steps {asked}; runner {runner_s:.0f} s"
        )
    chosen = ", ".join(f"N={n}: {c}" for n, c in sorted(Counter(answers).items()))
    hits = sum(low <= n <= high for n in answers)
    print(f"ideal {chosen}; target {low}–{high} in {hits} of {args.seeds}; decided in {decided}")
    print(f"runner time to a decision (s): {spread(runner)}")


if __name__ == "__main__":
    main()
