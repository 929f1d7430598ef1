"""Does a latency bound move the answer where the capacity model says? Seeded calibrations of a
sublinear simulated runner, each judged without and with `latency_factor`.

The runner's N turns in flight share min(N, knee)^scaling of one slot's speed. With scaling
0.5 and a knee far away, N slots serve √N times one slot's turns per hour (+41% at two, +22%
more at three, +15% more at four) while each turn takes √N times as long: 1.41×, 1.73×, 2×.
So `latency_factor = 1.5` should allow N = 2 and refuse N = 3, while without the bound the
answer is wherever the throughput gains stop paying (higher).

Each run is a whole `slots calibrate` sweep (streamed turns) in a state dir of its own, with
the noise seed set to the run's number; its evidence is judged twice, with today's default
bounds and with the latency bound added (re-judged from the evidence, as `slots allowed`
does when a bound changes). Printed per run: both answers and, per N, the predicted and
measured p95 turn latency and p50 TTFT and ITL, each as a multiple of one slot's.

    python bench/latency_bound.py                       # 5 seeds, scaling 0.5, knee 32
    python bench/latency_bound.py --runs 3 --factor 1.8 --corpus demo --max-tokens 64

The default corpus is the micro one (four short turns of similar depth) with answers capped at
16 tokens, so turns differ by the runner's noise rather than by their length: a p95 is then
pinned down by a few hundred turns. (On the demo corpus a p95 sits among a handful of its
longest prompts, and its interval spans them.)
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench_support import MICRO_WINDOW, SilentProgress, free_port, micro_corpus, runner_seconds
from msgspec.structs import replace

from vibey_gh.composition import build_environment
from vibey_gh.config import LocalModels, SimulatedModel
from vibey_gh.slots.corpus.corpus import DEMO_WINDOW, Corpus, build_demo_corpus
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.judging.judge import SweepJudgement, judge_sweep
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest
from vibey_gh.state import StateLayout


class Quiet(SilentProgress):
    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        print(f"    step {step.index} N={step.slots}: {len(step.turns)} turns, {verdict_label}")


def predicted_latency(slots: int, knee: int, scaling: float) -> float:
    """Each turn's latency at N over one slot's: N turns share min(N, knee)^scaling."""
    return slots / min(slots, knee) ** scaling


def _ratio(value: float | None, base: float | None) -> str:
    return f"{value / base:5.2f}×" if value and base else "   — "


def latency_table(judgement: SweepJudgement, knee: int, scaling: float) -> list[str]:
    ones = [v for v in judgement.verdicts if v.slots == 1 and v.latency and v.latency.latency]
    base = min(ones, key=lambda v: v.latency.latency.value() or 0.0)  # type: ignore[union-attr]
    assert base.latency is not None and base.latency.latency is not None
    b = base.latency
    rows = ["     N  predicted  p95 turn  p50 TTFT  p50 ITL   p95 turn (s)    gain  verdict"]
    seen: set[int] = set()
    for verdict in judgement.verdicts:
        figures = verdict.latency
        if figures is None or figures.latency is None or verdict.slots in seen:
            continue
        seen.add(verdict.slots)
        p95 = figures.latency.value()
        rows.append(
            f"  {verdict.slots:4d}  {predicted_latency(verdict.slots, knee, scaling):8.2f}×  "
            f"{_ratio(p95, b.latency.value() if b.latency else None):>8}  "
            f"{_ratio(figures.ttft_p50_s, b.ttft_p50_s):>8}  "
            f"{_ratio(figures.tpot_p50_s, b.tpot_p50_s):>7}   {p95 or 0.0:11.3f}  "
            f"{'' if verdict.gain is None else format(verdict.gain, '+6.0%'):>6}  {verdict.label}"
        )
    return rows


def one_run(
    seed: int, args: argparse.Namespace, corpus: Corpus, window: int
) -> tuple[int, int, float]:
    folder = Path(tempfile.mkdtemp(prefix="vibey-latency-"))
    try:
        config = LocalModels(
            concurrent_runs="measured",
            runner="simulated",
            window=window,
            calibration_port=free_port(),
            production_url=f"http://127.0.0.1:{free_port()}",
            min_step_seconds=args.min_step_seconds,
            simulated=SimulatedModel(
                knee=args.knee,
                noise=args.noise,
                seed=seed,
                tokens_per_second=args.tokens_per_second,
                scaling=args.scaling,
            ),
        )
        request = CalibrationRequest(
            config=config,
            corpus=corpus,
            window=window,
            max_tokens=args.max_tokens,
            max_slots=args.max_slots,
        )
        outcome = run_calibration(
            request,
            build_environment(config, StateLayout(folder / "state")),
            Quiet(),
            bounds_source=lambda: config,
        )
        steps = load_evidence(outcome.evidence).steps if outcome.evidence else ()
        free = judge_sweep(steps, config.bounds)
        bounded = judge_sweep(steps, replace(config.bounds, latency_factor=args.factor))
        for line in latency_table(free, args.knee, args.scaling):
            print(line)
        print(f"  without the bound: N = {free.ideal} — {free.reason}")
        print(f"  latency_factor {args.factor:g}: N = {bounded.ideal} — {bounded.reason}")
        return free.ideal, bounded.ideal, runner_seconds(list(steps))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--knee", type=int, default=32)
    parser.add_argument("--scaling", type=float, default=0.5)
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--factor", type=float, default=1.5)
    parser.add_argument("--tokens-per-second", type=float, default=100.0)
    parser.add_argument("--min-step-seconds", type=float, default=15.0)
    parser.add_argument("--max-slots", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--corpus", choices=("micro", "demo"), default="micro")
    args = parser.parse_args()
    if args.corpus == "micro":
        corpus, _ = micro_corpus(Path(tempfile.mkdtemp(prefix="vibey-latency-corpus-")))
        window = MICRO_WINDOW
    else:
        corpus, window = build_demo_corpus(window=DEMO_WINDOW), DEMO_WINDOW
    print(
        f"{args.runs} calibrations, simulated runner (knee {args.knee}, scaling "
        f"{args.scaling:g}, noise {args.noise:g}, {args.tokens_per_second:g} tokens/s, "
        f"{args.corpus} corpus, {args.max_tokens} output tokens), "
        f"judged without and with latency_factor = {args.factor:g}",
        flush=True,
    )
    started = time.monotonic()
    free_answers, bounded_answers = [], []
    for seed in range(args.first_seed, args.first_seed + args.runs):
        print(f"run {seed} (seed {seed}):", flush=True)
        free, bounded, seconds = one_run(seed, args, corpus, window)
        free_answers.append(free)
        bounded_answers.append(bounded)
        print(f"  runner time {seconds:.0f} s", flush=True)
    print("")
    for name, answers in (("without the bound", free_answers), ("with it", bounded_answers)):
        counts = sorted(Counter(answers).items())
        print(f"ideal N {name}: " + ", ".join(f"N={n}: {c}/{args.runs}" for n, c in counts))
    print(f"wall {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
