"""Run a runner binary (llama-server, ollama) so that it stops when the calibration does.

    python -m vibey_gh.runners.watchdog --parent-pid PID -- BINARY ARGS...

The embedded runner watches its parent itself; a llama-server or Ollama binary cannot, and
started in a session of its own it would outlive a calibration killed with -9, holding the
calibration port and the memory the next step needs. This small process sits between: it
starts the binary as its child (in the same process group, so stopping the group still
reaches both), and every PARENT_CHECK_S checks that the calibration that started it is still
its parent. When it is not, it stops the binary (SIGTERM, then SIGKILL after STOP_GRACE_S,
its descendants too) and exits. Parent checks by pid work alike on macOS and Linux.

It exits with the binary's exit code, so a runner that dies on start still reads as dead.
A stop signal to the group reaches the binary directly; this process then waits for it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time

import psutil

from ..platforms.process.processes import stop_tree

PARENT_CHECK_S = 0.5
STOP_GRACE_S = 5.0
MODULE = "vibey_gh.runners.watchdog"


def watched_argv(argv: list[str], parent_pid: int | None = None) -> list[str]:
    """`argv` run under the watchdog, stopped when `parent_pid` (default: us) is gone."""
    parent = os.getpid() if parent_pid is None else parent_pid
    return [sys.executable, "-m", MODULE, "--parent-pid", str(parent), "--", *argv]


def _stop_tree(child: subprocess.Popen[bytes]) -> None:
    try:
        tree = [psutil.Process(child.pid), *psutil.Process(child.pid).children(recursive=True)]
    except psutil.Error:
        tree = []
    stop_tree(tree, STOP_GRACE_S)
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=STOP_GRACE_S)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=MODULE)
    parser.add_argument("--parent-pid", type=int, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    if os.getppid() != args.parent_pid:
        print("runner watchdog: parent gone before start", file=sys.stderr, flush=True)
        return 1
    # The group's stop signal reaches the binary too: wait for it to go, then leave.
    stopping: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, _frame: stopping.append(signum))
    try:
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    except OSError as exc:
        print(f"runner watchdog: cannot start {command[0]}: {exc}", file=sys.stderr, flush=True)
        return 127
    while True:
        code = child.poll()
        if code is not None:
            return code
        if stopping:
            with contextlib.suppress(OSError):
                child.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                return child.wait(timeout=STOP_GRACE_S * 3)
            _stop_tree(child)
            return 128 + stopping[0]
        if os.getppid() != args.parent_pid:
            print("runner watchdog: parent gone, stopping the runner", file=sys.stderr, flush=True)
            _stop_tree(child)
            return 1
        time.sleep(PARENT_CHECK_S)


if __name__ == "__main__":
    sys.exit(main())
