"""Who the calibration runner will be, before it starts: its binary's version, read from the
binary rather than from a running production.

This is what a calibration compares with production before its first step (a version
mismatch is refused then, not after hours of sweeping), and what it is keyed to when
production is not running at all. Each kind with a binary of its own spells the version as
its production does (`llamacpp/binary.py`, `ollama/binary.py`); the kind's
`identify_calibration` adds the model's digest.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence

from ..errors import RunnerError

VERSION_TIMEOUT_S = 30.0


def run_version_command(argv: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """stdout and stderr of a `--version` call; RunnerError when it cannot run or fails."""
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            errors="replace",
            timeout=VERSION_TIMEOUT_S,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RunnerError(f"`{' '.join(argv)}` could not run: {exc}") from None
    output = (done.stdout or "") + (done.stderr or "")
    if done.returncode != 0:
        last = [line for line in output.splitlines() if line.strip()][-1:] or ["no output"]
        raise RunnerError(f"`{' '.join(argv)}` exited {done.returncode}: {last[0]}")
    return output
