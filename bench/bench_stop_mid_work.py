"""How long a busy embedded runner takes to stop on SIGTERM, mid-prompt and mid-decode
(target: under 3 s, signal sent → every process gone).

Two commands, each stopped in both phases of a turn:

* `vibey-gh runner serve --runner embedded` (1 slot × 4096) serving a streamed chat that this
  script sends itself: mid-prompt is 1 s into a prompt of about 3,000 tokens, before its first
  token; mid-decode is 0.5 s after the first token of a long answer;
* `vibey-gh slots calibrate --demo --slots 1,1,2`: the phase is read from the calibration
  runner's log; mid-prompt is 1 s after a turn's prompt starts (with no token of it yet),
  mid-decode once the log reports tokens being generated (`n_gen =`).

Each case runs `--runs` times; the figures are the mean, the sample standard deviation and the
slowest stop. A stop that takes longer than 60 s is reported as such.

    python bench/bench_stop_mid_work.py [--runs 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import psutil
from bench_support import free_port

WINDOW = 4096
GONE_WITHIN_S = 60.0
LONG_PROMPT = " ".join(f"item {i} apple banana cherry" for i in range(450)) + "\nSummarize."
STORY = "Write a very long story about a dragon, in many chapters."
NEW_PROMPT = re.compile(r"\| task (\d+) \| new prompt")
TOKENS_OF = "| task {task} | n_gen ="


def stop_time(root: psutil.Process) -> float | None:
    """SIGTERM `root`; seconds until it and every process it had started are gone."""
    tree = [root, *root.children(recursive=True)]
    sent = time.monotonic()
    root.send_signal(signal.SIGTERM)
    _gone, alive = psutil.wait_procs(tree, timeout=GONE_WITHIN_S)
    took = time.monotonic() - sent
    for process in alive:
        process.kill()
    return None if alive else took


@contextlib.contextmanager
def stopped_in_any_case(process: subprocess.Popen[str]) -> Iterator[None]:
    """Whatever happens to the measurement, the command and what it started do not outlive it."""
    try:
        yield
    finally:
        if process.poll() is None:
            stop_time(psutil.Process(process.pid))
            process.wait()


def vibey_gh(args: list[str], state: Path, cwd: Path, **kwargs: object) -> subprocess.Popen[str]:
    env = {**os.environ, "VIBEY_GH_SLOTS_DIR": str(state)}
    command = [sys.executable, "-m", "vibey_gh.cli.main", *args]
    return subprocess.Popen(command, env=env, cwd=cwd, text=True, **kwargs)  # type: ignore[call-overload]


# --- runner serve, a client of our own --------------------------------------------------------


def stream_chat(
    url: str, content: str, max_tokens: int, first_token: threading.Event, ended: threading.Event
) -> None:
    body = {
        "messages": [{"role": "user", "content": content}],
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream": True,
    }
    try:
        with (
            httpx.Client(trust_env=False, timeout=120) as client,
            client.stream("POST", url + "/v1/chat/completions", json=body) as reply,
        ):
            for line in reply.iter_lines():
                if '"content":"' in line:
                    first_token.set()
    except httpx.HTTPError:
        pass  # the server went away: that is the point
    finally:
        ended.set()


def serve_stop(folder: Path, phase: str) -> float | None:
    port = free_port()
    serve = vibey_gh(
        ["runner", "serve", "--runner", "embedded", "--slots", "1", "--window", str(WINDOW),
         "--port", str(port), "--threads", "2", "--json"],
        folder / "state", folder, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    with stopped_in_any_case(serve):
        assert serve.stdout is not None
        printed = ""
        while not printed.endswith("}\n"):  # the facts, as one (indented) JSON object
            line = serve.stdout.readline()
            if not line:
                raise SystemExit("runner serve ended before it was ready")
            printed += line
        facts = json.loads(printed)
        first_token, ended = threading.Event(), threading.Event()
        content, max_tokens = (LONG_PROMPT, 8) if phase == "prompt" else (STORY, 2000)
        threading.Thread(
            target=stream_chat,
            args=(facts["url"], content, max_tokens, first_token, ended),
            daemon=True,
        ).start()
        if phase == "prompt":
            time.sleep(1.0)
            if first_token.is_set() or ended.is_set():
                raise SystemExit("the long prompt was not in flight after 1 s (read, or refused)")
        else:
            if not first_token.wait(120):
                raise SystemExit("no token within 120 s")
            time.sleep(0.5)
            if ended.is_set():
                raise SystemExit("the answer ended before the stop")
        took = stop_time(psutil.Process(serve.pid))
        serve.wait()
    return took


# --- slots calibrate --demo, the phase read from its runner's log ----------------------------


def runner_log(state: Path) -> str:
    logs = sorted((state / "runs").glob("*/**/*.log"), key=lambda p: p.stat().st_mtime)
    return logs[-1].read_text(errors="replace") if logs else ""


def prompt_in_flight(log: str) -> bool:
    started = NEW_PROMPT.findall(log)
    if not started:
        return False
    task = started[-1]
    tail = log[log.rfind(f"| task {task} | new prompt") :]
    return TOKENS_OF.format(task=task) not in tail and "prompt eval time" not in tail


def decoding(log: str) -> bool:
    started = NEW_PROMPT.findall(log)
    return bool(started) and TOKENS_OF.format(task=started[-1]) in log


def calibrate_stop(folder: Path, phase: str) -> float | None:
    state = folder / "state"
    (folder / "vibey-gh.toml").write_text(
        "[local_models]\n"
        f'runner = "embedded"\ncalibration_port = {free_port()}\n'
        f'production_url = "http://127.0.0.1:{free_port()}"\n'
    )
    max_tokens = "8" if phase == "prompt" else "768"
    sweep = vibey_gh(
        ["slots", "calibrate", "--demo", "--slots", "1,1,2", "--max-tokens", max_tokens,
         "--threads", "2"],
        state, folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    with stopped_in_any_case(sweep):
        ready: Callable[[str], bool] = prompt_in_flight if phase == "prompt" else decoding
        deadline = time.monotonic() + 600
        while not ready(runner_log(state)):
            if time.monotonic() > deadline or sweep.poll() is not None:
                raise SystemExit(f"calibrate never reached the {phase} phase")
            time.sleep(0.1)
        if phase == "prompt":
            time.sleep(1.0)
            if not prompt_in_flight(runner_log(state)):
                stop_time(psutil.Process(sweep.pid))
                return calibrate_stop(_fresh(folder), phase)  # that prompt was short: again
        took = stop_time(psutil.Process(sweep.pid))
        sweep.wait()
    return took


def _fresh(folder: Path) -> Path:
    again = folder / f"again-{time.monotonic_ns()}"
    again.mkdir()
    return again


def report(label: str, times: list[float | None]) -> None:
    done = [t for t in times if t is not None]
    late = len(times) - len(done)
    if not done:
        print(f"{label}: no stop within {GONE_WITHIN_S:g} s in {late} runs")
        return
    spread = statistics.stdev(done) if len(done) > 1 else 0.0
    print(
        f"{label}: {statistics.mean(done):.2f} s ± {spread:.2f} s (sd, n={len(done)}), "
        f"slowest {max(done):.2f} s" + (f"; {late} runs over {GONE_WITHIN_S:g} s" if late else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", choices=("serve", "calibrate"), default=None)
    args = parser.parse_args()
    cases = [
        ("serve", serve_stop, "runner serve --runner embedded"),
        ("calibrate", calibrate_stop, "slots calibrate --demo"),
    ]
    for name, measure, label in cases:
        if args.only not in (None, name):
            continue
        for phase in ("prompt", "decode"):
            times = []
            for _ in range(args.runs):
                with tempfile.TemporaryDirectory() as folder:
                    times.append(measure(Path(folder), phase))
            report(f"SIGTERM to {label}, mid-{phase}", times)


if __name__ == "__main__":
    main()
