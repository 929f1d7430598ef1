"""The llama-server runner: llama.cpp's own server binary, from the config or PATH.

Started as `llama-server -m MODEL -np N -c N*W --host 127.0.0.1 --port P --metrics
--no-context-shift [-t T] RUNNER_ARGS`, RUNNER_ARGS being production's own (config
`runner_args`: -ngl, -fa, --cache-type-k/v, -b/-ub, --kv-unified, …): an explicit -np
without --kv-unified gives each slot c/np tokens, and
--no-context-shift is accepted by old builds (b4747, where shifting was on by default) and
current ones (where it is already off), so both refuse an over-window prompt instead of cutting it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ...clock import SYSTEM_CLOCK, Clock
from ...errors import RunnerError
from ...interfaces.slots_interface import RunnerLaunch
from ...state import StateLayout
from ..builds import keyed_to_binary
from ..http.local_http import http_get
from ..process import LOOPBACK, ChildProcess, ensure_port_free, find_executable
from ..watchdog import watched_argv
from .identify import version_from_props
from .models import resolve_gguf
from .server import LlamaCppServer

KIND = "llama-server"
BINARY = "llama-server"


def find_binary(configured: str | None) -> str:
    return find_executable(configured, BINARY)


def server_argv(
    binary: str, model_path: Path, launch: RunnerLaunch, runner_args: Sequence[str] = ()
) -> list[str]:
    argv = [
        binary,
        "-m",
        str(model_path),
        "-np",
        str(launch.slots),
        "-c",
        str(launch.slots * launch.window),
        "--host",
        LOOPBACK,
        "--port",
        str(launch.port),
        "--metrics",
        "--no-context-shift",
    ]
    if launch.threads:
        argv += ["-t", str(launch.threads)]
    return argv + list(runner_args)


def read_version(base_url: str) -> str | None:
    """The build of the llama-server at `base_url`; None when it does not say."""
    try:
        answer = http_get(base_url.rstrip("/") + "/props")
    except RunnerError:
        return None
    return version_from_props(answer.body) if answer.status == 200 else None


class LlamaServerRunner:
    kind = KIND

    def __init__(
        self,
        state: StateLayout | None = None,
        clock: Clock = SYSTEM_CLOCK,
        runner_args: Sequence[str] = (),
    ) -> None:
        self._state = state
        self._clock = clock
        self._runner_args = tuple(runner_args)

    def start(self, launch: RunnerLaunch) -> LlamaCppServer:
        binary = find_binary(launch.binary)
        model_path = resolve_gguf(launch.model)
        ensure_port_free(launch.port)
        env = {**os.environ, **launch.extra_env}
        child = ChildProcess.start(
            # under the watchdog: the server stops when the calibration that started it dies
            watched_argv(server_argv(binary, model_path, launch, self._runner_args)),
            launch.log_path,
            name="llama-server",
            env=env,
        )
        return LlamaCppServer(
            kind=KIND,
            child=child,
            port=launch.port,
            model_path=model_path,
            version=lambda url: keyed_to_binary(read_version(url), binary, self._state),
            state=self._state,
            clock=self._clock,
        )
