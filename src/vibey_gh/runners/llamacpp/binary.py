"""llama-server's version read from its binary, spelled as production's /props spells it, so the
same build gives the same fingerprint whether production runs or not:

    llama-server --version   "version: 4747 (2d219b38)"                   -> "b4747-2d219b38"
                             "version: 0.6.0-dev (build 11434, commit x)" -> "b11434-x"
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...errors import BadInput, RunnerError
from ..binary_identity import run_version_command

_LLAMA_OLD = re.compile(r"version:\s*(\d+)\s*\(([^)\s]+)\)")
_LLAMA_NEW = re.compile(r"\(build\s+(\d+),\s*commit\s+([^)\s]+)\)")


def llama_server_version(text: str) -> str | None:
    """`llama-server --version` output as /props spells build_info ("b4747-2d219b38")."""
    match = _LLAMA_NEW.search(text) or _LLAMA_OLD.search(text)
    return f"b{match.group(1)}-{match.group(2)}" if match else None


def check_runner_args(binary: str, runner_args: Sequence[str]) -> str:
    """Run `llama-server RUNNER_ARGS --version`: llama-server parses its arguments in order, so
    an unknown flag or a bad value is refused before --version prints. The output, or BadInput
    with llama-server's own complaint."""
    argv = [binary, *runner_args, "--version"]
    try:
        return run_version_command(argv)
    except RunnerError as exc:
        if not runner_args:
            raise
        raise BadInput(f"runner_args: llama-server refuses them: {exc}") from None
