"""`vibey-gh slots allowed` as a whole process, with a production runner up (target <= 100 ms).

Starts an embedded llama.cpp runner as the production runner, records real evidence for this
device with a short sweep on the micro corpus, then times the installed `vibey-gh` command in
three cases:

  declared 1      concurrent_runs = 1: answers without probing anything
  measured        concurrent_runs = "measured": fingerprint, evidence, re-judged steps
  llama-server    runner = "llama-server" pointed at the production runner: its version comes
                  from production's /props over HTTP; no evidence for it (writes a request)

With hyperfine on PATH it does the timing (--warmup 3); otherwise a Python loop of
subprocess runs. `python -c pass` is timed too: the interpreter's own start-up share.

    python bench/bench_allowed.py [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_support import MICRO_WINDOW, StepPrinter, free_port, micro_corpus

from vibey_gh.config import LocalModels
from vibey_gh.interfaces.slots_interface import RunnerLaunch
from vibey_gh.runners.registry import runner_for
from vibey_gh.slots.calibrate import CalibrationRequest, run_calibration
from vibey_gh.slots.wiring import build_environment
from vibey_gh.state import StateLayout


def config_text(runner: str, declaration: str, production: str) -> str:
    return (
        "[local_models]\n"
        f"concurrent_runs = {declaration}\n"
        f'runner = "{runner}"\n'
        f"window = {MICRO_WINDOW}\n"
        f'production_url = "{production}"\n'
    )


def time_loop(argv: list[str], cwd: Path, env: dict[str, str], runs: int) -> list[float]:
    for _ in range(3):
        subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=True)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return times


def time_hyperfine(argv: list[str], cwd: Path, env: dict[str, str], runs: int) -> list[float]:
    export = cwd / "hyperfine.json"
    subprocess.run(
        ["hyperfine", "--warmup", "3", "--runs", str(runs), "-N", "--export-json", str(export)]
        + [" ".join(argv)],
        cwd=cwd,
        env=env,
        capture_output=True,
        check=True,
    )
    times: list[float] = json.loads(export.read_text())["results"][0]["times"]
    return times


def describe(name: str, times: list[float], answer: str) -> None:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    print(
        f"{name:<14} mean {statistics.fmean(times) * 1000:6.1f} ms  "
        f"p50 {ordered[len(ordered) // 2] * 1000:6.1f} ms  p95 {p95 * 1000:6.1f} ms  "
        f"-> {answer}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    command = shutil.which("vibey-gh", path=str(Path(sys.executable).parent))
    if command is None:
        print("vibey-gh is not installed beside this Python", file=sys.stderr)
        return 2
    timer = time_hyperfine if shutil.which("hyperfine") else time_loop
    print(
        f"timing with {'hyperfine' if timer is time_hyperfine else 'a Python loop'}, "
        f"{args.runs} runs each, command {command}"
    )

    with tempfile.TemporaryDirectory(prefix="bench-allowed-") as temp:
        folder = Path(temp)
        state = folder / "state"
        env = {**os.environ, "VIBEY_GH_SLOTS_DIR": str(state)}
        production_port = free_port()
        production_url = f"http://127.0.0.1:{production_port}"
        production = runner_for("embedded").start(
            RunnerLaunch(1, MICRO_WINDOW, production_port, "default", folder / "production.log")
        )
        try:
            production.wait_ready()
            corpus, _ = micro_corpus(folder)
            config = LocalModels(
                concurrent_runs="measured",
                window=MICRO_WINDOW,
                calibration_port=free_port(),
                production_url=production_url,
            )
            print("recording evidence: a --slots 1,1,2 sweep on the micro corpus", file=sys.stderr)
            os.environ["VIBEY_GH_SLOTS_DIR"] = str(state)  # the GGUF digest cache lives there
            run_calibration(
                CalibrationRequest(config, corpus, MICRO_WINDOW, 8, slots=(1, 1, 2)),
                build_environment(config, StateLayout(state)),
                StepPrinter(),
                bounds_source=lambda: config,
            )
            baseline = time_loop([sys.executable, "-c", "pass"], folder, env, args.runs)
            describe("python -c pass", baseline, "(the interpreter alone)")
            cases = [
                ("declared 1", config_text("embedded", "1", production_url)),
                ("measured", config_text("embedded", '"measured"', production_url)),
                ("llama-server", config_text("llama-server", '"measured"', production_url)),
            ]
            for name, text in cases:
                case = folder / name.replace(" ", "-")
                case.mkdir()
                (case / "vibey-gh.toml").write_text(text)
                argv = [command, "slots", "allowed", "--json"]
                answer = json.loads(
                    subprocess.run(argv, cwd=case, env=env, capture_output=True, check=True).stdout
                )
                times = timer(argv, case, env, args.runs)
                describe(name, times, f"{answer['allowed']}: {answer['reason'][:60]}")
        finally:
            production.stop()
    print("target: <= 100 ms per process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
