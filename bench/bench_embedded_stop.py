"""How long the embedded runner takes to stop: signal sent → process gone.

Starts the real embedded runner (shipped SmolLM2, 1 slot x 256 tokens), has it answer one
short chat, sends SIGTERM or SIGINT, and times until the process has exited (it shuts the
llama.cpp server down cleanly first). Each signal is tried `--runs` times; the figures are the
mean and the sample standard deviation, with the slowest run. The stop path takes the signal
in a thread of its own (`platforms.stopsignals`), so the figure is the server's shutdown plus
at most one wake-up, not the once-a-second parent check.

    python bench/bench_embedded_stop.py [--runs 5]
"""

from __future__ import annotations

import argparse
import signal
import statistics
import tempfile
import time
from pathlib import Path

import psutil
from bench_support import free_port

from vibey_gh.interfaces.slots_interface import ChatSettings, RunnerLaunch
from vibey_gh.runners.llamacpp.embedded import EmbeddedRunner

SETTINGS = ChatSettings(window=256, max_tokens=8, temperature=0.0, seed=42, timeout_s=120)


def one_stop(folder: Path, sig: signal.Signals) -> float:
    launch = RunnerLaunch(1, 256, free_port(), "default", folder / f"{sig.name}.log", threads=1)
    runner = EmbeddedRunner().start(launch)
    try:
        runner.wait_ready(180)
        turn = runner.chat([{"role": "user", "content": "Say hello."}], None, SETTINGS)
        assert turn.served, turn.error
        assert runner.pid is not None
        process = psutil.Process(runner.pid)
        sent = time.perf_counter()
        process.send_signal(sig)
        process.wait(timeout=60)
        return time.perf_counter() - sent
    finally:
        runner.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for sig in (signal.SIGTERM, signal.SIGINT):
            times = [one_stop(Path(folder), sig) for _ in range(args.runs)]
            spread = statistics.stdev(times) if len(times) > 1 else 0.0
            print(
                f"{sig.name}: stopped in {statistics.mean(times) * 1000:.0f} ms "
                f"± {spread * 1000:.0f} ms (sd, n={len(times)}), slowest {max(times) * 1000:.0f} ms"
            )


if __name__ == "__main__":
    main()
