"""Running platform tools (sysctl, vm_stat, nvidia-smi, launchctl, systemctl) without a shell.

`SubprocessCommandRunner` is the real `CommandRunner`; `CannedCommandRunner` answers from a
table and records what it was asked, so probes and `slots apply` can be exercised on captured
output without touching the machine (in the spirit of httpx's MockTransport).

A tool that is missing or hangs is not an error here: it is a reading that is missing, and the
exit code says why (127 not found, 126 not runnable, 124 timed out, as shells report them).
`read_output` turns that into the `(text, None)` / `(None, reason)` pair probes record.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

    from ...interfaces.slots_interface import CommandRunner

EXIT_TIMED_OUT = 124
EXIT_NOT_RUNNABLE = 126
EXIT_NOT_FOUND = 127


def format_argv(argv: tuple[str, ...]) -> str:
    """The command as a person would type it (quoted where needed)."""
    return shlex.join(argv)


def run_captured(
    argv: Sequence[str], timeout_s: float, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `argv` directly (no shell, nothing on stdin) to its end, stdout and stderr captured
    as text (undecodable bytes replaced), with `env`, else this process's environment. OSError
    when it cannot start, subprocess.TimeoutExpired after `timeout_s`; any exit code returns."""
    import subprocess  # lazy: most readings run no command; subprocess costs the gate ms

    return subprocess.run(
        list(argv),
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout_s,
        env=dict(env) if env is not None else None,
        stdin=subprocess.DEVNULL,
        check=False,
    )


class SubprocessCommandRunner:
    """Runs argv directly (never through a shell) and returns (exit code, stdout).

    stderr is kept per call in `last_stderr` for error messages; the environment is the
    injected mapping, else the process's own.
    """

    def __init__(self, timeout_s: float = 15.0, environ: Mapping[str, str] | None = None) -> None:
        self.timeout_s = timeout_s
        self.environ = dict(os.environ if environ is None else environ)
        self.last_stderr = ""

    def run(self, argv: tuple[str, ...]) -> tuple[int, str]:
        if not argv:
            raise ValueError("empty command")
        self.last_stderr = ""
        import subprocess  # lazy: most readings run no command; subprocess costs the gate ms

        try:
            completed = run_captured(argv, self.timeout_s, self.environ)
        except FileNotFoundError:
            self.last_stderr = f"{argv[0]}: command not found"
            return EXIT_NOT_FOUND, ""
        except PermissionError:
            self.last_stderr = f"{argv[0]}: permission denied"
            return EXIT_NOT_RUNNABLE, ""
        except subprocess.TimeoutExpired:
            self.last_stderr = f"{argv[0]}: timed out after {self.timeout_s:g}s"
            return EXIT_TIMED_OUT, ""
        self.last_stderr = completed.stderr
        return completed.returncode, completed.stdout


@dataclass
class CannedCommandRunner:
    """Answers each argv from `answers` and records every call in `calls`.

    An argv with no answer behaves like a missing executable (exit 127), which is what a probe
    meets on a machine without that tool.
    """

    answers: dict[tuple[str, ...], tuple[int, str]] = field(default_factory=dict)
    calls: list[tuple[str, ...]] = field(default_factory=list)

    def run(self, argv: tuple[str, ...]) -> tuple[int, str]:
        self.calls.append(tuple(argv))
        return self.answers.get(tuple(argv), (EXIT_NOT_FOUND, ""))


def failure_reason(argv: tuple[str, ...], code: int) -> str:
    """Why a command gave no usable output, in words."""
    shown = format_argv(argv)
    if code == EXIT_NOT_FOUND:
        return f"{argv[0]} not found"
    if code == EXIT_NOT_RUNNABLE:
        return f"{argv[0]} is not runnable"
    if code == EXIT_TIMED_OUT:
        return f"`{shown}` timed out"
    return f"`{shown}` exited {code}"


def read_output(run: CommandRunner, argv: tuple[str, ...]) -> tuple[str | None, str | None]:
    """Run argv; return (stdout, None) on success, else (None, reason). Never raises for a
    missing or failing tool."""
    code, out = run.run(argv)
    if code != 0:
        return None, failure_reason(argv, code)
    return out, None
