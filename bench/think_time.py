"""Does the answer follow queueing theory once runs spend time in their tools?

A closed system of N lanes, each alternating a model turn (service time S on a runner whose
capacity stops growing at `knee` K, shared by processor sharing) and a tool time T, serves
X(N) turns per second. That network has a product form (an infinite-server station for the
tools, a load-dependent processor-sharing station for the runner), so X(N) = G(N−1) / G(N)
with G(n) = Σ_k S^k / Π_{j≤k} min(j, K) · T^(n−k) / (n−k)!, insensitive to how service and
tool times are spread around their means. Throughput grows until about K·(S+T)/S lanes.

This benchmark calibrates whole runs on the simulated runner (a processor-sharing capacity
curve behind the llama-server API) with `--think-time none`, then with a fixed think time of
one-slot mean turn latency (measured first, as an operator would read it), then of three
times it, for several seeds each, and prints the
predicted and the measured curves side by side (in turns per S) and the ideal N each
calibration chose. The targets: none → the knee; ≈ one turn → about twice the knee (knee 1 →
2 or 3, knee 2 → 4 to 6, knee 4 → 7 to 9); at knee 2, ≈ three turns → at least 7; each in at
least 9 of 10 seeds.

    python bench/think_time.py                       # knee 2, noise 0.2, 5 seeds
    python bench/think_time.py --seeds 2 --scenarios none,1
    python bench/think_time.py --scenarios 3 --seeds 1 --first-seed 4   # one seed of a row
    python bench/think_time.py --knee 4 --scenarios 1 --max-slots 10     # the law at knee 4

S in the prediction is the runner's own service time (the simulated model's work per turn,
its mean over the corpus); what the client adds around a turn (HTTP, parsing) is time outside
the runner, so it counts with the think time.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench_support import SilentProgress, free_port, runner_seconds

from vibey_gh.composition import build_environment
from vibey_gh.config import LocalModels, SimulatedModel
from vibey_gh.interfaces.think import ThinkAsked
from vibey_gh.runners.simulated.model import answer_for, prompt_tokens, work_seconds
from vibey_gh.slots.corpus.corpus import Corpus, build_corpus
from vibey_gh.slots.corpus.pool import PoolSources, build_pool
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.judging.judge import judge_sweep
from vibey_gh.slots.judging.metrics import step_metrics
from vibey_gh.slots.judging.records import StepRecord
from vibey_gh.slots.judging.statistics.closed_system import lanes_throughput
from vibey_gh.slots.judging.statistics.run_rate import run_cycles, run_rate
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest
from vibey_gh.state import StateLayout

WINDOW = 1024
TURNS_PER_RUN = 2
# the ideal N each think time should give (low, high; 99: no upper end), by the runner's knee:
# none → the knee; about one turn latency → about twice it (issue targets, every knee); three
# turn latencies → at least 7 (knee 2 only)
TARGETS = {
    ("none", 1): (1, 1),
    ("none", 2): (2, 2),
    ("none", 4): (4, 4),
    ("1", 1): (2, 3),
    ("1", 2): (4, 6),
    ("1", 4): (7, 9),
    ("3", 2): (7, 99),
}


class StepLines(SilentProgress):
    """Progress: one line per finished step."""

    def __init__(self, label: str) -> None:
        self.label = label

    def step_finished(self, step: StepRecord, verdict_label: str) -> None:
        metrics = step_metrics(step)
        low, high = metrics.interval(0.95)
        why = (step.measurement or {}).get("why_ended")
        print(
            f"    {self.label} step {step.index} N={step.slots}: {metrics.rate:,.0f} "
            f"{metrics.decided_by} ({low:,.0f}–{high:,.0f}, {metrics.throughput.batches} "
            f"batches) in {metrics.duration_s:.1f} s ({why}), {verdict_label}",
            flush=True,
        )


def short_runs(folder: Path) -> Corpus:
    """Twelve runs of two short turns, replayed whole: a run is two model turns."""
    lines = []
    for run in range(12):
        messages = [
            {"role": "user", "content": f"Task {run}: say which file to read."},
            {"role": "assistant", "content": "Reading it."},
            {"role": "user", "content": "Here it is. Now answer."},
            {"role": "assistant", "content": "Done."},
        ]
        lines.append(json.dumps({"id": f"run-{run:02d}", "messages": messages}))
    path = folder / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pool = build_pool(PoolSources(from_transcripts=[path]))
    return build_corpus(pool, window=WINDOW, segments_per_stratum=12, shape="runs")


def service_seconds(corpus: Corpus, model: SimulatedModel, max_tokens: int) -> float:
    """The runner's mean work per turn alone (S): the simulated model's, noise included."""
    works = []
    for turn in corpus.turns():
        tools = turn.tools or None
        answer = answer_for(turn.messages, tools, max_tokens, loaded=False, noise=model.noise)
        works.append(
            work_seconds(
                prompt_tokens(turn.messages, tools),
                answer.output_tokens,
                tokens_per_second=model.tokens_per_second,
                noise_z=0.0,
                noise=0.0,
            )
        )
    # the mean of exp(noise · z) for a standard normal z
    return sum(works) / len(works) * math.exp(model.noise**2 / 2.0)


def predicted(slots: int, knee: int, service: float, think: float) -> float:
    """Turns per second of the closed product-form network (see the module docstring): the
    product's own model (`lanes_throughput`, in turns per service time), so the benchmark
    checks the sweep's planner against the law it plans by."""
    return lanes_throughput(slots, knee, think / service) / service


def response_time_law(step: StepRecord) -> float | None:
    """Runs per hour the interactive response-time law gives a step: N / (R + Z), with R + Z
    each worker's mean cycle (a run's latency and the waits before its turns), measured
    apart from the estimator; None without a window."""
    rate = run_rate(step.turns, step.slots)
    if rate is None:
        return None
    start, end = rate.window
    cycles = [c for own in run_cycles(step.turns).values() for c in own if start < c.end <= end]
    if not cycles:
        return None
    return step.slots * 3600.0 / (sum(c.end - c.start for c in cycles) / len(cycles))


def calibrate_once(
    args: argparse.Namespace, corpus: Corpus, seed: int, think: float | None, label: str
) -> tuple[int | None, dict[int, float], dict[int, float], float, float]:
    """(ideal N, runs/h per N, the response-time law's runs/h per N, one-slot mean turn
    latency, runner seconds) of one sweep."""
    folder = Path(tempfile.mkdtemp(prefix="vibey-think-"))
    try:
        config = LocalModels(
            concurrent_runs="measured",
            runner="simulated",
            window=WINDOW,
            calibration_port=free_port(),
            production_url=f"http://127.0.0.1:{free_port()}",
            min_step_seconds=args.min_step_seconds,
            max_step_seconds=args.max_step_seconds,
            simulated=SimulatedModel(
                knee=args.knee,
                noise=args.noise,
                seed=seed,
                tokens_per_second=args.tokens_per_second,
            ),
            think=ThinkAsked.parse("none" if think is None else think, 60.0),
        )
        request = CalibrationRequest(
            config=config,
            corpus=corpus,
            window=WINDOW,
            max_tokens=args.max_tokens,
            max_slots=args.max_slots,
        )
        layout = StateLayout(folder / "state")
        outcome = run_calibration(
            request,
            build_environment(config, layout),
            StepLines(label),
            bounds_source=lambda: config,
        )
        steps = load_evidence(outcome.evidence).steps if outcome.evidence else ()
        judgement = judge_sweep(steps, config.bounds)
        by_slots: dict[int, float] = {}
        by_law: dict[int, float] = {}
        for step, verdict in zip(steps, judgement.verdicts, strict=True):
            if verdict.slots > 1 or verdict.slots not in by_slots:
                by_slots[verdict.slots] = verdict.metrics.rate
                law = response_time_law(step)
                if law is not None:
                    by_law[verdict.slots] = law
        one_slot = [
            t.result.latency_s for s in steps if s.slots == 1 for t in s.turns if t.result.served
        ]
        latency = sum(one_slot) / len(one_slot) if one_slot else float("nan")
        return outcome.ideal, by_slots, by_law, latency, runner_seconds(list(steps))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument(
        "--first-seed", type=int, default=0, help="seeds first-seed … first-seed + seeds − 1"
    )
    parser.add_argument("--knee", type=int, default=2)
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--tokens-per-second", type=float, default=120.0)
    parser.add_argument("--max-tokens", type=int, default=12)
    parser.add_argument("--min-step-seconds", type=float, default=6.0)
    parser.add_argument("--max-step-seconds", type=float, default=40.0)
    parser.add_argument("--max-slots", type=int, default=9)
    parser.add_argument(
        "--scenarios",
        default="none,1,3",
        help="think times: none, or multiples of the one-slot mean turn latency",
    )
    args = parser.parse_args()
    corpus = short_runs(Path(tempfile.mkdtemp(prefix="vibey-think-corpus-")))
    model = SimulatedModel(args.knee, args.noise, 0, args.tokens_per_second)
    service = service_seconds(corpus, model, args.max_tokens)
    print(
        f"{args.seeds} seeds, simulated runner (knee {args.knee}, noise {args.noise:g}, "
        f"{args.tokens_per_second:g} tokens/s, {args.max_tokens} output tokens), whole runs of "
        f"{TURNS_PER_RUN} turns, steps {args.min_step_seconds:g}–{args.max_step_seconds:g} s, "
        f"N up to {args.max_slots}; runner service time S = {service * 1000:.1f} ms",
        flush=True,
    )
    started = time.monotonic()
    latency: float | None = None
    summary: list[str] = []
    for scenario in args.scenarios.split(","):
        if scenario != "none" and latency is None:
            # the one-slot mean turn latency, measured once without think time
            one_slot_only = argparse.Namespace(**{**vars(args), "max_slots": 1})
            _, _, _, latency, _ = calibrate_once(one_slot_only, corpus, 0, None, "latency")
            print(f"one-slot mean turn latency: {latency * 1000:.1f} ms", flush=True)
        think = None if scenario == "none" else float(scenario) * (latency or 0.0)
        label = "think none" if think is None else f"think {scenario}× latency"
        print(f"\n{label}: {0 if think is None else think * 1000:.1f} ms before each turn")
        ideals: list[int | None] = []
        curves: list[dict[int, float]] = []
        laws: list[dict[int, float]] = []
        seconds: list[float] = []
        one_slot: list[float] = []
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            ideal, by_slots, by_law, measured_latency, runner_time = calibrate_once(
                args, corpus, seed, think, f"{label} seed {seed}"
            )
            ideals.append(ideal)
            curves.append(by_slots)
            laws.append(by_law)
            seconds.append(runner_time)
            one_slot.append(measured_latency)
            print(
                f"  seed {seed}: ideal N = {ideal}, runner time {runner_time:.0f} s, {label}",
                flush=True,
            )
        # what the client adds around a turn is time outside the runner: it waits with the tools
        overhead = max(0.0, sum(one_slot) / len(one_slot) - service)
        outside = (think or 0.0) + overhead
        knee_at = args.knee * (service + outside) / service
        print(
            f"  predicted knee K·(S+T)/S = {knee_at:.1f} (T = think + {overhead * 1000:.1f} ms "
            "the client adds around a turn)"
        )
        print(
            "   N  predicted turns/S  N/(R+Z) turns/S  measured turns/S: mean (min–max over seeds)"
        )
        for slots in sorted({n for curve in curves for n in curve}):
            values = [c[slots] * TURNS_PER_RUN * service / 3600.0 for c in curves if slots in c]
            law = [c[slots] * TURNS_PER_RUN * service / 3600.0 for c in laws if slots in c]
            mean = sum(values) / len(values)
            law_mean = f"{sum(law) / len(law):.2f}" if law else "—"
            print(
                f"  {slots:>2}  {predicted(slots, args.knee, service, outside) * service:>17.2f}"
                f"  {law_mean:>15}  {mean:.2f} ({min(values):.2f}–{max(values):.2f}), "
                f"{len(values)} seeds"
            )
        low, high = TARGETS.get((scenario, args.knee), (1, 99))
        hits = sum(1 for n in ideals if n is not None and low <= n <= high)
        counts = Counter(ideals)
        chosen = ", ".join(f"N={n}: {c}" for n, c in sorted(counts.items(), key=str))
        target = f"{low}" if low == high else (f"{low}–{high}" if high < 99 else f"≥{low}")
        line = (
            f"{label}: ideal {chosen} — target {target} in {hits}/{args.seeds} seeds; "
            f"runner time per calibration {sum(seconds) / len(seconds):.0f} s"
        )
        summary.append(line)
        print("  " + line, flush=True)
    print("\nsummary:")
    for line in summary:
        print("  " + line)
    print(f"wall {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
