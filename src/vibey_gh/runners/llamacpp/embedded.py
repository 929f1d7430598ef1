"""The embedded runner: llama.cpp through the xllamacpp wheel, in a child process of its own.

`python -m vibey_gh.runners.llamacpp.embedded --model PATH --slots N --window W --port P
[--threads T]` serves N slots of W tokens each on 127.0.0.1:P until SIGTERM or SIGINT, or until
the process that started it is gone. It runs as a child so it is sampled, logged and killed
exactly like llama-server or Ollama. xllamacpp is imported only in that child: the parent never
pays for loading llama.cpp.

A stop is prompt even while llama.cpp is busy. Deleting the server joins llama.cpp's main loop,
which first finishes the batch in flight (half a minute for a long prompt on two cores), and
does so holding the GIL, so no Python thread could cut it short. A watchdog that needs no GIL
(faulthandler's) therefore ends the process SHUTDOWN_GRACE_S after the stop if the clean
shutdown has not finished: an idle server still shuts down cleanly ("main loop exited" in the
log, exit 0), a busy one leaves at once (exit 1, with where it waited in the log). The kernel
frees the port and the memory either way.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...clock import SYSTEM_CLOCK, Clock
from ...interfaces.slots_interface import RunnerLaunch
from ...platforms.process.stopsignals import StopSignals, wait_until_stopped
from ...state import StateLayout
from ..process import LOOPBACK, ChildProcess, ensure_port_free
from .models import embedded_version, require_embedded, resolve_gguf

if TYPE_CHECKING:
    from .server import LlamaCppServer

KIND = "embedded"
# 4 = debug: the level at which libllama prints n_ctx_seq and the KV cache size the log
# scanner reads; at 3 only the server's own slot lines appear.
LOG_VERBOSITY = 4
PARENT_CHECK_S = 1.0
# An idle server shuts down in about 0.1 s; a busy one would take as long as its batch.
SHUTDOWN_GRACE_S = 1.0
# What the parent waits after SIGTERM before SIGKILL: the child is ours and leaves by itself
# within SHUTDOWN_GRACE_S, so this only bounds a child that is wedged.
STOP_GRACE_S = 2.5


def child_argv(model_path: Path, launch: RunnerLaunch) -> list[str]:
    argv = [
        sys.executable,
        "-m",
        "vibey_gh.runners.llamacpp.embedded",
        "--model",
        str(model_path),
        "--slots",
        str(launch.slots),
        "--window",
        str(launch.window),
        "--port",
        str(launch.port),
        "--parent-pid",
        str(os.getpid()),
    ]
    if launch.threads:
        argv += ["--threads", str(launch.threads)]
    return argv


class EmbeddedRunner:
    """Starts the embedded llama.cpp server as `python -m vibey_gh.runners.llamacpp.embedded`."""

    kind = KIND

    def __init__(self, state: StateLayout | None = None, clock: Clock = SYSTEM_CLOCK) -> None:
        self._state = state
        self._clock = clock

    def start(self, launch: RunnerLaunch) -> LlamaCppServer:
        # lazy: httpx (the client the parent watches the child with) costs the child process,
        # which imports this module to serve, a fifth of a second it never uses
        from .server import LlamaCppServer

        require_embedded()
        model_path = resolve_gguf(launch.model)
        ensure_port_free(launch.port)
        env = {**os.environ, **launch.extra_env}
        child = ChildProcess.start(
            child_argv(model_path, launch), launch.log_path, name="embedded runner", env=env
        )
        return LlamaCppServer(
            kind=KIND,
            child=child,
            port=launch.port,
            model_path=model_path,
            version=lambda _url: embedded_version(),
            state=self._state,
            stop_grace_s=STOP_GRACE_S,
            clock=self._clock,
        )


# ---------------------------------------------------------------------------------------------
# The child process
# ---------------------------------------------------------------------------------------------


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m vibey_gh.runners.llamacpp.embedded",
        description="Serve a GGUF model with llama.cpp (xllamacpp) on 127.0.0.1.",
    )
    parser.add_argument("--model", required=True, help="path of the .gguf file")
    parser.add_argument("--slots", type=_positive, required=True, help="parallel sequences")
    parser.add_argument("--window", type=_positive, required=True, help="tokens per slot")
    parser.add_argument("--port", type=_positive, required=True)
    parser.add_argument("--threads", type=_positive, default=None)
    parser.add_argument(
        "--parent-pid", type=_positive, default=None, help="stop when this process is gone"
    )
    return parser.parse_args(argv)


def build_params(xllamacpp: Any, args: argparse.Namespace) -> Any:
    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_parallel = args.slots
    # Total context; with kv_unified off llama.cpp gives each slot n_ctx / n_parallel.
    params.n_ctx = args.slots * args.window
    params.kv_unified = False
    params.ctx_shift = False
    params.hostnames = [LOOPBACK]
    params.port = args.port
    params.endpoint_slots = True
    params.endpoint_metrics = True
    params.verbosity = LOG_VERBOSITY
    if args.threads:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    return params


def serve(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT or until the parent that started us is gone."""
    # The stop signals are blocked from before llama.cpp is loaded (so every thread it starts
    # has them blocked too) to the end, and one thread of ours takes them synchronously (see
    # platforms.stopsignals): a stop sent while the server starts (it listens, and looks
    # ready, before its constructor returns) waits for us instead of killing us outright,
    # llama.cpp's own handlers never run, and no handler interrupts any thread.
    stop = StopSignals()
    stop.block()
    try:
        return _serve_until_stopped(args, stop)
    finally:
        stop.close()


def _serve_until_stopped(args: argparse.Namespace, stop: StopSignals) -> int:
    # lazy: an optional extra ([embedded]), loaded once the stop signals are blocked so that
    # every thread llama.cpp starts has them blocked too
    import xllamacpp

    # Given by the starter, because a parent killed before this line has already been replaced
    # by init and getppid() alone would never notice.
    parent = getattr(args, "parent_pid", None) or os.getppid()
    if os.getppid() != parent:
        print("embedded runner: parent gone before start", file=sys.stderr, flush=True)
        return 1

    try:
        server = xllamacpp.Server(build_params(xllamacpp, args))
    except Exception as exc:  # the extension raises plain RuntimeError/ValueError
        print(f"error: the embedded runner could not start: {exc}", file=sys.stderr, flush=True)
        return 1
    print(
        f"embedded runner: {args.slots} slots x {args.window} tokens on "
        f"http://{LOOPBACK}:{args.port}",
        file=sys.stderr,
        flush=True,
    )
    wait_until_stopped(stop, parent, "embedded runner", PARENT_CHECK_S)
    _leave_at_once_after(SHUTDOWN_GRACE_S)
    del server  # joins llama.cpp's threads, unless the watchdog ends the process first
    faulthandler.cancel_dump_traceback_later()
    return 0


def _leave_at_once_after(grace_s: float) -> None:
    """Arm a watchdog thread that needs no GIL: `grace_s` from now it writes where each thread
    waits to the log and ends the process (exit 1)."""
    print(
        f"embedded runner: shutting down (at once if llama.cpp is still busy after {grace_s:g} s)",
        file=sys.stderr,
        flush=True,
    )
    faulthandler.dump_traceback_later(grace_s, exit=True, file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    return serve(parse_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
