"""`vibey-gh slots allowed` as a whole process, with a production runner up (target <= 100 ms).

Starts an embedded llama.cpp runner as the production runner, records real evidence for this
device with a short sweep on the micro corpus, then times the installed `vibey-gh` command in
five cases:

  declared 1      concurrent_runs = 1: answers without probing anything
  measured        concurrent_runs = "measured": fingerprint, evidence, re-judged steps
  measured demo   the same on evidence `make demo` recorded (3 steps, 48 turns, 122 KB,
                  from tests/fixtures), re-keyed to this device at a 4096-token window
  llama-server    runner = "llama-server" pointed at the production runner: its version comes
                  from production's /props over HTTP; no evidence for it (writes a request)
  ollama          runner = "ollama" pointed at a stand-in that answers /api/version and
                  /api/tags as Ollama does (no Ollama here); no evidence for it

Each case is set up as a user's install would be: its vibey-gh.toml in the user config
directory and the state in the user state directory, found through $XDG_CONFIG_HOME and
$XDG_STATE_HOME, with neither VIBEY_GH_CONFIG nor VIBEY_GH_SLOTS_DIR set.

The package's modules are compiled to bytecode first, as installing a wheel does: with
PYTHONDONTWRITEBYTECODE set and nothing compiled, every run would compile them again.

With hyperfine on PATH it does the timing (--warmup 3); otherwise a Python loop of
subprocess runs, which also reports each run's CPU time (user + system, from getrusage): on a
shared machine the wall time swings with the neighbours' load, the CPU time much less.
`python -c pass` is timed too: the interpreter's own start-up share.

    python bench/bench_allowed.py [--runs 30]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench_support import MICRO_WINDOW, StepPrinter, free_port, micro_corpus

import vibey_gh
from vibey_gh.composition import build_environment
from vibey_gh.config import CONFIG_ENV, LocalModels
from vibey_gh.files import atomic_write_json
from vibey_gh.interfaces.slots_interface import RunnerLaunch
from vibey_gh.platforms.device.probes import PlatformProbes
from vibey_gh.runners.registry import identify_production, runner_for
from vibey_gh.slots.evidence.fingerprint import compute_fingerprint
from vibey_gh.slots.evidence.store import evidence_path, seal_evidence
from vibey_gh.slots.measurement.calibrate import run_calibration
from vibey_gh.slots.measurement.calibration_setup import CalibrationRequest
from vibey_gh.state import StateLayout, state_root

DEMO_EVIDENCE = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "fixtures"
    / "evidence"
    / "slots-a6e718b9b4a7bd46.json"
)
DEMO_WINDOW = 4096
OLLAMA_ANSWERS = {
    "/api/version": {"version": "0.34.2"},
    "/api/tags": {
        "models": [
            {
                "name": "qwen3:8b",
                "model": "qwen3:8b",
                "digest": "500a1f067a9f782620b40bee6f7b0c89e17ae61f686b92c24933e4ca4b2b8b41",
            }
        ]
    },
}


def config_text(
    runner: str,
    declaration: str,
    production: str,
    model: str = "default",
    window: int = MICRO_WINDOW,
) -> str:
    return (
        "[local_models]\n"
        f"concurrent_runs = {declaration}\n"
        f'runner = "{runner}"\n'
        f'model = "{model}"\n'
        f"window = {window}\n"
        f'production_url = "{production}"\n'
    )


def plant_demo_evidence(state: Path, production_url: str) -> None:
    """The evidence `make demo` recorded (122 KB, 5 steps), re-keyed to this device and runner."""
    layout = StateLayout(state)
    config = LocalModels(
        concurrent_runs="measured", window=DEMO_WINDOW, production_url=production_url
    )
    device = PlatformProbes.detect().device.describe()
    fingerprint = compute_fingerprint(device, identify_production(config, layout), DEMO_WINDOW)
    data = json.loads(DEMO_EVIDENCE.read_text(encoding="utf-8"))
    data["fingerprint"] = {"id": fingerprint.id, "fields": fingerprint.fields}
    data["created_at"] = time.time()
    # re-keyed on purpose, so sealed again: edited evidence is otherwise refused
    atomic_write_json(evidence_path(layout, fingerprint.id), seal_evidence(data))


@contextmanager
def ollama_stand_in() -> Iterator[str]:
    """/api/version and /api/tags as Ollama answers them, on 127.0.0.1."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(OLLAMA_ANSWERS.get(self.path, {"error": "not found"})).encode()
            self.send_response(200 if self.path in OLLAMA_ANSWERS else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


CPU_TIMES: dict[int, list[float]] = {}  # by id() of the wall-time list they go with


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_loop(argv: list[str], cwd: Path, env: dict[str, str], runs: int) -> list[float]:
    for _ in range(3):
        subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=True)
    times: list[float] = []
    cpu: list[float] = []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), _children_cpu()
        subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
        cpu.append(_children_cpu() - start_cpu)
    CPU_TIMES[id(times)] = cpu
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
    cpu = CPU_TIMES.get(id(times))
    cpu_text = f"  cpu p50 {statistics.median(cpu) * 1000:6.1f} ms" if cpu else ""
    print(
        f"{name:<14} mean {statistics.fmean(times) * 1000:6.1f} ms  "
        f"p50 {ordered[len(ordered) // 2] * 1000:6.1f} ms  p95 {p95 * 1000:6.1f} ms"
        f"{cpu_text}  -> {answer}"
    )


def time_cases(
    cases: list[tuple[str, str]],
    command: str,
    folder: Path,
    env: dict[str, str],
    timer: Callable[[list[str], Path, dict[str, str], int], list[float]],
    runs: int,
) -> None:
    for name, text in cases:
        case = folder / name.replace(" ", "-")
        config = case / "config"
        (config / "vibey-gh").mkdir(parents=True)
        (config / "vibey-gh" / "vibey-gh.toml").write_text(text)
        case_env = {**env, "XDG_CONFIG_HOME": str(config)}
        argv = [command, "slots", "allowed", "--json"]
        answer = json.loads(
            subprocess.run(argv, cwd=case, env=case_env, capture_output=True, check=True).stdout
        )
        times = timer(argv, case, case_env, runs)
        describe(name, times, f"{answer['allowed']}: {answer['reason'][:60]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    command = shutil.which("vibey-gh", path=str(Path(sys.executable).parent))
    if command is None:
        print("vibey-gh is not installed beside this Python", file=sys.stderr)
        return 2
    timer = time_hyperfine if shutil.which("hyperfine") else time_loop
    compileall.compile_dir(Path(vibey_gh.__file__).parent, quiet=1)
    print(
        f"timing with {'hyperfine' if timer is time_hyperfine else 'a Python loop'}, "
        f"{args.runs} runs each, command {command}"
    )

    with tempfile.TemporaryDirectory(prefix="bench-allowed-") as temp:
        folder = Path(temp)
        # As installed for a user: the state and the config in their XDG places, no override.
        env = {k: v for k, v in os.environ.items() if k not in ("VIBEY_GH_SLOTS_DIR", CONFIG_ENV)}
        env["XDG_STATE_HOME"] = str(folder / "xdg-state")
        state = state_root(env)
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
                min_step_seconds=2.0,  # the evidence is what is timed, not its precision
            )
            print("recording evidence: a --slots 1,1,2 sweep on the micro corpus", file=sys.stderr)
            os.environ["VIBEY_GH_SLOTS_DIR"] = str(state)  # the GGUF digest cache lives there
            run_calibration(
                CalibrationRequest(config, corpus, MICRO_WINDOW, 8, slots=(1, 1, 2)),
                build_environment(config, StateLayout(state)),
                StepPrinter(),
                bounds_source=lambda: config,
            )
            plant_demo_evidence(state, production_url)
            baseline = time_loop([sys.executable, "-c", "pass"], folder, env, args.runs)
            describe("python -c pass", baseline, "(the interpreter alone)")
            with ollama_stand_in() as ollama_url:
                cases = [
                    ("declared 1", config_text("embedded", "1", production_url)),
                    ("measured", config_text("embedded", '"measured"', production_url)),
                    (
                        "measured demo",
                        config_text("embedded", '"measured"', production_url, window=DEMO_WINDOW),
                    ),
                    ("llama-server", config_text("llama-server", '"measured"', production_url)),
                    ("ollama", config_text("ollama", '"measured"', ollama_url, "qwen3:8b")),
                ]
                time_cases(cases, command, folder, env, timer, args.runs)
        finally:
            production.stop()
    print("target: <= 100 ms per process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
