"""One whole 1 Hz tick of a step's sampler, not only its memory reading.

bench/bench_sampler.py times the host memory sampler alone (design §9: <= 1 ms on Linux).
A step's tick does more: the memory reading, the runner's process-tree RSS, one poll of the
production runner, the new lines of the runner's log, and one durably appended (fsync'd)
line of samples.jsonl. This times that whole tick, with the production runner absent
(connection refused) and with an embedded production runner up.

    python bench/bench_step_tick.py [ticks]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_support import free_port

from vibey_gh.clock import SYSTEM_CLOCK
from vibey_gh.config import LocalModels
from vibey_gh.interfaces.slots_interface import RunnerLaunch
from vibey_gh.platforms.device.probes import PlatformProbes
from vibey_gh.runners.registry import production_watch, runner_for
from vibey_gh.slots.measurement.calibration_setup import log_source
from vibey_gh.slots.measurement.stepping.sampler import StepSampler


def time_ticks(production_url: str, folder: Path, ticks: int) -> list[float]:
    log = folder / "runner.log"
    log.write_text("")
    sampler = StepSampler(
        memory=PlatformProbes.detect().memory,
        production=production_watch(LocalModels(production_url=production_url)),
        log_events=log_source(log, "embedded"),
        runner_pid=os.getpid,
        samples_path=folder / f"samples-{time.monotonic_ns()}.jsonl",
        clock=SYSTEM_CLOCK,
    )
    sampler.tick()
    durations = []
    for _ in range(ticks):
        start = time.perf_counter()
        sampler.tick()
        durations.append(time.perf_counter() - start)
    return durations


def report(name: str, durations: list[float]) -> None:
    ordered = sorted(durations)
    print(
        f"{name:<24} mean {statistics.fmean(ordered) * 1000:6.2f} ms  "
        f"p50 {ordered[len(ordered) // 2] * 1000:6.2f} ms  "
        f"p99 {ordered[int(len(ordered) * 0.99)] * 1000:6.2f} ms"
    )


def main() -> int:
    ticks = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    with tempfile.TemporaryDirectory(prefix="bench-tick-") as temp:
        folder = Path(temp)
        report("production absent", time_ticks(f"http://127.0.0.1:{free_port()}", folder, ticks))
        port = free_port()
        production = runner_for("embedded").start(
            RunnerLaunch(1, 1024, port, "default", folder / "production.log")
        )
        try:
            production.wait_ready()
            report("production up", time_ticks(f"http://127.0.0.1:{port}", folder, ticks))
        finally:
            production.stop()
    print(f"{ticks} ticks each; a step ticks once a second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
