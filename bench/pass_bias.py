"""Does a repeated pass over the corpus bend the gain a step reads? With and without pass marks.

The simulated runner with the demo corpus: knee 2 with `scaling` log2(1.3), so two slots do
exactly 1.3 times one slot's work; cached prompt tokens twice as cheap (`cache_speedup` 2) and
each slot keeping earlier prompts (`cache_tokens`), as a llama-server with its prompt cache
does; noise 0.2. Each seed measures a step at one slot and a step at two, of the same fixed
length (about 1.5 one-slot passes over the corpus, as the real demo's 60 s steps were), once
with every pass marked (the product's replay) and once without. Printed per seed: the gain
read (turns per hour in the measurement window, two slots over one), the passes each step
served, and the runner's cached share of prompt tokens in pass 1 and in the repeats.

Without marks a repeat is served from the cache the first pass left, and the faster step
serves more repeats: it reads more than 1.3. With marks a repeat costs what the first pass
cost, and the reading is 1.3 give or take the noise.

    python bench/pass_bias.py                    # 5 seeds, steps of 1.5 one-slot passes
    python bench/pass_bias.py --seeds 2 --passes 3
    python bench/pass_bias.py --noise 0 --cache-speedup 10   # the bias alone, a cheaper cache
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time
from pathlib import Path

from bench_support import free_port

from vibey_gh.config import SimulatedModel
from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerLaunch
from vibey_gh.runners.simulated.runner import SimulatedRunner
from vibey_gh.slots.corpus.corpus import Corpus, build_demo_corpus
from vibey_gh.slots.judging.metrics import measurement_window, served_ends
from vibey_gh.slots.judging.records import TurnRecord
from vibey_gh.slots.measurement.stepping.replay import replay_corpus

TRUE_GAIN = 1.3
TOKENS_PER_SECOND = 150.0
# short answers, so reading the prompt is most of a turn, as on deep agent turns
MAX_TOKENS = 16


def model(seed: int, noise: float = 0.2, cache_speedup: float = 2.0) -> SimulatedModel:
    return SimulatedModel(
        knee=2,
        scaling=math.log2(TRUE_GAIN),
        noise=noise,
        seed=seed,
        tokens_per_second=TOKENS_PER_SECOND,
        cache_speedup=cache_speedup,
        cache_tokens=1_000_000,
    )


def step(
    runner: SimulatedRunner, corpus: Corpus, slots: int, seconds: float, marked: bool, logs: Path
) -> list[TurnRecord]:
    """One step of `seconds` at `slots`, every worker closed-loop, as a calibration's step."""
    launch = RunnerLaunch(slots, corpus.window, free_port(), "simulated", logs / f"{slots}.log")
    running = runner.start(launch)
    try:
        running.wait_ready(30.0)
        began = time.monotonic()
        outcome = replay_corpus(
            running,
            corpus.segments,
            slots,
            ChatSettings(window=corpus.window, max_tokens=MAX_TOKENS),
            lambda _turns: None,
            keep_going=lambda _turns: time.monotonic() - began < seconds,
            mark_passes=marked,
        )
    finally:
        running.stop()
    return outcome.turns


def turns_per_hour(turns: list[TurnRecord], slots: int) -> float:
    window = measurement_window(turns, slots)
    assert window is not None
    return len(served_ends(turns, *window)) * 3600.0 / (window[1] - window[0])


def cached_share(turns: list[TurnRecord], repeats: bool, passes: list[int]) -> float | None:
    chosen = [t for t, p in zip(turns, passes, strict=True) if (p > 1) == repeats]
    prompt = sum(t.result.prompt_tokens or 0 for t in chosen)
    cached = sum(t.result.cached_tokens or 0 for t in chosen)
    return cached / prompt if prompt else None


def passes_of(turns: list[TurnRecord], corpus: Corpus) -> list[int]:
    """Each turn's pass: recorded where marked, else counted as the replay's cursor hands
    segments out (in the order their first turns started; no think time)."""
    if all(t.pass_number for t in turns):
        return [t.pass_number for t in turns]
    opening = {s.id: s.turns[0].id for s in corpus.segments}
    current: dict[int, int] = {}
    of_turn: dict[int, int] = {}
    taken = 0
    for turn in sorted(turns, key=lambda t: t.result.started):
        if turn.turn_id == opening[turn.segment_id]:
            current[turn.worker] = taken // len(corpus.segments) + 1
            taken += 1
        of_turn[id(turn)] = current.get(turn.worker, 1)
    return [of_turn[id(t)] for t in turns]


def share_text(share: float | None) -> str:
    return "—" if share is None else f"{share:.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--passes", type=float, default=1.5, help="one-slot passes a step holds")
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--cache-speedup", type=float, default=2.0)
    args = parser.parse_args()
    corpus = build_demo_corpus()
    readings: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as folder:
        logs = Path(folder)
        probe = step(SimulatedRunner(model(0, 0.0, args.cache_speedup)), corpus, 1, 0.0, True, logs)
        one_pass = max(t.result.ended for t in probe) - min(t.result.started for t in probe)
        seconds = args.passes * one_pass
        print(
            f"demo corpus: {corpus.turn_count} turns in {len(corpus.segments)} segments; one "
            f"slot's pass {one_pass:.1f} s; steps of {seconds:.1f} s; true gain {TRUE_GAIN}; "
            f"noise {args.noise:g}, cache_speedup {args.cache_speedup:g}"
        )
        for seed in range(args.seeds):
            for marked in (True, False):
                runner = SimulatedRunner(model(seed, args.noise, args.cache_speedup))
                rates, notes = [], []
                for slots in (1, 2):
                    turns = step(runner, corpus, slots, seconds, marked, logs)
                    passes = passes_of(turns, corpus)
                    rates.append(turns_per_hour(turns, slots))
                    notes.append(
                        f"N={slots}: {max(passes)} passes, cached pass 1 "
                        f"{share_text(cached_share(turns, False, passes))} / repeats "
                        f"{share_text(cached_share(turns, True, passes))}"
                    )
                gain = rates[1] / rates[0]
                readings[marked].append(gain)
                label = "marked  " if marked else "unmarked"
                print(f"seed {seed} {label} gain {gain:.2f}×  ({'; '.join(notes)})", flush=True)
    differences = [u - m for u, m in zip(readings[False], readings[True], strict=True)]
    if len(differences) > 1:
        print(
            f"unmarked minus marked, seed by seed: {statistics.fmean(differences):+.2f}× "
            f"(sd {statistics.stdev(differences):.2f})"
        )
    for marked in (True, False):
        values = readings[marked]
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        print(
            f"{'marked' if marked else 'unmarked'}: gain read {statistics.fmean(values):.2f}× "
            f"(sd {spread:.2f}, {min(values):.2f}–{max(values):.2f}, {len(values)} seeds); "
            f"true {TRUE_GAIN}×"
        )


if __name__ == "__main__":
    main()
