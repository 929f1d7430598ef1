"""kill -9 of `vibey-gh slots calibrate` at random moments across one sweep, then rerun.

Runs one uninterrupted sweep for reference, then the same sweep again in a fresh state
directory, killed with SIGKILL --kills times and rerun after each kill; a last rerun is left
to finish. A kill moment is a random phase of the run, read from its progress lines — a step
starting (the runner being launched), the runner ready (replay under way), a step finished
(its checkpoint just written) — plus a random delay of 0 to 1.5 s, so kills land in every
phase whatever the machine's load. Prints each run's fate and how many steps the checkpoint
held afterwards, then compares the final evidence with the reference: the same steps (N)
and served turns, no temporary file, no checkpoint, no calibration runner left running.

A benchmark, not a test (tests/stress/test_stress_crash_resume.py is the short version):

    python bench/crash_resume.py [--kills 10] [--seed 0] [--slots 1,1,2] [--max-tokens 8]

A rerun that fails is reported with its error; when the calibration port is still held by a
runner nobody stopped, the script stops that runner itself, says so, and goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_support import free_port, micro_corpus, runners_on

from vibey_gh.files import leftover_temp_files
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.state import StateLayout

WINDOW = 1024
# (phase, progress line that starts it): see slots/measurement/live_progress.py PlainProgress
PHASES = (
    ("runner starting", re.compile(r"^step \d+: N=")),
    ("replaying", re.compile(r"^  runner ready")),
    ("after a checkpoint", re.compile(r"^  step \d+ N=\d+: ")),
)


def run_until_killed(
    argv: list[str], cwd: Path, env: dict[str, str], phase: re.Pattern[str] | None, delay: float
) -> tuple[str, str]:
    """Run; SIGKILL `delay` seconds after the first stderr line matching `phase`.
    Returns ("killed" | "exit N", stderr)."""
    run = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
    seen: list[str] = []

    def read() -> None:
        assert run.stderr is not None
        for line in run.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    while True:
        line = lines.get()
        if line is None:
            run.wait()
            return f"exit {run.returncode}", "".join(seen)
        seen.append(line)
        if phase is not None and phase.match(line):
            time.sleep(delay)
            if run.poll() is None:
                run.send_signal(signal.SIGKILL)
                run.wait()
                return "killed", "".join(seen)


def served_by_step(evidence: Path) -> list[tuple[int, list[str]]]:
    return [
        (step.slots, sorted(t.turn_id for t in step.turns if t.result.served))
        for step in load_evidence(evidence).steps
    ]


def checkpoint_steps(layout: StateLayout) -> int:
    for path in layout.progress.glob("*.json"):
        try:
            return len(json.loads(path.read_text())["steps"])
        except (OSError, ValueError, KeyError):
            return -1
    return 0


def temp_files(root: Path) -> list[Path]:
    folders = [root, *(p for p in root.rglob("*") if p.is_dir())]
    return [found for folder in folders for found in leftover_temp_files(folder)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--slots", default="1,1,2")
    parser.add_argument("--max-tokens", type=int, default=8)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-crash-") as temp:
        folder = Path(temp)
        _, corpus = micro_corpus(folder)
        port = free_port()
        (folder / "vibey-gh.toml").write_text(
            "[local_models]\n"
            'runner = "embedded"\n'
            f"window = {WINDOW}\n"
            f"calibration_port = {port}\n"
            f'production_url = "http://127.0.0.1:{free_port()}"\n'
        )
        argv = [
            sys.executable,
            "-m",
            "vibey_gh.cli.main",
            "slots",
            "calibrate",
            "--corpus",
            str(corpus),
            "--window",
            str(WINDOW),
            "--slots",
            args.slots,
            "--max-tokens",
            str(args.max_tokens),
        ]

        def env_for(state: Path) -> dict[str, str]:
            return {**os.environ, "VIBEY_GH_SLOTS_DIR": str(state)}

        started = time.monotonic()
        reference = subprocess.run(
            argv, cwd=folder, env=env_for(folder / "reference"), capture_output=True, text=True
        )
        sweep_s = time.monotonic() - started
        if reference.returncode != 0:
            print(f"the reference sweep failed:\n{reference.stderr}", file=sys.stderr)
            return 1
        print(f"reference sweep --slots {args.slots}: {sweep_s:.1f} s, exit 0")

        state = folder / "state"
        layout = StateLayout(state)
        rng = random.Random(args.seed)
        kills = failures = orphans_stopped = 0
        attempt = 0
        completed = False
        total_started = time.monotonic()
        while not completed:
            attempt += 1
            if kills >= args.kills:
                name, phase, delay = "to the end", None, 0.0
            else:
                name, phase = rng.choice(PHASES)
                phase_name = name
                delay = rng.uniform(0.0, 1.5)
                name = f"{phase_name} +{delay:.1f}s"
            fate, stderr = run_until_killed(argv, folder, env_for(state), phase, delay)
            if fate == "killed":
                kills += 1
            print(
                f"run {attempt:2d}  {name:>26}  {fate:>7}  checkpoint holds "
                f"{checkpoint_steps(layout)} step(s)",
                flush=True,
            )
            if fate == "exit 0":
                completed = True
            elif fate != "killed":
                failures += 1
                error = [x for x in stderr.splitlines() if x.startswith("error:")]
                print(f"        rerun failed: {error[-1] if error else stderr.strip()[-200:]}")
                for orphan in runners_on(port):
                    print(f"        stopping runner pid {orphan.pid} that still holds {port}")
                    orphan.kill()
                    orphans_stopped += 1
                if attempt > args.kills * 3:
                    print("giving up: too many failed reruns", file=sys.stderr)
                    return 1
        total_s = time.monotonic() - total_started

        (final,) = layout.evidence.glob("*.json")
        (expected,) = StateLayout(folder / "reference").evidence.glob("*.json")
        same = served_by_step(final) == served_by_step(expected)
        time.sleep(3)  # a runner whose calibration died leaves within a second or two
        left = runners_on(port)
        print()
        print(f"kills                  {kills}")
        print(
            f"reruns that failed     {failures} (runners the script had to stop: {orphans_stopped})"
        )
        print(f"wall time, all runs    {total_s:.1f} s (uninterrupted: {sweep_s:.1f} s)")
        print(f"same steps and served  {same}  {[(n, len(t)) for n, t in served_by_step(final)]}")
        print(f"temporary files left   {len(temp_files(state))}")
        print(f"checkpoint left        {checkpoint_steps(layout) != 0}")
        print(f"runners left running   {len(left)}")
        for process in left:
            process.kill()
        return 0 if same and not failures and not left else 1


if __name__ == "__main__":
    sys.exit(main())
