"""Does an interleaved step's first quad read like its later ones? Warm-up, from evidence.

An interleaved step cancels the machine's wander pair by pair, but not a warm-up: a runner
slower in its first block than later would lower the first one-slot block and raise the
first pair's gain. A step first looked at sooner holds fewer pairs, so such a bias would be
diluted less. This reads recorded calibrations (evidence files, e.g. from `make demo`) and,
for every interleaved step, compares the first one-slot block's level and the first pair's
gain with the later ones'.

A block's level is the reference work done inside it per second of its wall time: each
turn's mean service time in the sweep's one-slot runs, times the share of its service inside
the block (as `judging.interleaved` credits work); a pair's gain is its N block's level over
its one-slot block's.

    python bench/first_blocks.py <state>/vibey-gh/slots/evidence/*.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from vibey_gh.slots.judging.interleaved import block_pairs
from vibey_gh.slots.judging.records import BlockRecord, StepRecord, TurnRecord


def one_slot_prices(steps: Sequence[StepRecord]) -> dict[str, float]:
    """Each turn's mean service time over the sweep's one-slot runs (not in blocks)."""
    times: dict[str, list[float]] = defaultdict(list)
    for step in steps:
        if step.slots == 1 and not step.blocks:
            for turn in step.turns:
                if turn.result.served and turn.result.ended > turn.result.started:
                    times[turn.turn_id].append(turn.result.ended - turn.result.started)
    return {turn_id: statistics.mean(seconds) for turn_id, seconds in times.items()}


def block_level(
    turns: Sequence[TurnRecord], block: BlockRecord, prices: Mapping[str, float]
) -> float:
    """Reference seconds of work done inside the block per second of it."""
    work = 0.0
    for turn in turns:
        started, ended = turn.result.started, turn.result.ended
        inside = min(ended, block.stop) - max(started, block.start)
        if inside > 0 and turn.turn_id in prices:
            work += prices[turn.turn_id] * inside / (ended - started)
    return work / (block.stop - block.start)


def step_rows(path: Path) -> list[tuple[str, int, float, float]]:
    """(file, N, first one-slot block's level over the later ones' mean, first pair's gain
    minus the later pairs' mean) for each interleaved step with three pairs or more."""
    data = json.loads(path.read_text())
    steps = [msgspec.convert(s, StepRecord) for s in data.get("steps", [])]
    prices = one_slot_prices(steps)
    rows = []
    for step in steps:
        served = [t for t in step.turns if t.result.served and t.result.ended > t.result.started]
        pairs = [
            (
                block_level(served, step.blocks[one], prices),
                block_level(served, step.blocks[n], prices),
            )
            for one, n in block_pairs(step.blocks)
        ]
        pairs = [(alone, many) for alone, many in pairs if alone > 0]
        if len(pairs) < 3:
            continue
        levels = [alone for alone, _ in pairs]
        gains = [many / alone for alone, many in pairs]
        rows.append(
            (
                str(path),
                step.slots,
                levels[0] / statistics.mean(levels[1:]),
                gains[0] - statistics.mean(gains[1:]),
            )
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("evidence", nargs="+", type=Path)
    args = parser.parse_args()
    rows = [row for path in args.evidence for row in step_rows(path)]
    if not rows:
        print("no interleaved step with three pairs or more in these files", file=sys.stderr)
        return 1
    for where, slots, level, gain in rows:
        print(
            f"{where} N={slots}: first one-slot block {level:.2f}× the later ones; "
            f"first pair's gain {gain:+.1%} against the later pairs'"
        )
    levels = [r[2] for r in rows]
    gains = [r[3] for r in rows]
    spread = statistics.stdev(gains) / len(gains) ** 0.5 if len(gains) > 1 else float("nan")
    print(
        f"{len(rows)} interleaved steps: first one-slot block {statistics.mean(levels):.2f}× "
        f"(range {min(levels):.2f}–{max(levels):.2f}); first pair's gain "
        f"{statistics.mean(gains):+.1%} ± {spread:.1%} "
        f"(range {min(gains):+.0%} to {max(gains):+.0%})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
