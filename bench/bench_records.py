"""Reading declared records: the recorded demo evidence's steps and the figures cache.

What `interfaces.schema.checked` costs on the two reads that matter: every step of an
evidence file (the judge re-reads them when the figures cache is stale) and the figures cache
(`slots allowed` reads it on every call). Both start from parsed JSON, as the bounded reader
(`guarded.py`) hands it over; the figures are made from the same evidence.

    python bench/bench_records.py [--runs 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from vibey_gh.guarded import loads_json
from vibey_gh.interfaces.schema import as_json, checked
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.judging.baseline import sweep_figures
from vibey_gh.slots.judging.figures import SweepFigures
from vibey_gh.slots.judging.records import StepRecord

EVIDENCE = (
    Path(__file__).resolve().parents[1] / "tests/fixtures/evidence/slots-a6e718b9b4a7bd46.json"
)


def timed(read: Callable[[], object], runs: int) -> tuple[float, float]:
    """(median, 90th percentile) of `runs` reads, in milliseconds."""
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        read()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds) * 1e3, statistics.quantiles(seconds, n=10)[-1] * 1e3


def _steps(steps: object) -> object:
    return checked(steps, list[StepRecord])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    runs = parser.parse_args().runs
    data = loads_json(EVIDENCE.read_text(encoding="utf-8"))
    steps = data["steps"]
    turns = sum(len(step["turns"]) for step in steps)
    figures = json.loads(json.dumps(as_json(sweep_figures(list(load_evidence(EVIDENCE).steps)))))
    for what, read in (
        (
            f"evidence steps ({len(steps)} steps, {turns} turns)",
            lambda: checked(steps, list[StepRecord]),
        ),
        (f"figures cache ({len(steps)} steps)", lambda: checked(figures, SweepFigures)),
    ):
        median, p90 = timed(read, runs)
        print(f"{what}: median {median:.3f} ms, p90 {p90:.3f} ms ({runs} reads)")


if __name__ == "__main__":
    main()
