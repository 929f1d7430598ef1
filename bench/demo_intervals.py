"""Where a recorded sweep's gain intervals get their width: replays an evidence file's
per-turn records through the product's own functions and prints, for every step of more than
one slot, the standard error of its log gain read by turn (the delete-one-turn jackknife, as
before blocks) and its parts now — the step's blocks of wall time, the reference costs' spread,
how far one slot's runs strayed — with the degrees of freedom and the interval they give.

    PYTHONPATH=src python bench/demo_intervals.py ~/.local/state/vibey-gh/slots/evidence/FP.json

The file is read as `slots show` reads it (sealed evidence only).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.judging.statistics.paired import StepWork, across_runs, capacity_ratio
from vibey_gh.slots.judging.statistics.sequential import widening
from vibey_gh.slots.judging.statistics.stats import t_quantile
from vibey_gh.slots.judging.work import pairing_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("evidence", type=Path)
    parser.add_argument("--confidence", type=float, default=0.9)
    args = parser.parse_args()
    steps = load_evidence(args.evidence).document.steps
    pairing = pairing_of(steps)
    if pairing is None:
        raise SystemExit("this evidence has no steady one-slot run to pair with")
    between = pairing.between
    print(
        f"one slot's runs: {len(pairing.pool)} pooled; spread between runs beyond their own "
        f"noise {math.sqrt(between.variance):.1%} ({between.freedom} degrees of freedom); "
        f"a turn's one-slot time about its own mean {pairing.costs.noise or 0:.1%}"
    )
    quantile = 0.5 + args.confidence / 2.0
    for step in steps:
        work = pairing.work_of(step)
        if step.slots < 2 or work is None:
            continue
        by_turn = capacity_ratio([StepWork(step.slots, work.clusters)], pairing.pool)
        blocks = capacity_ratio([StepWork(step.slots, work.clusters, work.blocks)], pairing.pool)
        gain = pairing.gain(work)
        if gain is None or by_turn is None or blocks is None:
            continue
        judged = across_runs(gain, between)
        measured = step.measurement or {}
        look = widening(args.confidence, measured.get("look", 0), measured.get("looks", 0))
        own, costs = blocks.log_se or 0.0, gain.log_se or 0.0
        print(
            f"N={step.slots}: gain {gain.value - 1:+.1%}; by turn: se {by_turn.log_se or 0:.3f} "
            f"over {by_turn.clusters} turns; now: blocks {len(work.blocks)} se {own:.3f}, costs "
            f"se {math.sqrt(max(0.0, costs**2 - own**2)):.3f}, between runs se "
            f"{math.sqrt(max(0.0, (judged.log_se or 0) ** 2 - costs**2)):.3f}; "
            f"total se {judged.log_se or 0:.3f}, {judged.clusters - 1} degrees of freedom"
        )
        for name, ratio in (("by turn", by_turn), ("now", judged)):
            if ratio.log_se is None or ratio.clusters < 5:
                print(f"    {name}: no interval")
                continue
            half = t_quantile(quantile, ratio.clusters - 1) * look * ratio.log_se
            print(
                f"    {name}: {ratio.value * math.exp(-half) - 1:+.0%} to "
                f"{ratio.value * math.exp(half) - 1:+.0%} (± {half:.3f} in log; t × look "
                f"{t_quantile(quantile, ratio.clusters - 1) * look:.2f})"
            )


if __name__ == "__main__":
    main()
