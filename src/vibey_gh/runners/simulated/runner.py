"""The simulated runner: llama-server's HTTP API over a capacity model instead of a model.

`python -m vibey_gh.runners.simulated.server --slots N --window W --port P [--knee K --noise X
--seed S --tokens-per-second T]` serves on 127.0.0.1:P until SIGTERM or SIGINT:
`/health`, `/props`, `/slots`, `/v1/models`, `/apply-template`, `/tokenize` (four characters
a token, `tokenizer`) and `/v1/chat/completions` (streamed as llama-server streams
when asked, tokens timed by the capacity model; prompt tokens a slot's cache shares are reported
as llama-server reports them, `cache`), with
llama-server's answers and error bodies: 503 while "loading", 400 `exceed_context_size_error`
for a prompt longer than the slot's window, 400 for a malformed request. N slots serve at once;
further requests wait for a slot, as llama-server queues them. How long a turn takes and what
it answers come from `model` ([local_models.simulated] in the config).

It is a runner a person can calibrate without a model (`slots calibrate --demo --runner
simulated`) and the fast engine of the calibration loop's tests. Like the embedded runner it
runs as a child process, sampled, logged and stopped like every other kind. This module is
the starting side; the server (`server`) imports none of the HTTP client.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ...clock import SYSTEM_CLOCK, Clock
from ...interfaces.slots_interface import RunnerInfo, RunnerLaunch
from ...state import StateLayout
from ..llamacpp.server import LlamaCppServer
from ..process import ChildProcess, ensure_port_free
from .model import (
    KIND,
    launch_seed,
    launch_speed,
    model_name,
    simulated_identity,
    simulated_version,
)
from .settings import SimulatedModel

PARENT_CHECK_S = 1.0


def child_argv(launch: RunnerLaunch, model: SimulatedModel, started: int = 0) -> list[str]:
    """`started`: how many times this runner was started before (a sweep starts it once a
    step): its noise seed and drifted speed."""
    return [
        sys.executable,
        "-m",
        "vibey_gh.runners.simulated.server",
        "--slots", str(launch.slots),
        "--window", str(launch.window),
        "--port", str(launch.port),
        "--knee", str(model.knee),
        "--noise", repr(model.noise),
        "--seed", str(launch_seed(model.seed, started)),
        "--tokens-per-second", repr(launch_speed(model, started)),
        "--scaling", repr(model.scaling),
        "--cache-speedup", repr(model.cache_speedup),
        "--cache-tokens", str(model.cache_tokens),
        "--parent-pid", str(os.getpid()),
        *(
            ("--throttle-after-s", repr(model.throttle_after_s),
             "--throttle-factor", repr(model.throttle_factor))
            if model.throttle_after_s is not None
            else ()
        ),
    ]  # fmt: skip


class SimulatedServer(LlamaCppServer):
    """A started simulated runner: llama-server's client side, its own identity."""

    def __init__(self, *, child: ChildProcess, port: int, model: SimulatedModel, clock: Clock):
        super().__init__(
            kind=KIND,
            child=child,
            port=port,
            model_path=Path(model_name(model)),
            version=lambda _url: simulated_version(),
            clock=clock,
        )
        self._model = model

    def info(self) -> RunnerInfo:
        return simulated_identity(self._model)


class SimulatedRunner:
    """Starts `python -m vibey_gh.runners.simulated.server` with the configured capacity model."""

    kind = KIND

    def __init__(
        self,
        model: SimulatedModel | None = None,
        state: StateLayout | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._model = model or SimulatedModel()
        self._clock = clock
        self._started = 0  # starts so far: each draws its own noise, at its drifted speed

    def start(self, launch: RunnerLaunch) -> SimulatedServer:
        ensure_port_free(launch.port)
        env = {**os.environ, **launch.extra_env}
        argv = child_argv(launch, self._model, self._started)
        self._started += 1
        child = ChildProcess.start(argv, launch.log_path, name="simulated runner", env=env)
        return SimulatedServer(child=child, port=launch.port, model=self._model, clock=self._clock)
