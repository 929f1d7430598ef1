"""How long stopping a busy embedded calibration runner takes (target: a few seconds).

Starts the real embedded runner (shipped SmolLM2, 2 slots, window 512), puts a long answer in
flight on each slot, and after two seconds times `stop()`: the in-flight turns are cancelled
first (their connections shut down), then the runner is stopped. Before the cancelling, a busy
runner took the whole stop grace (15 s), an idle one 0.2 s. Idle stops are timed too.

    python bench/bench_busy_stop.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from bench_support import free_port

from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerLaunch
from vibey_gh.runners.llamacpp.embedded import EmbeddedRunner

WINDOW = 512
LONG = ChatSettings(window=WINDOW, max_tokens=400, temperature=0.0, seed=42, timeout_s=120)
STORY = [{"role": "user", "content": "Write a very long story about a dragon, in chapters."}]


def one_stop(folder: Path, busy: bool) -> float:
    launch = RunnerLaunch(
        slots=2,
        window=WINDOW,
        port=free_port(),
        model="default",
        log_path=folder / f"runner-{time.monotonic_ns()}.log",
        threads=2,
    )
    running = EmbeddedRunner().start(launch)
    running.wait_ready()
    workers = [
        threading.Thread(target=running.chat, args=(STORY, None, LONG), daemon=True)
        for _ in range(2 if busy else 0)
    ]
    for worker in workers:
        worker.start()
    time.sleep(2.0)
    started = time.monotonic()
    running.stop()
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        for busy in (True, False):
            times = [one_stop(Path(folder), busy) for _ in range(runs)]
            spread = statistics.stdev(times) if len(times) > 1 else 0.0
            label = "busy (2 turns in flight)" if busy else "idle"
            print(
                f"stop, {label}: {statistics.mean(times):.2f} s ± {spread:.2f} s "
                f"(n={runs}, min {min(times):.2f}, max {max(times):.2f})"
            )


if __name__ == "__main__":
    main()
